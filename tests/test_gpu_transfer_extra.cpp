// GPU tests (label gpu) for issue 18's transfer cases: the kernels match their CPU twins on device
// and mapped host memory, and every case moves the right bytes, per call, below its ceiling.
#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "benchmarks/transfer/transfer_extra_cases.h"
#include "harness/gpu_info.h"
#include "kernels/copy_kernels.h"
#include "kernels/cuda/cuda_raii.h"
#include "tests/test_support.h"

namespace offloadbench {

class GpuTransferExtra : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = gpu_unavailable_reason(0); !reason.empty()) GTEST_SKIP() << reason;
    CUDA_CHECK(cudaSetDevice(0));
  }
};

TEST_F(GpuTransferExtra, CopiesMatchTheirTwinsAtAnyAlignmentAndSize) {
  const std::uint64_t capacity = (1 << 20) + 64;
  DeviceBuffer src(capacity), dst(capacity);
  std::vector<unsigned char> pattern(capacity), got(capacity);
  fill_seeded_bytes(pattern.data(), capacity, 9);
  CUDA_CHECK(cudaMemcpy(src.data(), pattern.data(), capacity, cudaMemcpyHostToDevice));
  for (bool uncached : {false, true})
    for (std::uint64_t bytes : {1ull, 15ull, 16ull, 17ull, 4096ull + 3, 1ull << 20})
      for (std::uint64_t offset : {0ull, 1ull, 16ull}) {
        CUDA_CHECK(cudaMemset(dst.data(), 0, capacity));
        auto* to = dst.as<unsigned char>() + offset;
        const auto* from = src.as<unsigned char>() + offset;
        std::vector<unsigned char> expected(capacity, 0);
        if (uncached) {
          copy_bytes_uncached(to, from, bytes, nullptr);
          copy_bytes_uncached(expected.data() + offset, pattern.data() + offset, bytes);
        } else {
          copy_bytes(to, from, bytes, nullptr);
          copy_bytes(expected.data() + offset, pattern.data() + offset, bytes);
        }
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(got.data(), dst.data(), capacity, cudaMemcpyDeviceToHost));
        EXPECT_EQ(got, expected) << bytes << " bytes at offset " << offset
                                 << (uncached ? ", uncached" : "");
      }
}

TEST_F(GpuTransferExtra, SumAndChaseMatchTheirTwins) {
  const std::uint64_t words = (3 << 20) + 5;
  std::vector<std::uint32_t> host(words);
  fill_seeded_bytes(host.data(), words * 4, 10);
  DeviceBuffer device(words * 4), result(8);
  CUDA_CHECK(cudaMemcpy(device.data(), host.data(), words * 4, cudaMemcpyHostToDevice));
  sum_words(result.as<std::uint64_t>(), device.as<const std::uint32_t>(), words, nullptr);
  std::uint64_t got = 0, expected = 0;
  CUDA_CHECK(cudaMemcpy(&got, result.data(), 8, cudaMemcpyDeviceToHost));
  sum_words(&expected, host.data(), words);
  EXPECT_EQ(got, expected);

  const std::uint64_t nodes = 16 * 4096;
  std::vector<std::uint64_t> chain(nodes);
  build_pointer_chase(chain.data(), nodes, 16, 11);
  DeviceBuffer device_chain(nodes * 8);
  CUDA_CHECK(cudaMemcpy(device_chain.data(), chain.data(), nodes * 8, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(result.data(), 0, 8));
  pointer_chase(result.as<std::uint64_t>(), device_chain.as<const std::uint64_t>(), 1000, nullptr);
  pointer_chase(result.as<std::uint64_t>(), device_chain.as<const std::uint64_t>(), 777, nullptr);
  CUDA_CHECK(cudaMemcpy(&got, result.data(), 8, cudaMemcpyDeviceToHost));
  expected = 0;
  pointer_chase(&expected, chain.data(), 1777);
  EXPECT_EQ(got, expected);
}

TEST_F(GpuTransferExtra, EveryCaseIsValidatedPerCallAndBelowItsCeiling) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  config.sizes = std::vector<std::uint64_t>{1 << 20, 64 << 20};
  register_transfer_suite(config);
  const auto doc = testing::run_registered(
      "transfer/(device_local|sm_copy|latency|managed|small_tensors)/", 1, 0.01);
  const auto rows = iteration_rows(doc);
  ASSERT_FALSE(rows.empty());
  for (const auto& row : rows) {
    const auto name = row["name"].get<std::string>();
    if (row["skipped"] == true) {
      // Only what the device or driver cannot do may skip, and it says so.
      EXPECT_TRUE(row["op"] == "managed" || row["method"] == "batch_api")
          << name << ": " << row["skip_reason"];
      continue;
    }
    EXPECT_EQ(row["validated"], true) << name << " " << row.value("invalid_reason", "");
    if (row["op"] == "latency") {
      EXPECT_GT(row["latency_ns"].get<double>(), 0) << name;
      if (row.contains("steps_per_call")) {  // a chase: one call is steps_per_call loads
        EXPECT_NEAR(row["latency_ns"].get<double>() * row["steps_per_call"].get<double>() * 1e-9,
                    row["device_time_s"].get<double>(), 1e-3 * row["device_time_s"].get<double>())
            << name;
      }
      continue;
    }
    if (row["op"] == "device_local_copy") {  // read + write against the copy size once
      EXPECT_NEAR(row["bytes_per_second"].get<double>(),
                  2 * row["copy_bytes_per_second"].get<double>(),
                  1e-6 * row["bytes_per_second"].get<double>())
          << name;
    }
    const double rate = row["bytes_per_second"].get<double>();
    const double per_call = rate * row["real_time"].get<double>() * 1e-6;  // real_time in µs
    const double counted = row["bytes"].get<double>() * (row["op"] == "device_local_copy" ? 2 : 1);
    EXPECT_NEAR(per_call / counted, 1.0, 0.01)
        << name << ": rate × time per call must be the bytes of one call";
    if (row.contains("ceiling_bytes_per_second") &&
        row["ceiling_bytes_per_second"].get<double>() > 0) {
      EXPECT_LT(rate, row["ceiling_bytes_per_second"].get<double>()) << name;
    }
  }
  const auto latency = [&](const char* probe) {
    for (const auto& row : testing::rows_where(doc, "probe", probe))
      return row["latency_ns"].get<double>();
    return 0.0;
  };
  EXPECT_GT(latency("pointer_chase_mapped_host"), latency("pointer_chase_device"));
}

}  // namespace offloadbench
