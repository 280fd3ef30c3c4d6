// GPU tests (label gpu): the FMA kernel matches its CPU twin bit for bit, every pipeline variant
// produces the right output (also when chunks do not divide the size), and a pipeline's calibration
// and efficiency agree with themselves. How fast a pipeline is belongs to the benchmarks, not here.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/streams/streams_cases.h"
#include "harness/analysis/summary.h"
#include "harness/gpu_info.h"
#include "kernels/cuda/cuda_raii.h"
#include "kernels/fma_workload.h"
#include "kernels/tolerance.h"
#include "tests/test_support.h"

namespace offloadbench {

class GpuStreams : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = gpu_unavailable_reason(0); !reason.empty()) GTEST_SKIP() << reason;
  }
};

TEST_F(GpuStreams, FmaWorkloadMatchesItsCpuTwin) {
  for (std::uint64_t n : {1ull, 255ull, 1000003ull})
    for (int iterations : {0, 1, 777}) {
      std::vector<float> in(n), want(n), got(n);
      for (std::uint64_t i = 0; i < n; ++i) in[i] = static_cast<float>((i * 7919) % 4096) / 2048.0f;
      DeviceBuffer device_in(n * sizeof(float)), device_out(n * sizeof(float));
      CUDA_CHECK(
          cudaMemcpy(device_in.data(), in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
      fma_workload(device_out.as<float>(), device_in.as<float>(), n, iterations, nullptr);
      CUDA_CHECK(
          cudaMemcpy(got.data(), device_out.data(), n * sizeof(float), cudaMemcpyDeviceToHost));
      fma_workload(want.data(), in.data(), n, iterations);
      EXPECT_EQ(mismatches(got.data(), want.data(), n, Tolerance{0, 0}), "")
          << n << " x " << iterations;
    }
}

TEST_F(GpuStreams, EveryVariantProducesCorrectOutputWithUnevenChunks) {
  clear_registered_cases();
  RunConfig config;
  config.quick = false;
  config.gpu_devices = {0};
  config.sizes = std::vector<std::uint64_t>{4 * 1000003ull};  // 1000003 floats: no C divides it
  register_streams_suite(config);
  const auto doc = testing::run_registered("streams/");
  const auto rows = iteration_rows(doc);
  ASSERT_EQ(rows.size(), registered_cases().size());
  for (const auto& row : rows) {
    EXPECT_EQ(row["skipped"], false) << row["name"] << " " << row.value("skip_reason", "");
    EXPECT_EQ(row["validated"], true) << row["name"] << " " << row.value("invalid_reason", "");
  }
  // The kernel cases of one memory kind and workload ratio share one calibration and one serial
  // time (docs/results-schema.md), so their speedups compare against the same baseline.
  std::map<std::string, std::pair<double, double>> first_of_group;  // fma_iterations, serial_time_s
  for (const auto& row : rows) {
    if (!row.contains("serial_time_s")) continue;
    const auto name = row["name"].get<std::string>();
    // streams/<op>/<memory>/ratio:R/...: the group is <memory>/ratio:R.
    const auto op_end = name.find('/', std::string("streams/").size());
    const auto ratio = name.find("/ratio:");
    ASSERT_NE(ratio, std::string::npos) << name;
    const auto ratio_end = name.find('/', ratio + 1);
    const auto group = name.substr(op_end + 1, ratio_end - op_end - 1);
    const std::pair<double, double> seen{row["fma_iterations"].get<double>(),
                                         row["serial_time_s"].get<double>()};
    const auto [it, first] = first_of_group.emplace(group, seen);
    if (!first) {
      EXPECT_EQ(seen, it->second) << name << " does not share " << group << "'s calibration";
    }
  }
  EXPECT_GE(first_of_group.size(), 2u);
}

TEST_F(GpuStreams, PinnedPipelineAgreesWithItsCalibration) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  config.sizes = std::vector<std::uint64_t>{64ull << 20};
  register_streams_suite(config);
  const std::string serial = "streams/serial/pinned/ratio:1/64MiB";
  const std::string pipelined = "streams/pipelined/pinned/ratio:1/K:4/C:16/depth_first/64MiB";
  const auto doc =
      testing::run_registered("streams/(serial/pinned|pipelined/pinned)/ratio:1/", 3, 0.05);
  // The calibration's serial pass is the sum of its stages, and the serial case itself takes what
  // the calibration says (streams_calibration in the analysis's self-checks).
  EXPECT_EQ(median_of(doc, serial + "/manual_time", "calibration_consistent"), 1.0);
  const double serial_s = median_of(doc, serial + "/manual_time", "device_time_s");
  const double calibrated_s = median_of(doc, pipelined + "/manual_time", "serial_time_s");
  EXPECT_NEAR(serial_s / calibrated_s, 1.0, 0.10);
  const double efficiency = median_of(doc, pipelined + "/manual_time", "overlap_efficiency");
  EXPECT_GT(efficiency, 0.0);
  EXPECT_LT(efficiency, 1.05) << "a pipeline cannot beat the bound by more than timing noise";
}

TEST_F(GpuStreams, HostOverlapRowsAreValid) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  config.sizes = std::vector<std::uint64_t>{64ull << 20};
  register_streams_suite(config);
  const auto doc = testing::run_registered("streams/(host_overlap|bidirectional)/", 1, 0.05);
  const auto free_fraction = [&](const char* api) {
    return median_of(doc, fmt::format("streams/host_overlap/{}/ratio:1/64MiB/manual_time", api),
                     "host_free_fraction");
  };
  for (const char* api : {"sync_api", "async_api"}) {
    EXPECT_GE(free_fraction(api), 0.0) << api;
    EXPECT_LE(free_fraction(api), 1.0) << api;
  }
  for (const auto& row : iteration_rows(doc)) EXPECT_EQ(row["validated"], true) << row["name"];
}

}  // namespace offloadbench
