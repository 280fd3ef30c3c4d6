// The inputs the elementwise benchmarks start from and the check of their outputs: every element
// against the op's own math evaluated in double on the same inputs (kernels/elementwise.h), with the
// shared tolerance rule (kernels/tolerance.h).
#include <cstdint>

#include <fmt/format.h>

#include "kernels/elementwise.h"
#include "kernels/tolerance.h"

namespace offloadbench {

// Values with few mantissa bits (multiples of 1/128 below 2): exact in fp32, so the reference sees
// exactly the inputs the kernel saw. The two periods differ so that x[i] and y[i] are not tied.
double elementwise_input_x(std::size_t i) { return 1.0 + static_cast<double>(i % 97) / 128.0; }
double elementwise_input_y(std::size_t i) { return 2.0 - static_cast<double>(i % 89) / 64.0; }

template <typename T>
void fill_elementwise_inputs(T* x, T* y, std::size_t n, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
    x[i] = static_cast<T>(elementwise_input_x(i));
    if (y) y[i] = static_cast<T>(elementwise_input_y(i));
  }
}

namespace {

template <typename Op, typename T>
std::string check_output(const T* z, double sum, std::size_t n) {
  const double roundoff = sizeof(T) == 4 ? kRoundoffFp32 : kRoundoffFp64;
  // The scalars the kernel used: the op's, rounded to T.
  const double a = static_cast<T>(Op::info.a), b = static_cast<T>(Op::info.b);
  const auto ref_at = [a, b](std::size_t i) {
    return static_cast<double>(Op::apply(elementwise_input_x(i), elementwise_input_y(i), a, b));
  };
  if constexpr (!Op::info.writes_array) {
    double ref = 0;
    for (std::size_t i = 0; i < n; ++i) ref += ref_at(i);
    // Every term of dot on these inputs is below 4 in magnitude (x < 1.76, |y| <= 2).
    const auto tol = reduction_tolerance(roundoff, n, 4.0);
    if (within_tolerance(sum, ref, tol)) return "";
    return fmt::format("{} over {} elements: got {:.17g}, expected {:.17g}", Op::info.name, n, sum, ref);
  } else {
    const auto tol = elementwise_tolerance(roundoff);
    // Count in parallel (a 2^28-element check is seconds on one core); describe serially only on failure.
    std::int64_t failures = 0;
#pragma omp parallel for reduction(+ : failures) schedule(static)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i)
      if (!within_tolerance(static_cast<double>(z[i]), ref_at(i), tol)) ++failures;
    return failures == 0 ? "" : mismatches_against(z, n, ref_at, tol);
  }
}

}  // namespace

template <typename T>
std::string check_elementwise_output(ElementwiseOp op, const T* z, double sum, std::size_t n) {
  using Check = std::string (*)(const T*, double, std::size_t);
  static constexpr auto table = per_elementwise_op([](auto o) -> Check { return &check_output<decltype(o), T>; });
  return table.at(static_cast<std::size_t>(op))(z, sum, n);
}

template void fill_elementwise_inputs<float>(float*, float*, std::size_t, int);
template void fill_elementwise_inputs<double>(double*, double*, std::size_t, int);
template std::string check_elementwise_output<float>(ElementwiseOp, const float*, double, std::size_t);
template std::string check_elementwise_output<double>(ElementwiseOp, const double*, double, std::size_t);

}  // namespace offloadbench
