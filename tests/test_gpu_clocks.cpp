// The host-side clock logic with fake NVML readings: what counts as throttled, what as locked, what
// a GPU row gets, and that the reporter reads the clock for GPU rows only.
#include <cstdio>

#include <gtest/gtest.h>

#include "harness/benchmark_case.h"
#include "harness/gpu_clocks.h"
#include "harness/results_reporter.h"
#include "tests/test_support.h"

namespace offloadbench {

TEST(GpuClocks, ThrottledByReasonOrByAClockFarBelowItsMaximum) {
  EXPECT_FALSE(is_throttled({1980, 1980, 0}));
  EXPECT_FALSE(is_throttled({1500, 1980, 0}));   // 76%: boost varies, not throttled
  EXPECT_TRUE(is_throttled({1400, 1980, 0}));    // 71%: below NVBench's 75%
  EXPECT_TRUE(is_throttled({1980, 1980, kClockReasonHwThermal}));
  EXPECT_TRUE(is_throttled({1980, 1980, kClockReasonHwPowerBrake}));
  // At the power cap a little below the top clock: an H100's normal state under large GEMMs.
  EXPECT_FALSE(is_throttled({1755, 1980, kClockReasonSwPowerCap}));
  EXPECT_TRUE(is_throttled({1200, 1980, kClockReasonSwPowerCap}));  // capped far down: judged by the clock
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
  register_case({"fake/gpu", "fake", {{"device", 1}}, Clock::device_events, [](benchmark::State&) {}});
  register_case({"fake/cpu", "fake", {{"device", "cpu"}}, Clock::host_wall, [](benchmark::State&) {}});
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

}  // namespace offloadbench
