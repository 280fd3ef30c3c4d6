// Every elementwise CPU twin against its formula written out here (apart from kernels/), on odd
// sizes and both thread counts, with the shared tolerance rule; every op's BabelStream weight; and
// the benchmarks' own output check accepts right outputs and names a wrong element. An op in
// kernels/elementwise.h without a row below fails EveryOpHasARowHere.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/random_values.h"

#include "kernels/elementwise.h"
#include "kernels/tolerance.h"

namespace offloadbench {
namespace {

using testing::random_values;

// One row per op: BabelStream's weight and the formula of one output element (for dot: one term).
struct ExpectedOp {
  ElementwiseOp op;
  int arrays_moved;
  double (*formula)(double x, double y, double a, double b);
};

const ExpectedOp kExpectedOps[] = {
    {ElementwiseOp::copy, 2, [](double x, double, double, double) { return x; }},
    {ElementwiseOp::scale, 2, [](double x, double, double a, double) { return a * x; }},
    {ElementwiseOp::add, 3, [](double x, double y, double, double) { return x + y; }},
    {ElementwiseOp::triad, 3, [](double x, double y, double a, double) { return x + a * y; }},
    {ElementwiseOp::dot, 2, [](double x, double y, double, double) { return x * y; }},
    {ElementwiseOp::add_scalar, 2, [](double x, double, double a, double) { return x + a; }},
    {ElementwiseOp::axpby, 3, [](double x, double y, double a, double b) { return a * x + b * y; }},
};

template <typename T>
class ElementwiseCpu : public ::testing::Test {
 protected:
  static constexpr double roundoff() { return sizeof(T) == 4 ? kRoundoffFp32 : kRoundoffFp64; }
};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ElementwiseCpu, ElementTypes);

// 2097155: above the 8 MiB from which outputs are streamed (kernels/elementwise_cpu.cpp), in both
// types; 2101301 (2Mi + 1 page + 53 floats) also leaves part of a four-page group, whole vectors
// and a tail.
const std::size_t kOddSizes[] = {1, 7, 1000003, 2097155, 2101301};

std::vector<int> thread_counts() {
  const int all = omp_get_max_threads();
  return all > 1 ? std::vector<int>{1, all} : std::vector<int>{1};
}

TEST(ElementwiseTable, EveryOpHasARowHere) {
  std::set<std::string> names;
  for (const auto& info : kElementwiseOpInfos) {
    EXPECT_TRUE(std::any_of(std::begin(kExpectedOps), std::end(kExpectedOps),
                            [&](const ExpectedOp& row) { return row.op == info.op; }))
        << info.name << " has no formula in kExpectedOps";
    EXPECT_TRUE(names.insert(info.name).second) << info.name << " named twice";
  }
  EXPECT_EQ(std::size(kExpectedOps), kElementwiseOpInfos.size());
  EXPECT_THROW(op_info(static_cast<ElementwiseOp>(kElementwiseOpInfos.size())), std::out_of_range);
}

TEST(ElementwiseTable, ByteWeightsAreBabelStreams) {
  for (const auto& row : kExpectedOps) {
    const auto& info = op_info(row.op);
    EXPECT_EQ(info.op, row.op);
    EXPECT_EQ(info.arrays_moved, row.arrays_moved) << info.name;
    EXPECT_EQ(info.arrays_moved, info.inputs + (info.writes_array ? 1 : 0)) << info.name;
  }
}

TYPED_TEST(ElementwiseCpu, EveryOpMatchesItsFormula) {
  using T = TypeParam;
  const auto tol = elementwise_tolerance(this->roundoff());
  for (std::size_t n : kOddSizes) {
    const auto x = random_values<T>(n, 1), y = random_values<T>(n, 2);
    for (int threads : thread_counts())
      for (const auto& row : kExpectedOps) {
        const auto& info = op_info(row.op);
        SCOPED_TRACE(::testing::Message() << info.name << " n=" << n << " threads=" << threads);
        std::vector<T> z(n, T(-7));
        double sum = -1;
        const auto args = elementwise_args(row.op, z.data(), &sum, x.data(),
                                           info.inputs == 2 ? y.data() : nullptr, n);
        cpu::elementwise<T>(row.op)(args, threads);
        const double a = args.a, b = args.b;
        if (info.writes_array) {
          std::vector<double> ref(n);
          for (std::size_t i = 0; i < n; ++i) ref[i] = row.formula(x[i], y[i], a, b);
          EXPECT_EQ(mismatches(z.data(), ref.data(), n, tol), "");
        } else {
          double ref_sum = 0, magnitude = 0;
          for (std::size_t i = 0; i < n; ++i) {
            ref_sum += row.formula(x[i], y[i], a, b);
            magnitude = std::max(magnitude, std::abs(row.formula(x[i], y[i], a, b)));
          }
          EXPECT_TRUE(
              within_tolerance(sum, ref_sum, reduction_tolerance(this->roundoff(), n, magnitude)))
              << "got " << sum << ", expected " << ref_sum;
          EXPECT_EQ(z, std::vector<T>(n, T(-7))) << "a reduction writes only its sum";
        }
      }
  }
}

// The fp32 dot sums short runs in fp32 lanes, then in double. 2^24 + 5 terms of 1 + 2^-12: a lane
// sum that ran over the whole array (as sdot's does) would pass 2^12 and drop every term's 2^-12,
// off by ~n·2^-12 = 4096; short lanes keep each partial exact. Checked against the same bound as
// every dot.
TEST(ElementwiseCpuDot, LongFp32SumsStayWithinTheReductionTolerance) {
  const std::size_t n = (std::size_t{1} << 24) + 5;
  const float term = 1.0f + 0x1p-12f;
  const std::vector<float> x(n, term), y(n, 1.0f);
  const double want = static_cast<double>(n) * term;
  for (int threads : thread_counts()) {
    double sum = 0;
    float* no_output = nullptr;  // a reduction writes only its sum
    cpu::elementwise<float>(ElementwiseOp::dot)(
        elementwise_args(ElementwiseOp::dot, no_output, &sum, x.data(), y.data(), n), threads);
    EXPECT_TRUE(within_tolerance(sum, want, reduction_tolerance(kRoundoffFp32, n, term)))
        << "threads " << threads << ": got " << sum << ", expected " << want;
  }
}

TYPED_TEST(ElementwiseCpu, OutputsAreOverwrittenNotAccumulated) {
  using T = TypeParam;
  const std::size_t n = 7;
  const auto x = random_values<T>(n, 3), y = random_values<T>(n, 4);
  for (const auto& info : kElementwiseOpInfos) {
    std::vector<T> once(n), twice(n);
    double sum_once = 0, sum_twice = 0;
    const auto run = cpu::elementwise<T>(info.op);
    run(elementwise_args(info.op, once.data(), &sum_once, x.data(), y.data(), n), 1);
    run(elementwise_args(info.op, twice.data(), &sum_twice, x.data(), y.data(), n), 1);
    run(elementwise_args(info.op, twice.data(), &sum_twice, x.data(), y.data(), n), 1);
    EXPECT_EQ(once, twice) << info.name;
    EXPECT_EQ(sum_once, sum_twice) << info.name;
  }
}

TEST(ElementwiseCheck, TheBenchmarksCheckAcceptsCorrectOutputAndNamesAWrongElement) {
  const std::size_t n = 1000003;
  std::vector<float> x(n), y(n), z(n);
  fill_elementwise_inputs(x.data(), y.data(), n, 2);
  for (const auto& info : kElementwiseOpInfos) {
    SCOPED_TRACE(info.name);
    double sum = 0;
    cpu::elementwise<float>(info.op)(
        elementwise_args(info.op, z.data(), &sum, x.data(), y.data(), n), 2);
    EXPECT_EQ(check_elementwise_output(info.op, z.data(), sum, n), "");
    if (!info.writes_array) {
      EXPECT_NE(check_elementwise_output(info.op, z.data(), sum * (1 + 1e-4), n), "");
      continue;
    }
    z[n - 1] += 1e-3f;
    const auto problem = check_elementwise_output(info.op, z.data(), sum, n);
    EXPECT_NE(problem.find("1 of 1000003 elements differ"), std::string::npos) << problem;
    EXPECT_NE(problem.find("[1000002]"), std::string::npos) << problem;
  }
}

TEST(ElementwiseCheck, InputsAreFilledAsDefinedOnAnyThreadsAndANaNIsCaught) {
  const std::size_t n = 3 * 8633 + 101;  // a few periods of (x, y) and part of one
  for (int threads : {1, 2, 3}) {
    std::vector<double> x(n), y(n);
    fill_elementwise_inputs(x.data(), y.data(), n, threads);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(x[i], elementwise_input_x(i)) << i << " on " << threads << " threads";
      ASSERT_EQ(y[i], elementwise_input_y(i)) << i << " on " << threads << " threads";
    }
  }
  std::vector<float> x(n), z(n);
  fill_elementwise_inputs(x.data(), static_cast<float*>(nullptr), n, 2);
  double sum = 0;
  cpu::elementwise<float>(ElementwiseOp::copy)(
      elementwise_args(ElementwiseOp::copy, z.data(), &sum, x.data(), x.data(), n), 1);
  EXPECT_EQ(check_elementwise_output(ElementwiseOp::copy, z.data(), sum, n), "");
  z[8633 + 5] = std::nanf("");
  EXPECT_NE(check_elementwise_output(ElementwiseOp::copy, z.data(), sum, n).find("1 of"),
            std::string::npos);
}

