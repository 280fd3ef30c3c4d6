// The CPU matmul twin against a triple loop on non-square shapes that are not multiples of the GPU
// tile (128×128×16); the sampled check and the data it relies on; the FLOP-peak table.
#include <cblas.h>
#include <omp.h>

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "benchmarks/compute/compute_peaks.h"
#include "kernels/matmul.h"
#include "kernels/tolerance.h"

namespace offloadbench {
namespace {

struct Shape {
  int m, n, k;
};
const Shape kOddShapes[] = {{1, 1, 1}, {7, 5, 3}, {129, 65, 33}, {200, 300, 150}, {1, 257, 17}};

// C = A·B, row-major, accumulated in double.
std::vector<double> reference_matmul(const std::vector<float>& a, const std::vector<float>& b,
                                     int m, int n, int k) {
  std::vector<double> c(static_cast<std::size_t>(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p) sum += double(a[i * k + p]) * b[p * n + j];
      c[i * n + j] = sum;
    }
  return c;
}

TEST(MatmulCpu, MatchesATripleLoopOnOddShapes) {
  for (const auto& s : kOddShapes)
    for (int threads : {1, omp_get_max_threads()}) {
      SCOPED_TRACE(::testing::Message()
                   << s.m << "x" << s.n << "x" << s.k << " threads=" << threads);
      std::vector<float> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n, -3.0f);
      fill_exact_matrix(a.data(), a.size(), 1);
      fill_exact_matrix(b.data(), b.size(), 2);
      cpu::matmul(c.data(), a.data(), b.data(), s.m, s.n, s.k, threads);
      const auto ref = reference_matmul(a, b, s.m, s.n, s.k);
      EXPECT_EQ(mismatches(c.data(), ref.data(), c.size(), matmul_tolerance(kRoundoffFp32, s.k)),
                "");
      EXPECT_EQ(
          sampled_matmul_mismatches(c.data(), a.data(), b.data(), s.m, s.n, s.k, kRoundoffFp32),
          "");
    }
}

TEST(MatmulCpu, TheSampledCheckFindsAWrongCornerAndAWrongMiddle) {
  const int m = 129, n = 65, k = 33;
  std::vector<float> a(m * k), b(k * n), c(m * n);
  fill_exact_matrix(a.data(), a.size(), 1);
  fill_exact_matrix(b.data(), b.size(), 2);
  cpu::matmul(c.data(), a.data(), b.data(), m, n, k, 1);
  auto corner = c;
  corner.back() += 0.5f;  // the last entry: the edge of a partial tile
  EXPECT_NE(sampled_matmul_mismatches(corner.data(), a.data(), b.data(), m, n, k, kRoundoffFp32),
            "");
  auto transposed = c;  // a kernel that wrote Cᵀ fails too
  for (int i = 0; i < std::min(m, n); ++i)
    for (int j = 0; j < std::min(m, n); ++j) transposed[i * n + j] = c[j * n + i];
  EXPECT_NE(
      sampled_matmul_mismatches(transposed.data(), a.data(), b.data(), m, n, k, kRoundoffFp32), "");
}

TEST(MatmulCpu, TestDataIsExactInEveryInputPrecision) {
  std::vector<float> v(10000);
  fill_exact_matrix(v.data(), v.size(), 7);
  bool negative = false, positive = false;
  for (float x : v) {
    ASSERT_GE(x, -1.0f);
    ASSERT_LE(x, 1.0f);
    ASSERT_EQ(x * 64.0f, std::round(x * 64.0f))
        << x;  // k/64 with |k| <= 64: 7 significant bits at most
    negative |= x < 0;
    positive |= x > 0;
  }
  EXPECT_TRUE(negative && positive);
}

TEST(MatmulCpu, BlasThreadsRestoresTheCount) {
  const int before = openblas_get_num_threads();
  {
    BlasThreads one(1);
    EXPECT_EQ(openblas_get_num_threads(), 1);
  }
  EXPECT_EQ(openblas_get_num_threads(), before);
}

TEST(MatmulTolerance, GrowsWithKAndWithCoarserInputs) {
  EXPECT_LT(matmul_tolerance(kRoundoffFp32, 64).atol, matmul_tolerance(kRoundoffFp32, 4096).atol);
  EXPECT_LT(matmul_tolerance(kRoundoffFp32, 1024).atol, matmul_tolerance(kRoundoffTf32, 1024).atol);
  EXPECT_LT(matmul_tolerance(kRoundoffFp16, 1024).atol, matmul_tolerance(kRoundoffBf16, 1024).atol);
}

TEST(FlopPeaks, MatchPublishedTotals) {
  // H100 SXM: 132 SMs; FP32 at its 1.98 GHz boost is NVIDIA's 67 TFLOPS.
  EXPECT_NEAR(flop_peak_per_second(GemmPrecision::fp32, 9, 0, 132, 1.98e9) / 1e12, 66.9, 0.1);
  // A100: 108 SMs at 1.41 GHz: 19.5 / 156 / 312 TFLOPS.
  EXPECT_NEAR(flop_peak_per_second(GemmPrecision::fp32, 8, 0, 108, 1.41e9) / 1e12, 19.5, 0.1);
  EXPECT_NEAR(flop_peak_per_second(GemmPrecision::tf32, 8, 0, 108, 1.41e9) / 1e12, 156, 1);
  EXPECT_NEAR(flop_peak_per_second(GemmPrecision::bf16, 8, 0, 108, 1.41e9) / 1e12, 312, 1);
  EXPECT_EQ(flop_peak_per_second(GemmPrecision::fp32, 3, 5, 10, 1e9), 0) << "unknown capability";
  EXPECT_EQ(flops_per_clock_per_sm(GemmPrecision::bf16, 7, 0), 0)
      << "V100 has no bf16 tensor cores";
}

TEST(FlopPeaks, TensorPeaksUseThePublishedClockWhereKnown) {
  // H100 SXM: the datasheet's 989 dense BF16 TFLOPS are at 1830 MHz, though the part boosts to 1980
  // (1070 TFLOPS at that clock is not what NVIDIA publishes); FP32's 67 TFLOPS are at 1980.
  const std::string h100 = "NVIDIA H100 80GB HBM3";
  EXPECT_NEAR(flop_peak_per_second(GemmPrecision::bf16, 9, 0, 132,
                                   peak_clock_hz(h100, GemmPrecision::bf16, 1.98e9)) /
                  1e12,
              989.4, 0.5);
  EXPECT_NEAR(flop_peak_per_second(GemmPrecision::fp32, 9, 0, 132,
                                   peak_clock_hz(h100, GemmPrecision::fp32, 1.98e9)) /
                  1e12,
              66.9, 0.1);
  EXPECT_NEAR(flop_peak_per_second(GemmPrecision::tf32, 9, 0, 132,
                                   peak_clock_hz("NVIDIA H200", GemmPrecision::tf32, 1.98e9)) /
                  1e12,
              494.7, 0.5);
  // An unknown part: the highest clock, and the source says so.
  EXPECT_EQ(peak_clock_hz("NVIDIA RTX 9999", GemmPrecision::bf16, 2.5e9), 2.5e9);
  EXPECT_NE(flop_peak_source("NVIDIA RTX 9999", GemmPrecision::bf16).find("highest SM clock"),
            std::string::npos);
  EXPECT_NE(flop_peak_source(h100, GemmPrecision::bf16).find("1830 MHz"), std::string::npos);
}

}  // namespace
}  // namespace offloadbench
