// The self-test's slowdown injection: the variable's syntax (read by tests/test_environment.cpp),
// which case gets which slowdown, that a call is slowed by the fraction of its own time, and the
// device side's calibration from the batches before (its kernel runs only on a GPU:
// tests/test_gpu_injected_delay.cpp).
#include <chrono>
#include <optional>
#include <stdexcept>

#include <gtest/gtest.h>

#include "harness/injected_slowdown.h"
#include "tests/test_support.h"

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
  for (const char* bad :
       {"triad", "=5", "triad=", "triad=five", "triad=5,", "triad=-1", "triad=5%%", "triad=1e9"}) {
    try {
      parse_injected_slowdown(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      EXPECT_EQ(std::string(e.what()).rfind("has an entry '", 0), 0u)
          << e.what();  // after NAME='value'
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
  const auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  const auto start = Clock::now();
  SlowdownInjector half(0.5);
  {
    const InjectedSlowdown slowed(half);
    spin_for_seconds(0.02);  // the "body": 20 ms
  }
  const double wall = seconds_since(start);
  EXPECT_GE(wall, 0.03);  // body + half of it, at least (a busy machine only adds)
  // Nothing injected adds nothing: counted by the injector, not by a clock a loaded machine slows.
  SlowdownInjector none_injected(0.0);
  EXPECT_EQ(none_injected.spin_after(1000), 0u);
  EXPECT_EQ(none_injected.spin_after(1000000), 0u);
}

TEST(SlowdownInjection, APreemptedCallCountsAsTwiceTheShortestNotItsWait) {
  SlowdownInjector tenth(0.1);
  EXPECT_EQ(tenth.spin_after(1000), 100u);    // the first call: its own time
  EXPECT_EQ(tenth.spin_after(1500), 150u);    // within twice the shortest: its own time
  EXPECT_EQ(tenth.spin_after(100000), 200u);  // preempted: twice the shortest (1000), not the wait
  EXPECT_EQ(tenth.spin_after(800), 80u);      // a new shortest
  EXPECT_EQ(tenth.spin_after(5000), 160u);
}

TEST(SlowdownInjection, TheRulesSetAreTheOnesCasesGet) {
  const std::string triad = "compute/triad/fp32/gpu_kernel/1Mi";
  EXPECT_TRUE(injected_slowdown().empty()) << "none until the command line sets them";
  {
    const testing::ScopedSlowdown set("triad=5");
    EXPECT_DOUBLE_EQ(injected_slowdown_fraction(triad), 0.05);
    {
      const testing::ScopedSlowdown other("copy=7");
      EXPECT_DOUBLE_EQ(injected_slowdown_fraction(triad), 0.0);
    }
    EXPECT_DOUBLE_EQ(injected_slowdown_fraction(triad), 0.05);
  }
  EXPECT_DOUBLE_EQ(injected_slowdown_fraction(triad), 0.0);
}

constexpr double kRounding =
    1e-15;  // seconds: the device tests' arithmetic, exact but for rounding

TEST(SlowdownInjection, ADeviceBatchIsDelayedByTheFractionOfTheBatchesBefore) {
  DeviceSlowdownInjector fifth(0.2);
  EXPECT_EQ(fifth.delay_for(4), 0.0) << "nothing measured yet: no delay";
  fifth.measured(4, 4e-3, 0);  // 1 ms per call, undelayed
  EXPECT_NEAR(fifth.delay_for(4), 0.8e-3, kRounding);
  EXPECT_NEAR(fifth.delay_for(8), 1.6e-3, kRounding);  // per call: a batch of another size scales
  fifth.measured(4, 4.8e-3 + 0.4e-3,
                 0.8e-3);  // its own time is what the delay did not take: 1.1 ms per call
  EXPECT_NEAR(fifth.delay_for(4), 0.2 * 4.4e-3, kRounding);
  fifth.measured(4, 0.5e-3, 0.8e-3);  // less than its delay: nothing learnt
  EXPECT_NEAR(fifth.delay_for(4), 0.2 * 4.4e-3, kRounding);
  EXPECT_EQ(fifth.delay_for(0), 0.0);
}

TEST(SlowdownInjection, ASlowDeviceBatchCountsAsTwiceTheShortestNotItsWait) {
  DeviceSlowdownInjector tenth(0.1);
  tenth.measured(1, 1e-3, 0);
  tenth.measured(1, 50e-3 + 0.1e-3, 0.1e-3);  // the host was preempted while the stream ran dry
  EXPECT_NEAR(tenth.delay_for(1), 0.1 * 2e-3, kRounding);
  tenth.measured(1, 0.8e-3 + 0.2e-3, 0.2e-3);  // a new shortest
  EXPECT_NEAR(tenth.delay_for(1), 0.1 * 0.8e-3, kRounding);
}

TEST(SlowdownInjection, ACaseKeepsItsDeviceCalibrationForTheProcess) {
  DeviceSlowdownInjector& first = device_slowdown_injector("test/kept/calibration", 0.1);
  first.measured(2, 2e-3, 0);
  DeviceSlowdownInjector& again = device_slowdown_injector("test/kept/calibration", 0.1);
  EXPECT_EQ(&again, &first);
  EXPECT_NEAR(again.delay_for(2), 0.2e-3, kRounding)
      << "a later call of the case starts calibrated";
  EXPECT_EQ(device_slowdown_injector("test/kept/other", 0.1).delay_for(2), 0.0);
  DeviceSlowdownInjector& changed = device_slowdown_injector("test/kept/calibration", 0.5);
  EXPECT_DOUBLE_EQ(changed.fraction(), 0.5);
  EXPECT_EQ(changed.delay_for(2), 0.0) << "another fraction starts over";
}

}  // namespace offloadbench
