// The host-side clock logic with fake NVML readings: what counts as throttled, what as locked, what
// a GPU row gets, and that the reporter reads the clock for GPU rows only.
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "harness/benchmark_case.h"
#include "harness/gpu_clocks.h"
#include "harness/results_reporter.h"
#include "tests/test_support.h"

namespace offloadbench {

TEST(GpuClocks, ThrottledByReasonOrByAClockFarBelowItsMaximum) {
  EXPECT_FALSE(is_throttled({1980, 1980, 0}));
  EXPECT_FALSE(is_throttled({1500, 1980, 0}));  // 76%: boost varies, not throttled
  EXPECT_TRUE(is_throttled({1400, 1980, 0}));   // 71%: below NVBench's 75%
  EXPECT_TRUE(is_throttled({1980, 1980, kClockReasonHwThermal}));
  EXPECT_TRUE(is_throttled({1980, 1980, kClockReasonHwPowerBrake}));
  // At the power cap a little below the top clock: an H100's normal state under large GEMMs.
  EXPECT_FALSE(is_throttled({1755, 1980, kClockReasonSwPowerCap}));
  EXPECT_TRUE(
      is_throttled({1200, 1980, kClockReasonSwPowerCap}));  // capped far down: judged by the clock
  // Read after the GPU went idle: the clock falling to 345 MHz says nothing about the sample.
  EXPECT_FALSE(is_throttled({345, 1980, kClockReasonGpuIdle}));
  EXPECT_FALSE(is_throttled({345, 1980, kClockReasonGpuIdle | kClockReasonSwThermal}));
  // Locked low on purpose (nvidia-smi -lgc 1000): steady, not throttled.
  EXPECT_FALSE(is_throttled({1000, 1980, kClockReasonApplicationsSetting}));
  EXPECT_TRUE(is_throttled({1000, 1980, kClockReasonApplicationsSetting | kClockReasonHwSlowdown}));
  EXPECT_FALSE(is_throttled({0, 0, 0}));  // no maximum known: nothing to compare with
}

TEST(GpuClocks, LockedOnlyWhenTheApplicationsClockReasonIsSet) {
  EXPECT_TRUE(clocks_locked({1410, 1980, kClockReasonApplicationsSetting}));
  EXPECT_FALSE(clocks_locked({1980, 1980, 0}));
}

TEST(GpuClocks, AnnotatesARowOnlyWithAReading) {
  nlohmann::json row = {{"name", "x"}};
  annotate_clock(row, std::nullopt);
  EXPECT_FALSE(row.contains("sm_clock_mhz"));
  annotate_clock(row, SmClockReading{1200, 1980, 0});
  EXPECT_EQ(row["sm_clock_mhz"], 1200);
  EXPECT_EQ(row["clock_throttled"], true);
  EXPECT_EQ(row["clocks_locked"], false);
  EXPECT_FALSE(row.contains("clock_read_idle"));
  annotate_clock(row, SmClockReading{345, 1980, kClockReasonGpuIdle});
  EXPECT_EQ(row["clock_throttled"], false);
  EXPECT_EQ(row["clock_read_idle"], true);
}

TEST(GpuClocks, ReporterReadsTheClockForGpuRowsOnly) {
  const auto path = testing::temp_path("ob_clock_reporter");
  ResultsReporter reporter(path, nlohmann::json::object(), 1, false);
  std::vector<int> asked;
  reporter.set_clock_reader([&](int device) -> std::optional<SmClockReading> {
    asked.push_back(device);
    return SmClockReading{1900, 2000, 0};
  });
  register_case(
      {"fake/gpu", "fake", {{"device", 1}}, Clock::device_events, [](benchmark::State&) {}});
  register_case(
      {"fake/cpu", "fake", {{"device", "cpu"}}, Clock::host_wall, [](benchmark::State&) {}});
  const auto gpu = testing::synthetic_run("fake/gpu");
  const auto cpu = testing::synthetic_run("fake/cpu");
  reporter.ReportRuns({gpu, cpu});
  clear_registered_cases();
  EXPECT_EQ(asked, std::vector<int>{1});
  const auto& rows = reporter.document()["benchmarks"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["sm_clock_mhz"], 1900);
  EXPECT_EQ(rows[0]["clock_throttled"], false);
  EXPECT_FALSE(rows[1].contains("sm_clock_mhz"));
  std::remove(path.c_str());
}

TEST(GpuClocks, SeveralReadingsStandAsTheirMedianWithEveryReason) {
  EXPECT_FALSE(summarize_readings({}));
  const auto s = summarize_readings({{1755, 1980, kClockReasonSwPowerCap},
                                     {1980, 1980, 0},
                                     {1650, 1980, 0},
                                     {1800, 1980, kClockReasonHwThermal}});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->sm_mhz, 1755u);  // the lower median of 1650, 1755, 1800, 1980: a clock actually read
  EXPECT_EQ(s->max_sm_mhz, 1980u);
  EXPECT_EQ(s->reasons, kClockReasonSwPowerCap | kClockReasonHwThermal);
  EXPECT_TRUE(is_throttled(*s));  // a thermal slowdown during the case
}

TEST(GpuClocks, TheSamplerKeepsBusyReadingsPerDeviceUntilTaken) {
  std::mutex mutex;
  int calls = 0;
  ClockSampler sampler(
      [&](int device) -> std::optional<SmClockReading> {
        std::lock_guard<std::mutex> lock(mutex);
        ++calls;
        if (device == 1) return SmClockReading{345, 1980, kClockReasonGpuIdle};  // idle: never kept
        return SmClockReading{1700, 1980, 0};
      },
      {0, 1}, std::chrono::milliseconds(1));
  for (int i = 0; i < 2000;
       ++i) {  // until it has sampled a few times (bounded: a loaded machine is slow)
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (calls >= 10) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto busy = sampler.take(0);
  ASSERT_FALSE(busy.empty());
  for (const auto& r : busy) EXPECT_EQ(r.sm_mhz, 1700u);
  EXPECT_TRUE(sampler.take(1).empty());
  EXPECT_LE(sampler.take(0).size(), 2u) << "taken readings are gone";  // at most what came since
}

TEST(GpuClocks, ReporterGivesGpuRowsTheClockSampledWhileTheirCaseRan) {
  const auto path = testing::temp_path("ob_clock_sampler");
  ResultsReporter reporter(path, nlohmann::json::object(), 1, false);
  reporter.set_clock_reader([](int) -> std::optional<SmClockReading> {
    return SmClockReading{1980, 1980, 0};
  });
  auto sampler = std::make_shared<ClockSampler>(
      [](int) -> std::optional<SmClockReading> {
        return SmClockReading{1500, 1980, kClockReasonSwPowerCap};
      },
      std::vector<int>{1}, std::chrono::milliseconds(1));
  while (true) {  // the sampler has read at least once
    auto some = sampler->take(1);
    if (!some.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  reporter.set_clock_sampler(sampler);
  register_case(
      {"fake/gpu", "fake", {{"device", 1}}, Clock::device_events, [](benchmark::State&) {}});
  reporter.ReportRuns({testing::synthetic_run("fake/gpu")});
  clear_registered_cases();
  const auto& row = reporter.document()["benchmarks"][0];
  EXPECT_EQ(row["sm_clock_mhz"], 1500) << "during the case, not the 1980 read after it";
  EXPECT_GE(row["clock_samples"].get<int>(), 1);
  std::remove(path.c_str());
}

}  // namespace offloadbench
