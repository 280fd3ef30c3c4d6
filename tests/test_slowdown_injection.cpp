// The self-test's slowdown injection: the variable's syntax, which case gets which slowdown, and that
// a call is slowed by the fraction of its own time.
#include <chrono>
#include <stdexcept>

#include <gtest/gtest.h>

#include "harness/injected_slowdown.h"

namespace offloadbench {

TEST(SlowdownInjection, ParsesSubstringPercentEntries) {
  const auto rules = parse_injected_slowdown("compute/triad=5,host_memcpy/pretouched=10%,mlp=2.5");
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].substring, "compute/triad");
  EXPECT_DOUBLE_EQ(rules[0].fraction, 0.05);
  EXPECT_DOUBLE_EQ(rules[1].fraction, 0.10);
  EXPECT_DOUBLE_EQ(rules[2].fraction, 0.025);
  EXPECT_EQ(parse_injected_slowdown("a=b=3")[0].substring, "a=b");  // the last '=' splits
}

TEST(SlowdownInjection, RejectsMalformedValuesWithOneLine) {
  for (const char* bad : {"triad", "=5", "triad=", "triad=five", "triad=5,", "triad=-1", "triad=5%%", "triad=1e9"}) {
    try {
      parse_injected_slowdown(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      EXPECT_NE(std::string(e.what()).find(kInjectSlowdownVariable), std::string::npos);
    }
  }
}

TEST(SlowdownInjection, FirstMatchingRuleWinsAndOthersGetNothing) {
  const auto rules = parse_injected_slowdown("triad=5,compute=10");
  EXPECT_DOUBLE_EQ(slowdown_for(rules, "compute/triad/fp32/cpu_1t/1Mi"), 0.05);
  EXPECT_DOUBLE_EQ(slowdown_for(rules, "compute/copy/fp32/cpu_1t/1Mi"), 0.10);
  EXPECT_DOUBLE_EQ(slowdown_for(rules, "transfer/host_memcpy/4KiB"), 0.0);
  EXPECT_DOUBLE_EQ(slowdown_for({}, "anything"), 0.0);
}

TEST(SlowdownInjection, SlowsACallInProportionToItsOwnTime) {
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  const auto start = Clock::now();
  SlowdownInjector half(0.5);
  {
    const InjectedSlowdown slowed(half);
    spin_for_seconds(0.02);  // the "body": 20 ms
  }
  const double wall = seconds_since(start);
  EXPECT_GE(wall, 0.03);  // body + half of it, at least (a busy machine only adds)
  const auto none = Clock::now();
  SlowdownInjector none_injected(0.0);
  { const InjectedSlowdown untouched(none_injected); }
  EXPECT_LT(seconds_since(none), 0.01);
}

TEST(SlowdownInjection, APreemptedCallCountsAsTwiceTheShortestNotItsWait) {
  SlowdownInjector tenth(0.1);
  EXPECT_EQ(tenth.spin_after(1000), 100u);    // the first call: its own time
  EXPECT_EQ(tenth.spin_after(1500), 150u);    // within twice the shortest: its own time
  EXPECT_EQ(tenth.spin_after(100000), 200u);  // preempted: twice the shortest (1000), not the wait
  EXPECT_EQ(tenth.spin_after(800), 80u);      // a new shortest
  EXPECT_EQ(tenth.spin_after(5000), 160u);
}

}  // namespace offloadbench
