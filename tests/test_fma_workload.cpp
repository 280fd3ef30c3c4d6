// The FMA workload's CPU twin: the reference every GPU pipeline is checked against.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/fma_workload.h"
#include "kernels/tolerance.h"

namespace offloadbench {

namespace {
std::vector<float> ramp(std::uint64_t n) {
  std::vector<float> v(n);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 1000) / 500.0f;  // [0, 2)
  return v;
}
}  // namespace

TEST(FmaWorkloadCpu, ZeroIterationsCopies) {
  const auto in = ramp(1000);
  std::vector<float> out(in.size(), -1.0f);
  fma_workload(out.data(), in.data(), in.size(), 0);
  EXPECT_EQ(out, in);
}

TEST(FmaWorkloadCpu, OneIsTheFixedPoint) {
  std::vector<float> in(257, 1.0f), out(257);
  fma_workload(out.data(), in.data(), in.size(), 10000);
  for (float x : out) EXPECT_EQ(x, 1.0f);
}

TEST(FmaWorkloadCpu, ContractsTowardOneAndKeepsTheInputVisible) {
  // In exact arithmetic x_k = 1 + a^k (x_0 − 1). In fp32 each step moves x by a whole number of
  // ulps, so single elements drift from that, but none overshoots 1 and on average the movement
  // matches; a^k stays near 1, so different inputs stay different.
  const auto in = ramp(4096);
  std::vector<float> out(in.size());
  const int k = 4000;
  fma_workload(out.data(), in.data(), in.size(), k);
  const double shrink = std::pow(static_cast<double>(kFmaWorkloadScale), k);
  EXPECT_GT(shrink, 0.99);
  double moved = 0, expected = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_LE(std::fabs(out[i] - 1.0), std::fabs(in[i] - 1.0)) << i;
    EXPECT_GE((out[i] - 1.0) * (in[i] - 1.0), 0.0) << i << ": crossed the fixed point";
    if (std::fabs(in[i] - 1.0) < 0.1) continue;  // steps of under one ulp round to no movement
    moved += std::fabs(in[i] - out[i]);
    expected += (1 - shrink) * std::fabs(in[i] - 1.0);
  }
  EXPECT_NEAR(moved / expected, 1.0, 0.2);
  EXPECT_NE(out[0], out[1]);
}

TEST(FmaWorkloadCpu, EachElementIsIndependentOfTheSplit) {
  // Running the buffer in two pieces gives the same bits as in one: what chunked pipelines rely on.
  const auto in = ramp(10007);
  std::vector<float> whole(in.size()), pieces(in.size());
  fma_workload(whole.data(), in.data(), in.size(), 300);
  fma_workload(pieces.data(), in.data(), 5000, 300);
  fma_workload(pieces.data() + 5000, in.data() + 5000, in.size() - 5000, 300);
  EXPECT_EQ(whole, pieces);
  fma_workload(nullptr, nullptr, 0, 300);  // an empty range touches nothing
}

TEST(Tolerance, AbsoluteAndRelativeParts) {
  EXPECT_TRUE(within_tolerance(1.0, 1.0, {0, 0}));
  EXPECT_TRUE(within_tolerance(1.0 + 1e-7, 1.0, {0, 1e-6}));
  EXPECT_FALSE(within_tolerance(1.0 + 1e-5, 1.0, {0, 1e-6}));
  EXPECT_TRUE(within_tolerance(1e-9, 0.0, {1e-8, 0}));
  EXPECT_FALSE(within_tolerance(std::nan(""), 1.0, {1, 1}));
  const float got[] = {1, 2, 3}, want[] = {1, 2.5f, 3};
  const auto text = mismatches(got, want, 3, {0, 1e-6});
  EXPECT_NE(text.find("1 of 3"), std::string::npos) << text;
  EXPECT_NE(text.find("[1]"), std::string::npos) << text;
}

}  // namespace offloadbench
