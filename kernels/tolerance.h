// The one tolerance rule every check uses, in tests and in the benchmarks' own output checks:
// an element passes when |got - ref| <= atol + rtol·|ref| (ref computed in double). A failed check
// names how many elements failed and the first few, so a wrong index is visible at a glance.
#pragma once
#include <cmath>
#include <cstddef>
#include <string>

#include <fmt/format.h>

namespace offloadbench {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

inline bool within_tolerance(double got, double ref, Tolerance tol) {
  return std::abs(got - ref) <=
         tol.atol + tol.rtol * std::abs(ref);  // NaN fails: the comparison is false
}

// "" when got[i] matches ref_at(i) for every i < n, else "<count> of <n> elements differ: [i] got
// x, expected y; …".
template <typename Got, typename RefAt>
std::string mismatches_against(const Got* got, std::size_t n, RefAt ref_at, Tolerance tol,
                               int show = 5) {
  std::size_t count = 0;
  std::string first;
  for (std::size_t i = 0; i < n; ++i) {
    const double value = static_cast<double>(got[i]);
    const double ref = ref_at(i);
    if (within_tolerance(value, ref, tol)) continue;
    if (count++ < static_cast<std::size_t>(show))
      first += fmt::format("; [{}] got {:.9g}, expected {:.9g}", i, value, ref);
  }
  if (count == 0) return "";
  return fmt::format("{} of {} elements differ (atol {:.3g}, rtol {:.3g}){}", count, n, tol.atol,
                     tol.rtol, first);
}

template <typename Got, typename Ref>
std::string mismatches(const Got* got, const Ref* ref, std::size_t n, Tolerance tol, int show = 5) {
  return mismatches_against(
      got, n, [ref](std::size_t i) { return static_cast<double>(ref[i]); }, tol, show);
}

// Unit roundoff (half an ulp at 1) of the precisions the compute family uses.
inline constexpr double kRoundoffFp64 = 0x1p-53;
inline constexpr double kRoundoffFp32 = 0x1p-24;
inline constexpr double kRoundoffTf32 = 0x1p-11;  // 10 stored mantissa bits, as fp16
inline constexpr double kRoundoffFp16 = 0x1p-11;
inline constexpr double kRoundoffBf16 = 0x1p-8;

// One elementwise result: a couple of roundings of the output type.
inline Tolerance elementwise_tolerance(double roundoff) { return {4 * roundoff, 4 * roundoff}; }

// The CPU's fp32 dot sums kDotFp32TermsPerLane terms per vector lane in fp32 (eight chains of 4
// terms, then three combining adds) before the lane sums go into double: a term meets at most a
// quarter of them plus three more fp32 roundings on the way (its product's and the combining adds),
// an upper bound.
inline constexpr int kDotFp32TermsPerLane = 32;
inline constexpr double kDotLaneRoundings = kDotFp32TermsPerLane / 4 + 3;

// A sum of n terms, each at most term_magnitude (dot): each term carries its inputs' rounding (2u)
// and its lane sum's roundings in the input precision (the CPU's fp32 lanes; the GPU sums in
// double, closer), and the double summation adds up to n·u64 of the running sum (bounded by
// n·|term|).
inline Tolerance reduction_tolerance(double input_roundoff, std::size_t n, double term_magnitude) {
  const double terms = static_cast<double>(n);
  return {term_magnitude * terms *
              ((4 + kDotLaneRoundings) * input_roundoff + 4 * terms * kRoundoffFp64),
          4 * input_roundoff};
}

// One entry of C = A·B with inputs in [-1, 1]: inputs rounded to their precision (2u each) and a
// fp32 accumulation over k terms (error ~ sqrt(k)·u typically, k·u at worst; we allow 4·sqrt(k)·u),
// scaled by the typical size of a sum of k such products (sqrt(k)) and at worst k/4 for |ref|.
inline Tolerance matmul_tolerance(double input_roundoff, int k) {
  const double kk = k > 0 ? k : 1;
  const double per_term = 2 * input_roundoff + 4 * std::sqrt(kk) * kRoundoffFp32;
  return {per_term * kk / 4, per_term};
}

}  // namespace offloadbench
