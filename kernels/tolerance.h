// The one tolerance rule every twin check uses: |got − ref| ≤ atol + rtol·|ref|, and a short
// description of the first few elements that break it.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace offloadbench {

struct Tolerance {
  double atol = 0;
  double rtol = 1e-6;
};

inline bool within_tolerance(double got, double ref, Tolerance tol) {
  return std::isfinite(got) && std::fabs(got - ref) <= tol.atol + tol.rtol * std::fabs(ref);
}

// "" when every got[i] is within tolerance of ref[i], else the count and the first few mismatches.
template <typename T>
std::string describe_mismatches(const T* got, const T* ref, std::uint64_t n, Tolerance tol, int show = 3) {
  std::uint64_t bad = 0;
  std::string first;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (within_tolerance(got[i], ref[i], tol)) continue;
    if (bad++ < static_cast<std::uint64_t>(show)) first += fmt::format(" [{}] got {} want {};", i, got[i], ref[i]);
  }
  return bad == 0 ? "" : fmt::format("{} of {} elements out of tolerance:{}", bad, n, first);
}

}  // namespace offloadbench