TEST(ElementwiseCheck, ASampledCheckLooksAtEveryKthPeriodAndTheLast) {
  constexpr std::size_t period = 8633, n = 10 * period + 7;
  std::vector<float> x(n), z(n);
  fill_elementwise_inputs(x.data(), static_cast<float*>(nullptr), n, 1);
  double sum = 0;
  const auto copy = cpu::elementwise<float>(ElementwiseOp::copy);
  const auto wrong_at = [&](std::size_t i, std::size_t stride) {
    copy(elementwise_args(ElementwiseOp::copy, z.data(), &sum, x.data(), x.data(), n), 1);
    z[i] += 1.0f;
    return check_elementwise_output(ElementwiseOp::copy, z.data(), sum, n, stride) != "";
  };
  for (std::size_t i : {std::size_t{0}, 4 * period + 3, n - 1})
    EXPECT_TRUE(wrong_at(i, 4)) << i;  // periods 0, 4, last
  EXPECT_FALSE(wrong_at(2 * period, 4)) << "period 2 is not in a sample of every 4th";
  EXPECT_TRUE(wrong_at(2 * period, 1));
}

TEST(Tolerance, AbsoluteAndRelativePartsAndNaN) {
  EXPECT_TRUE(within_tolerance(1.0 + 1e-7, 1.0, {0, 1e-6}));
  EXPECT_FALSE(within_tolerance(1.0 + 1e-5, 1.0, {0, 1e-6}));
  EXPECT_TRUE(within_tolerance(1e-9, 0.0, {1e-8, 0}));
  EXPECT_FALSE(within_tolerance(std::nan(""), 0.0, {1, 1}));
  const double got[] = {1, 2, 3.5}, ref[] = {1, 2, 3};
  EXPECT_EQ(mismatches(got, ref, 2, {0, 0}), "");
  EXPECT_NE(mismatches(got, ref, 3, {0, 0}).find("[2] got 3.5, expected 3"), std::string::npos);
}

}  // namespace
}  // namespace offloadbench
