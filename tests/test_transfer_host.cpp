// The transfer suite's host baseline runs anywhere; its GPU cases skip with the reason here.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "benchmarks/transfer/transfer_cases.h"
#include "harness/gpu_info.h"
#include "tests/test_support.h"

namespace offloadbench {

TEST(TransferSuite, HostBaselineMeasuresAndValidates) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {};
  config.sizes = std::vector<std::uint64_t>{4096, 1 << 20};
  register_transfer_suite(config);
  const auto doc = testing::run_registered("transfer/");
  const auto memcpy_rows = testing::rows_where(doc, "op", "host_memcpy");
  ASSERT_GE(memcpy_rows.size(), 4u);
  for (const auto& row : memcpy_rows) {
    EXPECT_EQ(row["validated"], true) << row["name"];
    EXPECT_EQ(row["device"], "cpu");
    // read + write counted: bytes_per_second · time per iteration = 2 · bytes
    const double seconds = row["real_time"].get<double>() * 1e-6;
    EXPECT_NEAR(row["bytes_per_second"].get<double>() * seconds / row["bytes"].get<double>(), 2.0,
                0.05)
        << row["name"];
  }
  const auto touch_rows = testing::rows_where(doc, "pin_operation", "first_touch");
  EXPECT_EQ(touch_rows.size(), 2u);
  for (const auto& row : touch_rows)
    EXPECT_EQ(row["validated"], true) << row["name"] << ": every byte read back";
  EXPECT_TRUE(testing::rows_where(doc, "op", "device_copy").empty())
      << "--device cpu registers no GPU cases";
}

// In a later process of a run whose first process found every case right and slow (20 ms a call),
// the pre-touched copies leave their check to it; the first-touch cases keep theirs (their calls
// take fresh pages, and how fast those come depends on what the check's run just freed).
TEST(TransferSuite, ALaterProcessLeavesOnlyThePretouchedCopiesCheckToTheFirstProcess) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {};
  config.sizes = std::vector<std::uint64_t>{1 << 20};
  register_transfer_suite(config);
  std::map<std::string, nlohmann::json> first_process;
  for (const auto& spec : registered_cases())
    first_process[reported_name(spec)] = {
        {"iterations", 2}, {"calls_per_batch", 1}, {"host_time_s", 0.02}, {"validated", true}};
  set_calibration_rows(first_process);
  const auto doc = testing::run_registered("transfer/(host_memcpy|pin_cost/first_touch)");
  set_calibration_rows({});
  int pretouched = 0, fresh = 0;
  for (const auto& row : testing::rows_where(doc, "op", "host_memcpy")) {
    const bool left = row.value("checked_by_first_process", false);
    EXPECT_EQ(row["validated"], true) << row["name"];
    if (row["name"].get<std::string>().find("/pretouched/") != std::string::npos) {
      ++pretouched;
      EXPECT_TRUE(left) << row["name"];
    } else {
      ++fresh;
      EXPECT_FALSE(left) << row["name"];
    }
  }
  for (const auto& row : testing::rows_where(doc, "pin_operation", "first_touch")) {
    ++fresh;
    EXPECT_FALSE(row.value("checked_by_first_process", false)) << row["name"];
  }
  EXPECT_GE(pretouched, 1);
  EXPECT_EQ(fresh, 2) << "host_memcpy/first_touch and pin_cost/first_touch";
}

TEST(TransferSuite, GpuCasesSkipWithTheReasonWhenNoGpu) {
  if (gpu_unavailable_reason(0).empty())
    GTEST_SKIP() << "a GPU is present; tests/test_gpu_transfer.cpp covers it";
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  config.sizes = std::vector<std::uint64_t>{4096};
  register_transfer_suite(config);
  const auto doc = testing::run_registered("transfer/(h2d|d2h|bidirectional|pin_cost/host)");
  const auto rows = iteration_rows(doc);
  ASSERT_EQ(rows.size(), 14u);  // 3 directions × 4 memory kinds + 2 pinning operations
  for (const auto& row : rows) {
    EXPECT_EQ(row["skipped"], true) << row["name"];
    EXPECT_EQ(row["skip_reason"], gpu_unavailable_reason(0));
  }
}

}  // namespace offloadbench

namespace offloadbench {
// nvbandwidth's bidirectional figure: each direction over its own stream's time, summed.
TEST(TransferSuite, BidirectionalLaneRatesAreEachDirectionOverItsOwnTime) {
  Totals totals;
  totals.calls = 4;
  totals.lane_seconds = {0.002, 0.004};  // H2D finished in 2 ms, D2H in 4 ms (the joined time)
  const auto lanes = bidirectional_lane_rates(1000, totals);
  EXPECT_DOUBLE_EQ(lanes.h2d, 4000 / 0.002);
  EXPECT_DOUBLE_EQ(lanes.d2h, 4000 / 0.004);
  EXPECT_DOUBLE_EQ(lanes.sum, lanes.h2d + lanes.d2h);
  // Ours counts both directions over the joined time, which is never more than the lanes' sum.
  EXPECT_LE(2 * 4000 / 0.004, lanes.sum);
  totals.lane_seconds = {0.002};  // one stream: no lanes to report
  EXPECT_EQ(bidirectional_lane_rates(1000, totals).sum, 0);
}
}  // namespace offloadbench
