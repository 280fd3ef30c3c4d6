// The inputs the elementwise benchmarks start from and the check of their outputs: every element
// against the op's own math evaluated in double on the same inputs (kernels/elementwise.h), with
// the shared tolerance rule (kernels/tolerance.h).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernels/elementwise.h"
#include "kernels/tolerance.h"

namespace offloadbench {

// x repeats every 97 elements and y every 89.
constexpr std::size_t kPeriodX = 97, kPeriodY = 89;
constexpr std::size_t kPeriodXY = kPeriodX * kPeriodY;  // (x[i], y[i]) repeats every 8633 elements

namespace {
// [begin, end) of `n` that this thread of the team streams in the CPU kernels
// (elementwise_cpu.cpp's on_threads: one contiguous chunk each), so a fill first-touches the pages
// each thread later streams.
std::pair<std::size_t, std::size_t> kernel_share(std::size_t n) {
  const auto team = static_cast<std::size_t>(omp_get_num_threads());
  const auto t = static_cast<std::size_t>(omp_get_thread_num());
  return {n * t / team, n * (t + 1) / team};
}
}  // namespace

// Values with few mantissa bits (multiples of 1/128 below 2): exact in fp32, so the reference sees
// exactly the inputs the kernel saw. The two periods differ so that x[i] and y[i] are not tied.
double elementwise_input_x(std::size_t i) {
  return 1.0 + static_cast<double>(i % kPeriodX) / 128.0;
}
double elementwise_input_y(std::size_t i) { return 2.0 - static_cast<double>(i % kPeriodY) / 64.0; }

namespace {

// Inputs are filled a period at a time from a copy, not computed (a modulo per element made filling
// 64Mi elements several times slower than writing them).
template <typename T>
void fill_periodic(T* out, std::size_t begin, std::size_t end, const std::vector<T>& period) {
  // `period` holds two periods, so any run of up to one period starts inside it and is contiguous.
  const std::size_t p = period.size() / 2;
  for (std::size_t i = begin; i < end;) {
    const std::size_t take = std::min(p, end - i);
    std::memcpy(out + i, period.data() + i % p, take * sizeof(T));
    i += take;
  }
}

}  // namespace

template <typename T>
void fill_elementwise_inputs(T* x, T* y, std::size_t n, int threads) {
  std::vector<T> px(2 * kPeriodX), py(2 * kPeriodY);
  for (std::size_t i = 0; i < px.size(); ++i) px[i] = static_cast<T>(elementwise_input_x(i));
  for (std::size_t i = 0; i < py.size(); ++i) py[i] = static_cast<T>(elementwise_input_y(i));
#pragma omp parallel num_threads(threads)
  {
    const auto [begin, end] = kernel_share(n);
    fill_periodic(x, begin, end, px);
    if (y) fill_periodic(y, begin, end, py);
  }
}

namespace {

template <typename Op, typename T>
std::string check_output(const T* z, double sum, std::size_t n, std::size_t period_stride) {
  const double roundoff = sizeof(T) == 4 ? kRoundoffFp32 : kRoundoffFp64;
  // The scalars the kernel used: the op's, rounded to T.
  const double a = static_cast<T>(Op::info.a), b = static_cast<T>(Op::info.b);
  const auto ref_at = [a, b](std::size_t i) {
    return static_cast<double>(Op::apply(elementwise_input_x(i), elementwise_input_y(i), a, b));
  };
  // The reference over one period of (x, y); every element is checked against it.
  std::vector<double> ref(kPeriodXY);
  for (std::size_t i = 0; i < kPeriodXY; ++i) ref[i] = ref_at(i);
  if constexpr (!Op::info.writes_array) {
    double period_sum = 0, rest = 0;
    for (std::size_t i = 0; i < kPeriodXY; ++i) period_sum += ref[i];
    for (std::size_t i = 0; i < n % kPeriodXY; ++i) rest += ref[i];
    const double expected = static_cast<double>(n / kPeriodXY) * period_sum + rest;
    // Every term of dot on these inputs is below 4 in magnitude (x < 1.76, |y| <= 2).
    const auto tol = reduction_tolerance(roundoff, n, 4.0);
    if (within_tolerance(sum, expected, tol)) return "";
    return fmt::format("{} over {} elements: got {:.17g}, expected {:.17g}", Op::info.name, n, sum,
                       expected);
  } else {
    const auto tol = elementwise_tolerance(roundoff);
    std::vector<double> bound(kPeriodXY);
    for (std::size_t i = 0; i < kPeriodXY; ++i) bound[i] = tol.atol + tol.rtol * std::abs(ref[i]);
    // Counted in parallel, a period at a time (a 2^28-element check is seconds on one core
    // otherwise); described serially only on failure.
    const auto periods = static_cast<std::int64_t>((n + kPeriodXY - 1) / kPeriodXY);
    const auto stride = static_cast<std::int64_t>(std::max<std::size_t>(period_stride, 1));
    // Periods 0, k, 2k, … and the last one.
    const std::int64_t checked =
        periods == 0 ? 0 : (periods - 1) / stride + 1 + ((periods - 1) % stride != 0);
    std::int64_t failures = 0;
#pragma omp parallel for reduction(+ : failures) schedule(static)
    for (std::int64_t k = 0; k < checked; ++k) {
      const std::int64_t b = std::min(k * stride, periods - 1);
      const std::size_t start = static_cast<std::size_t>(b) * kPeriodXY;
      const std::size_t count = std::min(kPeriodXY, n - start);
      const T* got = z + start;
      std::int64_t bad = 0;
      for (std::size_t k = 0; k < count; ++k)  // the negated test also counts a NaN
        bad += !(std::abs(static_cast<double>(got[k]) - ref[k]) <= bound[k]);
      failures += bad;
    }
    return failures == 0 ? "" : mismatches_against(z, n, ref_at, tol);
  }
}

}  // namespace

template <typename T>
std::string check_elementwise_output(ElementwiseOp op, const T* z, double sum, std::size_t n,
                                     std::size_t period_stride) {
  using Check = std::string (*)(const T*, double, std::size_t, std::size_t);
  static constexpr auto table =
      per_elementwise_op([](auto o) -> Check { return &check_output<decltype(o), T>; });
  return table.at(static_cast<std::size_t>(op))(z, sum, n, period_stride);
}

template void fill_elementwise_inputs<float>(float*, float*, std::size_t, int);
template void fill_elementwise_inputs<double>(double*, double*, std::size_t, int);
template std::string check_elementwise_output<float>(ElementwiseOp, const float*, double,
                                                     std::size_t, std::size_t);
template std::string check_elementwise_output<double>(ElementwiseOp, const double*, double,
                                                      std::size_t, std::size_t);

}  // namespace offloadbench
