// gtest's face of the one tolerance rule (kernels/tolerance.h): |got − ref| ≤ atol + rtol·|ref|,
// failing with how many elements broke it and the first few.
#pragma once
#include <cstdint>

#include <gtest/gtest.h>

#include "kernels/tolerance.h"

namespace offloadbench::testing {

inline ::testing::AssertionResult all_close(const float* got, const float* ref, std::int64_t n,
                                            double atol, double rtol, int show = 5) {
  const auto text = mismatches(got, ref, static_cast<std::size_t>(n), Tolerance{atol, rtol}, show);
  if (text.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << text;
}

}  // namespace offloadbench::testing
