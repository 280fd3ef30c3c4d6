// GPU tests for the batches family: the fused normalize kernel against its CPU twin in every output
// type and channel count on odd shapes, and each placement's case moving its bytes and passing its
// own check. Without a GPU they skip with the reason.
#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "benchmarks/batches/batches_cases.h"
#include "harness/gpu_info.h"
#include "kernels/cuda/cuda_raii.h"
#include "kernels/normalize_image.h"
#include "tests/test_support.h"

namespace offloadbench {

class GpuBatches : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = gpu_unavailable_reason(0); !reason.empty()) GTEST_SKIP() << reason;
    CUDA_CHECK(cudaSetDevice(0));
  }
};

TEST_F(GpuBatches, NormalizeKernelMatchesItsCpuTwinInEveryOutputType) {
  struct Shape {
    int batch, height, width, channels;
  };
  std::mt19937 rng(34);
  for (const Shape s : {Shape{1, 1, 1, 3}, Shape{3, 7, 13, 3}, Shape{2, 5, 33, 1},
                        Shape{4, 64, 64, 3}, Shape{2, 9, 17, 4}})
    for (auto type : {NormalizedType::fp32, NormalizedType::bf16, NormalizedType::fp16}) {
      const std::size_t n = static_cast<std::size_t>(s.batch) * s.height * s.width * s.channels;
      std::vector<std::uint8_t> in(n);
      for (auto& v : in) v = static_cast<std::uint8_t>(rng() & 0xff);
      const auto p = default_normalize_params(s.channels);
      std::vector<float> twin(n);
      cpu::normalize_hwc_to_chw(twin.data(), in.data(), s.batch, s.height, s.width, p, 1);
      DeviceBuffer d_in(n), d_out(n * element_bytes(type));
      CUDA_CHECK(cudaMemcpy(d_in.data(), in.data(), n, cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemset(d_out.data(), 0xff, n * element_bytes(type)));
      gpu::normalize_hwc_to_chw(d_out.data(), type, d_in.as<std::uint8_t>(), s.batch, s.height,
                                s.width, p, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<unsigned char> got(n * element_bytes(type));
      CUDA_CHECK(cudaMemcpy(got.data(), d_out.data(), got.size(), cudaMemcpyDeviceToHost));
      const auto tol = normalize_tolerance(p, unit_roundoff(type));
      const std::vector<float> got_float = [&] {
        std::vector<float> f(n);
        for (std::size_t i = 0; i < n; ++i) f[i] = normalized_element(got.data(), type, i);
        return f;
      }();
      EXPECT_EQ(mismatches(got_float.data(), twin.data(), n, tol), "")
          << to_string(type) << " " << s.batch << "x" << s.height << "x" << s.width << "x"
          << s.channels;
      EXPECT_EQ(check_normalized(got.data(), type, in.data(), s.batch, s.height, s.width, p), "");
    }
}

TEST_F(GpuBatches, EveryPlacementRunsAndSendsItsBytes) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  register_batches_suite(config);
  const auto doc = testing::run_registered(
      "batches/224x224x3/(gpu_normalize|cpu_normalize_fp32).*/batch:4(/|$)");
  int rows = 0;
  for (const auto& row : iteration_rows(doc)) {
    if (row["op"] != "batch_to_gpu" || row["batch"] != 4) continue;
    ++rows;
    EXPECT_EQ(row["validated"], true) << row["name"];
    EXPECT_LE(row["bytes_per_second"].get<double>(), row["ceiling_bytes_per_second"].get<double>())
        << row["name"];
    EXPECT_GT(row["images_per_second"].get<double>(), 0) << row["name"];
  }
  EXPECT_EQ(rows, 8);
}

}  // namespace offloadbench
