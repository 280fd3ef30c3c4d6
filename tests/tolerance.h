// The one element-wise comparison the twin tests share: |got − ref| ≤ atol + rtol·|ref|, reporting
// how many elements broke it and the first few, so a failure says where and by how much.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace offloadbench::testing {

inline ::testing::AssertionResult all_close(const float* got, const float* ref, std::int64_t n, double atol,
                                            double rtol, int show = 5) {
  std::int64_t bad = 0;
  std::string first;
  for (std::int64_t i = 0; i < n; ++i) {
    const double g = got[i], r = ref[i];
    if (std::isfinite(g) && std::abs(g - r) <= atol + rtol * std::abs(r)) continue;
    if (bad++ < show) first += fmt::format("\n  [{}] got {:.8g}, expected {:.8g}", i, g, r);
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << n << " elements differ by more than " << atol
                                       << " + " << rtol << "·|ref|:" << first;
}

}  // namespace offloadbench::testing
