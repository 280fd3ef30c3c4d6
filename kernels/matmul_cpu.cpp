// CPU twin of the tiled CUDA SGEMM: OpenBLAS, row-major; plus the helpers every matmul check uses.
#include "kernels/matmul.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "kernels/tolerance.h"

namespace offloadbench {

const char* to_string(GemmPrecision precision) {
  switch (precision) {
    case GemmPrecision::fp32:
      return "fp32";
    case GemmPrecision::tf32:
      return "tf32";
    case GemmPrecision::bf16:
      return "bf16";
    case GemmPrecision::fp16:
      return "fp16";
  }
  return "unknown";
}

std::size_t input_element_bytes(GemmPrecision precision) {
  return precision == GemmPrecision::bf16 || precision == GemmPrecision::fp16 ? 2 : 4;
}

double input_roundoff(GemmPrecision precision) {
  switch (precision) {
    case GemmPrecision::fp32:
      return kRoundoffFp32;
    case GemmPrecision::tf32:
      return kRoundoffTf32;
    case GemmPrecision::bf16:
      return kRoundoffBf16;
    case GemmPrecision::fp16:
      return kRoundoffFp16;
  }
  return kRoundoffBf16;
}

void fill_exact_matrix(float* data, std::size_t count, unsigned seed) {
  std::uint64_t state = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (std::size_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005ull +
            1442695040888963407ull;  // LCG; the top bits are good enough
    const int step = static_cast<int>((state >> 33) % 129) - 64;  // -64..64
    data[i] = static_cast<float>(step) / 64.0f;
  }
}

std::string sampled_matmul_mismatches(const float* c, const float* a, const float* b, int m, int n,
                                      int k, double roundoff, int samples) {
  const auto tol = matmul_tolerance(roundoff, k);
  const std::size_t total = static_cast<std::size_t>(m) * n;
  const std::size_t count =
      std::min<std::size_t>(total, static_cast<std::size_t>(std::max(samples, 1)));
  // Spread the samples over the whole matrix, always including the first and last entries (edges of
  // tiles).
  std::vector<std::size_t> where(count);
  for (std::size_t s = 0; s < count; ++s) where[s] = count == 1 ? 0 : s * (total - 1) / (count - 1);
  std::vector<float> got(count);
  for (std::size_t s = 0; s < count; ++s) got[s] = c[where[s]];
  const auto ref_at = [&](std::size_t s) {
    const std::size_t row = where[s] / n, col = where[s] % n;
    double sum = 0;
    for (int p = 0; p < k; ++p)
      sum += static_cast<double>(a[row * k + p]) * b[static_cast<std::size_t>(p) * n + col];
    return sum;
  };
  auto problem = mismatches_against(got.data(), count, ref_at, tol);
  if (problem.empty()) return "";
  return fmt::format("C = A·B ({}x{}x{}) at sampled entries: {}", m, n, k, problem);
}

// Only touches OpenBLAS when the count changes: cpu::matmul sets it on every call.
BlasThreads::BlasThreads(int threads) : previous_(openblas_get_num_threads()) {
  if (threads != previous_) openblas_set_num_threads(threads);
}

BlasThreads::~BlasThreads() {
  if (openblas_get_num_threads() != previous_) openblas_set_num_threads(previous_);
}

namespace cpu {

void matmul(float* c, const float* a, const float* b, int m, int n, int k, int threads,
            CpuGemmLibrary library) {
  if (library == CpuGemmLibrary::openblas) {
    BlasThreads guard(threads);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
    return;
  }
  const int previous = omp_get_max_threads();
  if (threads != previous) omp_set_num_threads(threads);
  try {
    sgemm(library, {false, false, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n});
  } catch (...) {
    omp_set_num_threads(previous);
    throw;
  }
  if (threads != previous) omp_set_num_threads(previous);
}

}  // namespace cpu

}  // namespace offloadbench
