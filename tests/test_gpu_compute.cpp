// GPU tests (label gpu): every compute kernel against its CPU twin on odd sizes, cuBLAS in every
// precision against the double reference, and the suite's GPU rows validated below their ceilings.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "tests/random_values.h"

#include "benchmarks/compute/compute_cases.h"
#include "harness/gpu_info.h"
#include "kernels/cuda/cublas_check.h"
#include "kernels/cuda/cuda_raii.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/tolerance.h"
#include "tests/test_support.h"

namespace offloadbench {
namespace {

class GpuCompute : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = gpu_unavailable_reason(0); !reason.empty()) GTEST_SKIP() << reason;
    CUDA_CHECK(cudaSetDevice(0));
  }
};

using testing::random_values;

template <typename T>
DeviceBuffer to_device(const std::vector<T>& host) {
  DeviceBuffer d(host.size() * sizeof(T));
  CUDA_CHECK(cudaMemcpy(d.data(), host.data(), d.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());  // a pageable copy returns once staged; the tests' streams
                                        // won't wait
  return d;
}

template <typename T>
std::vector<T> to_host(const DeviceBuffer& d, std::size_t n) {
  std::vector<T> host(n);
  CUDA_CHECK(cudaMemcpy(host.data(), d.data(), n * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

// Every op of kernels/elementwise.h, GPU against the CPU twin on the same inputs and scalars.
template <typename T>
// `offset` elements into every array: the four-a-thread kernel must fall back where 16 bytes do not
// align.
void check_elementwise_twins(std::size_t n, ElementwiseKernel kernel, std::size_t offset = 0) {
  const double roundoff = sizeof(T) == 4 ? kRoundoffFp32 : kRoundoffFp64;
  const auto x = random_values<T>(n + offset, 1), y = random_values<T>(n + offset, 2);
  DeviceBuffer dx = to_device(x), dy = to_device(y);
  DeviceBuffer dz((n + offset) * sizeof(T)), dsum(sizeof(double));
  CudaStream stream;
  for (const auto& info : kElementwiseOpInfos) {
    SCOPED_TRACE(::testing::Message() << info.name << " n=" << n << " sizeof(T)=" << sizeof(T)
                                      << " " << to_string(kernel) << " offset " << offset);
    std::vector<T> want(n);
    double want_sum = 0;
    CUDA_CHECK(cudaMemset(dz.data(), 0xff, dz.bytes()));  // NaN where a kernel wrote nothing
    gpu::elementwise<T>(info.op, kernel)(
        elementwise_args(info.op, dz.as<T>() + offset, dsum.as<double>(), dx.as<const T>() + offset,
                         dy.as<const T>() + offset, n),
        stream.get());
    cpu::elementwise<T>(info.op)(
        elementwise_args(info.op, want.data(), &want_sum, x.data() + offset, y.data() + offset, n),
        2);
    stream.synchronize();
    if (info.writes_array) {
      const auto got = to_host<T>(dz, n + offset);
      EXPECT_EQ(mismatches(got.data() + offset, want.data(), n, elementwise_tolerance(roundoff)),
                "");
    } else {
      const double got_sum = to_host<double>(dsum, 1)[0];
      EXPECT_TRUE(within_tolerance(got_sum, want_sum, reduction_tolerance(roundoff, n, 1.0)))
          << "gpu " << got_sum << ", cpu " << want_sum;
    }
  }
}

TEST_F(GpuCompute, ElementwiseKernelsMatchTheirCpuTwins) {
  for (auto kernel : {ElementwiseKernel::one_per_thread, ElementwiseKernel::four_per_thread})
    for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1000003}}) {
      check_elementwise_twins<float>(n, kernel);
      check_elementwise_twins<double>(n, kernel);
    }
  check_elementwise_twins<float>(1000003, ElementwiseKernel::four_per_thread, 1);
  check_elementwise_twins<double>(1001, ElementwiseKernel::four_per_thread, 3);
}

TEST_F(GpuCompute, TiledMatmulMatchesTheCpuTwinOnOddShapes) {
  struct Shape {
    int m, n, k;
  };
  for (const Shape s :
       {Shape{1, 1, 1}, Shape{7, 5, 3}, Shape{129, 65, 33}, Shape{200, 300, 150}, Shape{1, 257, 17},
        Shape{513, 255, 1000}, Shape{256, 384, 512}, Shape{128, 132, 20}}) {
    SCOPED_TRACE(::testing::Message() << s.m << "x" << s.n << "x" << s.k);
    std::vector<float> a(std::size_t(s.m) * s.k), b(std::size_t(s.k) * s.n),
        want(std::size_t(s.m) * s.n);
    fill_exact_matrix(a.data(), a.size(), 1);
    fill_exact_matrix(b.data(), b.size(), 2);
    DeviceBuffer da = to_device(a), db = to_device(b);
    DeviceBuffer dc(want.size() * sizeof(float));
    CudaStream stream;
    cpu::matmul(want.data(), a.data(), b.data(), s.m, s.n, s.k, 2);
    for (auto kernel : {MatmulKernel::tiled, MatmulKernel::vectorized}) {
      SCOPED_TRACE(kernel == MatmulKernel::tiled ? "tiled" : "vectorized");
      CUDA_CHECK(cudaMemset(dc.data(), 0xff, dc.bytes()));  // NaN: an entry no kernel wrote shows
      gpu::matmul(dc.as<float>(), da.as<float>(), db.as<float>(), s.m, s.n, s.k, stream.get(),
                  kernel);
      stream.synchronize();
      const auto got = to_host<float>(dc, want.size());
      EXPECT_EQ(
          mismatches(got.data(), want.data(), want.size(), matmul_tolerance(kRoundoffFp32, s.k)),
          "");
    }
  }
}

TEST_F(GpuCompute, CublasEveryPrecisionMatchesTheReference) {
  const int m = 257, n = 129, k = 300;
  std::vector<float> a(std::size_t(m) * k), b(std::size_t(k) * n);
  fill_exact_matrix(a.data(), a.size(), 1);
  fill_exact_matrix(b.data(), b.size(), 2);
  CublasHandle handle;
  CudaStream stream;
  // The inputs as the multiply reads them: float, or converted to bf16 / fp16 (exactly: k/64
  // values).
  const auto upload = [](const std::vector<float>& values, GemmPrecision precision) {
    if (precision == GemmPrecision::bf16) {
      std::vector<__nv_bfloat16> converted(values.size());
      for (std::size_t i = 0; i < values.size(); ++i) converted[i] = __float2bfloat16(values[i]);
      return to_device(converted);
    }
    if (precision == GemmPrecision::fp16) {
      std::vector<__half> converted(values.size());
      for (std::size_t i = 0; i < values.size(); ++i) converted[i] = __float2half(values[i]);
      return to_device(converted);
    }
    return to_device(values);
  };
  for (auto precision :
       {GemmPrecision::fp32, GemmPrecision::tf32, GemmPrecision::bf16, GemmPrecision::fp16}) {
    DeviceBuffer da = upload(a, precision), db = upload(b, precision);
    DeviceBuffer dc(std::size_t(m) * n * sizeof(float));
    gpu::matmul_cublas(handle.get(), precision, dc.as<float>(), da.data(), db.data(), m, n, k,
                       stream.get());
    stream.synchronize();
    const auto got = to_host<float>(dc, std::size_t(m) * n);
    EXPECT_EQ(sampled_matmul_mismatches(got.data(), a.data(), b.data(), m, n, k,
                                        input_roundoff(precision), 4096),
              "")
        << to_string(precision);
  }
}

TEST_F(GpuCompute, SuiteRowsValidateBelowTheirCeilings) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  config.sizes = std::vector<std::uint64_t>{7, 1 << 20};
  register_compute_suite(config);
  const auto doc = testing::run_registered(
      "compute/(triad|dot)/fp32/gpu_|compute/sgemm/square/[a-z0-9_]+/gpu_[a-z]+/256");
  int checked = 0;
  for (const auto& row : iteration_rows(doc)) {
    if (row["device"] == "cpu") continue;
    SCOPED_TRACE(row["name"].get<std::string>());
    EXPECT_EQ(row["skipped"], false) << row.value("skip_reason", "");
    EXPECT_EQ(row["validated"], true)
        << row.value("invalid_reason", "") << row.value("suspect_reason", "");
    EXPECT_GT(row["device_time_s"].get<double>(), 0);
    EXPECT_GE(row["host_time_s"].get<double>(), row["device_time_s"].get<double>() * 0.5);
    ++checked;
  }
  EXPECT_EQ(checked, 2 * 2 * 3 + 5 * 3);
}

}  // namespace
}  // namespace offloadbench
