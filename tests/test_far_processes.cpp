// Far processes: which repetitions compare sets aside in files from run --processes, and when it
// keeps them all because they look like a mode the other file shares.
#include <cmath>

#include <gtest/gtest.h>

#include "harness/analysis/far_processes.h"

namespace offloadbench {

namespace {

std::vector<double> logs(const std::vector<double>& times) {
  std::vector<double> out;
  for (double t : times) out.push_back(std::log(t));
  return out;
}

}  // namespace

TEST(FarProcesses, OneProcessFarFromFourIsSetAside) {
  const auto split = set_aside_far(logs({13.30, 13.35, 13.33, 15.79, 13.31}));
  EXPECT_EQ(split.kept.size(), 4u);
  ASSERT_EQ(split.far.size(), 1u);
  EXPECT_NEAR(std::exp(split.far[0]), 15.79, 1e-9);
}

TEST(FarProcesses, AtMostLessThanHalfAreSetAside) {
  // Two far of five is the most; with three far of five the "far" ones are the majority and nothing
  // tells which group is the file's own.
  EXPECT_EQ(set_aside_far(logs({15.85, 13.38, 13.33, 13.35, 15.49})).far.size(), 2u);
  const auto seven = set_aside_far(logs({10, 10.01, 10.02, 10.01, 20, 21, 22}));
  EXPECT_LE(seven.far.size(), 3u);
  EXPECT_EQ(seven.kept.size() + seven.far.size(), 7u);
}

TEST(FarProcesses, NothingIsSetAsideBelowFiveValuesOrWithinTheSpread) {
  EXPECT_TRUE(set_aside_far(logs({10, 10, 10, 30})).far.empty());
  // A wide but unimodal spread: no value is five robust standard deviations out.
  EXPECT_TRUE(set_aside_far(logs({100, 104, 97, 102, 99, 106, 95})).far.empty());
  // Identical repetitions and one a timer tick away: below the floor, not an excursion.
  EXPECT_TRUE(set_aside_far(logs({1000, 1000, 1000, 1000, 1000.01})).far.empty());
}

TEST(FarProcesses, AFarValueWhereTheOtherFileSitsKeepsEverything) {
  // BASE has one process at NEW's level: that may be a mode both files share, so nothing is set aside.
  const auto base = logs({13.1, 30.9, 30.4, 31.4, 31.0}), candidate = logs({13.7, 14.3, 12.6, 19.9, 13.5});
  const auto [b, n] = set_aside_far_pair(base, candidate);
  EXPECT_TRUE(b.far.empty());
  EXPECT_TRUE(n.far.empty());
  EXPECT_EQ(b.kept, base);
  EXPECT_EQ(n.kept, candidate);
  // Far values beyond both files' kept values are excursions: set aside on each side.
  const auto [b2, n2] = set_aside_far_pair(logs({13.3, 13.4, 13.3, 13.4, 15.8}), logs({14.7, 14.6, 14.8, 14.7, 17.4}));
  EXPECT_EQ(b2.far.size(), 1u);
  EXPECT_EQ(n2.far.size(), 1u);
}

}  // namespace offloadbench
