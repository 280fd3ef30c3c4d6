// GPU tests (label gpu): every transfer kind moves the right bytes at a plausible rate.
#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "benchmarks/transfer/transfer_cases.h"
#include "harness/analysis/summary.h"
#include "harness/gpu_info.h"
#include "kernels/cuda/cuda_check.h"
#include "tests/test_support.h"

namespace offloadbench {

class GpuTransfer : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = gpu_unavailable_reason(0); !reason.empty()) GTEST_SKIP() << reason;
  }
};

TEST_F(GpuTransfer, AFailedCallLeavesNoErrorForTheNextCheck) {
  void* p = nullptr;
  EXPECT_THROW(CUDA_CHECK(cudaMalloc(&p, std::size_t{1} << 60)),
               CudaError);  // 1 EiB: refused, not sticky
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess);
  EXPECT_NO_THROW(CUDA_CHECK(cudaGetLastError()));
}

TEST_F(GpuTransfer, EveryKindMovesTheRightBytesBelowTheLinkRate) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  config.sizes = std::vector<std::uint64_t>{1 << 20, 256 << 20};
  register_transfer_suite(config);
  const auto doc = testing::run_registered("transfer/(h2d|d2h|bidirectional)/", 3, 0.01);
  const auto rows = testing::rows_where(doc, "op", "device_copy");
  ASSERT_EQ(rows.size(), 3u * 4 * 2 * 3);
  const double link = gpu_inventory().gpus[0].link.ceiling_bytes_per_second();
  for (const auto& row : rows) {
    EXPECT_EQ(row["validated"], true) << row["name"] << " " << row.value("invalid_reason", "");
    const double rate = row["bytes_per_second"].get<double>();
    const int directions = row["direction"] == "bidirectional" ? 2 : 1;
    EXPECT_GT(rate, 0) << row["name"];
    if (link > 0) { EXPECT_LT(rate, link * directions) << row["name"]; }
    // bytes_per_second · seconds per copy = bytes moved per copy
    const double seconds = row["real_time"].get<double>() * 1e-6;
    EXPECT_NEAR(rate * seconds / (row["bytes"].get<double>() * directions), 1.0, 0.01)
        << row["name"];
    EXPECT_GT(row["host_time_s"].get<double>(), 0) << row["name"];
  }
}

TEST_F(GpuTransfer, PinningCostsArePositive) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  config.sizes = std::vector<std::uint64_t>{16 << 20};
  register_transfer_suite(config);
  const auto doc = testing::run_registered("transfer/pin_cost/host_");
  const auto rows = testing::rows_where(doc, "op", "pin_cost");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) EXPECT_GT(row["pin_time_s"].get<double>(), 0) << row["name"];
}

}  // namespace offloadbench
