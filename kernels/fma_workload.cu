// GPU half of the FMA workload (see fma_workload.h): one thread per element in a grid-stride loop.
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/fma_workload.h"

namespace offloadbench {

// ---- CUDA kernels ----
namespace {
__global__ void fma_workload_kernel(float* out, const float* in, std::uint64_t n,
                                    int fma_iterations, float scale, float shift) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float x = in[i];
#pragma unroll 4
    for (int k = 0; k < fma_iterations; ++k) x = fmaf(x, scale, shift);
    out[i] = x;
  }
}
}  // namespace

// ---- kernel launchers ----
void fma_workload(float* out, const float* in, std::uint64_t n, int fma_iterations,
                  CUstream_st* stream) {
  if (n == 0) return;
  constexpr unsigned threads = 256;
  // Enough blocks for one element per thread up to 2^20 blocks; the grid-stride loop covers the
  // rest.
  const auto blocks =
      static_cast<unsigned>(std::min<std::uint64_t>((n + threads - 1) / threads, 1u << 20));
  fma_workload_kernel<<<blocks, threads, 0, stream>>>(out, in, n, fma_iterations, kFmaWorkloadScale,
                                                      kFmaWorkloadShift);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace offloadbench
