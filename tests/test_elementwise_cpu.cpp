// Every elementwise CPU twin against a straightforward loop, on odd sizes and both thread counts,
// with the shared tolerance rule; and the suite's own output check catches a wrong element.
#include <omp.h>

#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "tests/random_values.h"

#include "benchmarks/compute_cases.h"
#include "kernels/elementwise.h"
#include "kernels/tolerance.h"

namespace offloadbench {
namespace {

using testing::random_values;

template <typename T>
class ElementwiseCpu : public ::testing::Test {
 protected:
  static constexpr double roundoff() { return sizeof(T) == 4 ? kRoundoffFp32 : kRoundoffFp64; }
};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ElementwiseCpu, ElementTypes);

const std::size_t kOddSizes[] = {1, 7, 1000003};

std::vector<int> thread_counts() {
  const int all = omp_get_max_threads();
  return all > 1 ? std::vector<int>{1, all} : std::vector<int>{1};
}

TYPED_TEST(ElementwiseCpu, EveryOpMatchesAPlainLoop) {
  using T = TypeParam;
  const T s = static_cast<T>(0.4);
  const auto tol = elementwise_tolerance(this->roundoff());
  for (std::size_t n : kOddSizes)
    for (int threads : thread_counts()) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " threads=" << threads);
      const auto a = random_values<T>(n, 1), b = random_values<T>(n, 2);
      std::vector<T> out(n, T(-7));
      std::vector<double> ref(n);

      cpu::copy(out.data(), a.data(), n, threads);
      for (std::size_t i = 0; i < n; ++i) ref[i] = a[i];
      EXPECT_EQ(mismatches(out.data(), ref.data(), n, tol), "") << "copy";

      cpu::scale(out.data(), a.data(), s, n, threads);
      for (std::size_t i = 0; i < n; ++i) ref[i] = double(s) * a[i];
      EXPECT_EQ(mismatches(out.data(), ref.data(), n, tol), "") << "scale";

      cpu::add(out.data(), a.data(), b.data(), n, threads);
      for (std::size_t i = 0; i < n; ++i) ref[i] = double(a[i]) + b[i];
      EXPECT_EQ(mismatches(out.data(), ref.data(), n, tol), "") << "add";

      cpu::triad(out.data(), a.data(), b.data(), s, n, threads);
      for (std::size_t i = 0; i < n; ++i) ref[i] = double(a[i]) + double(s) * b[i];
      EXPECT_EQ(mismatches(out.data(), ref.data(), n, tol), "") << "triad";

      cpu::add_scalar(out.data(), a.data(), T(10), n, threads);
      for (std::size_t i = 0; i < n; ++i) ref[i] = double(a[i]) + 10.0;
      EXPECT_EQ(mismatches(out.data(), ref.data(), n, tol), "") << "add_scalar";

      double sum = -1, ref_sum = 0, magnitude = 0;
      cpu::dot(&sum, a.data(), b.data(), n, threads);
      for (std::size_t i = 0; i < n; ++i) ref_sum += double(a[i]) * b[i];
      for (std::size_t i = 0; i < n; ++i) magnitude = std::max(magnitude, std::abs(double(a[i]) * b[i]));
      EXPECT_TRUE(within_tolerance(sum, ref_sum, reduction_tolerance(this->roundoff(), n, magnitude)))
          << "dot: got " << sum << ", expected " << ref_sum;
    }
}

TYPED_TEST(ElementwiseCpu, OutputsAreOverwrittenNotAccumulated) {
  using T = TypeParam;
  const std::size_t n = 7;
  const auto a = random_values<T>(n, 3), b = random_values<T>(n, 4);
  std::vector<T> once(n), twice(n);
  cpu::triad(once.data(), a.data(), b.data(), T(0.4), n, 1);
  cpu::triad(twice.data(), a.data(), b.data(), T(0.4), n, 1);
  cpu::triad(twice.data(), a.data(), b.data(), T(0.4), n, 1);
  EXPECT_EQ(once, twice);
}

TEST(ElementwiseCheck, TheSuitesCheckAcceptsCorrectOutputAndNamesAWrongElement) {
  const std::size_t n = 1000003;
  std::vector<float> x(n), y(n), z(n);
  fill_elementwise_inputs(x.data(), y.data(), n, 2);
  for (auto op : {ElementwiseOp::copy, ElementwiseOp::scale, ElementwiseOp::add, ElementwiseOp::triad,
                  ElementwiseOp::add_scalar}) {
    const float s = static_cast<float>(op_info(op).scalar);
    switch (op) {
      case ElementwiseOp::copy: cpu::copy(z.data(), x.data(), n, 2); break;
      case ElementwiseOp::scale: cpu::scale(z.data(), x.data(), s, n, 2); break;
      case ElementwiseOp::add: cpu::add(z.data(), x.data(), y.data(), n, 2); break;
      case ElementwiseOp::triad: cpu::triad(z.data(), x.data(), y.data(), s, n, 2); break;
      case ElementwiseOp::add_scalar: cpu::add_scalar(z.data(), x.data(), s, n, 2); break;
      case ElementwiseOp::dot: break;
    }
    EXPECT_EQ(check_elementwise_output(op, z.data(), 0.0, n), "") << op_info(op).name;
    z[n - 1] += 1e-3f;
    const auto problem = check_elementwise_output(op, z.data(), 0.0, n);
    EXPECT_NE(problem.find("1 of 1000003 elements differ"), std::string::npos) << problem;
    EXPECT_NE(problem.find("[1000002]"), std::string::npos) << problem;
  }
  double sum = 0;
  cpu::dot(&sum, x.data(), y.data(), n, 2);
  EXPECT_EQ(check_elementwise_output(ElementwiseOp::dot, z.data(), sum, n), "");
  EXPECT_NE(check_elementwise_output(ElementwiseOp::dot, z.data(), sum * (1 + 1e-4), n), "");
}

TEST(ElementwiseTable, ByteWeightsAreBabelStreams) {
  EXPECT_EQ(op_info(ElementwiseOp::copy).arrays_moved, 2);
  EXPECT_EQ(op_info(ElementwiseOp::scale).arrays_moved, 2);
  EXPECT_EQ(op_info(ElementwiseOp::add).arrays_moved, 3);
  EXPECT_EQ(op_info(ElementwiseOp::triad).arrays_moved, 3);
  EXPECT_EQ(op_info(ElementwiseOp::dot).arrays_moved, 2);
  EXPECT_EQ(op_info(ElementwiseOp::add_scalar).arrays_moved, 2);
  for (auto op : {ElementwiseOp::copy, ElementwiseOp::scale, ElementwiseOp::add, ElementwiseOp::triad,
                  ElementwiseOp::dot, ElementwiseOp::add_scalar}) {
    const auto& info = op_info(op);
    EXPECT_EQ(info.arrays_moved, info.inputs + (info.writes_array ? 1 : 0)) << info.name;
  }
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
