// CUDA halves of kernels/matmul.h: the project's shared-memory 2-D block-tiled SGEMM (the twin of
// cpu::matmul) and the cuBLAS calls it is compared with.
//
// Tiling: a 256-thread block computes a 128×128 tile of C, walking K in steps of 16. Each step
// stages a 128×16 slice of A (stored transposed, padded against bank conflicts) and a 16×128 slice
// of B in shared memory; each thread then accumulates an 8×8 sub-tile in registers, taking rows and
// columns 16 apart so that the shared-memory reads of a warp fall in distinct banks (or broadcast).
// Every global load and store is bounds-checked, so any m, n, k works (out-of-range loads read 0).
#include <cuda_runtime.h>

#include "kernels/cuda/cublas_check.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/matmul.h"

namespace offloadbench::gpu {

namespace {

constexpr int kTileM = 128, kTileN = 128, kTileK = 16;  // C tile per block, K step
constexpr int kThreadM = 8, kThreadN = 8;               // C entries per thread
constexpr int kThreadsM = kTileM / kThreadM;            // 16
constexpr int kThreadsN = kTileN / kThreadN;            // 16
constexpr int kThreads = kThreadsM * kThreadsN;         // 256
constexpr int kPadA = 4;  // keeps the transposed A stores off one bank

// ---- CUDA kernels ----

__global__ void __launch_bounds__(kThreads)
    matmul_tiled_kernel(float* c, const float* a, const float* b, int m, int n, int k) {
  __shared__ float a_tile[kTileK][kTileM + kPadA];  // a_tile[p][row] = A[tile_row + row][k0 + p]
  __shared__ float b_tile[kTileK][kTileN];          // b_tile[p][col] = B[k0 + p][tile_col + col]
  const int tile_row = blockIdx.y * kTileM, tile_col = blockIdx.x * kTileN;
  const int thread_row = threadIdx.x / kThreadsN, thread_col = threadIdx.x % kThreadsN;

  float acc[kThreadM][kThreadN] = {};
  for (int k0 = 0; k0 < k; k0 += kTileK) {
    // A slice: consecutive threads read consecutive k of one row (coalesced 64-byte runs).
    for (int i = threadIdx.x; i < kTileM * kTileK; i += kThreads) {
      const int row = i / kTileK, p = i % kTileK;
      const int global_row = tile_row + row, global_k = k0 + p;
      a_tile[p][row] = (global_row < m && global_k < k)
                           ? a[static_cast<size_t>(global_row) * k + global_k]
                           : 0.0f;
    }
    // B slice: consecutive threads read consecutive columns.
    for (int i = threadIdx.x; i < kTileK * kTileN; i += kThreads) {
      const int p = i / kTileN, col = i % kTileN;
      const int global_k = k0 + p, global_col = tile_col + col;
      b_tile[p][col] = (global_k < k && global_col < n)
                           ? b[static_cast<size_t>(global_k) * n + global_col]
                           : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kTileK; ++p) {
      float a_frag[kThreadM], b_frag[kThreadN];
#pragma unroll
      for (int i = 0; i < kThreadM; ++i) a_frag[i] = a_tile[p][thread_row + i * kThreadsM];
#pragma unroll
      for (int j = 0; j < kThreadN; ++j) b_frag[j] = b_tile[p][thread_col + j * kThreadsN];
#pragma unroll
      for (int i = 0; i < kThreadM; ++i)
#pragma unroll
        for (int j = 0; j < kThreadN; ++j) acc[i][j] = fmaf(a_frag[i], b_frag[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kThreadM; ++i) {
    const int row = tile_row + thread_row + i * kThreadsM;
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < kThreadN; ++j) {
      const int col = tile_col + thread_col + j * kThreadsN;
      if (col < n) c[static_cast<size_t>(row) * n + col] = acc[i][j];
    }
  }
}

// The vectorized variant: the same 128×128 C tile and 8×8 register sub-tile per thread, with a K
// step of 8, every global load a float4 (one of A, one of B per thread and step), the next step's
// slices loaded into registers while this one's are multiplied (two shared-memory stages, one
// barrier per step), each thread's sub-tile contiguous so that its shared-memory reads and C stores
// are float4. Rows whose length is not a multiple of 4 (and the edges of any shape) take
// bounds-checked scalar loads, so any m, n, k works; cudaMalloc'd bases are 16-byte aligned.
constexpr int kVecTileK = 8;

__device__ __forceinline__ float4 load_row4(const float* base, int row, int rows, int col, int cols,
                                            int ld, bool rows_aligned) {
  if (row >= rows) return make_float4(0, 0, 0, 0);
  const float* p = base + static_cast<size_t>(row) * ld + col;
  if (rows_aligned && col + 3 < cols) return *reinterpret_cast<const float4*>(p);
  return make_float4(col < cols ? p[0] : 0.0f, col + 1 < cols ? p[1] : 0.0f,
                     col + 2 < cols ? p[2] : 0.0f, col + 3 < cols ? p[3] : 0.0f);
}

// One stage's slices from a thread's two float4s: A transposed (a_stage[p][row]), B as it is.
__device__ __forceinline__ void stage_slices(float (&a_stage)[kVecTileK][kTileM],
                                             float (&b_stage)[kVecTileK][kTileN], int a_row,
                                             int a_col, int b_row, int b_col, float4 from_a,
                                             float4 from_b) {
  a_stage[a_col + 0][a_row] = from_a.x;
  a_stage[a_col + 1][a_row] = from_a.y;
  a_stage[a_col + 2][a_row] = from_a.z;
  a_stage[a_col + 3][a_row] = from_a.w;
  *reinterpret_cast<float4*>(&b_stage[b_row][b_col]) = from_b;
}

__global__ void __launch_bounds__(kThreads)
    matmul_vectorized_kernel(float* c, const float* a, const float* b, int m, int n, int k) {
  __shared__ __align__(
      16) float a_tile[2][kVecTileK][kTileM];  // a_tile[s][p][row] = A[tile_row + row][k0 + p]
  __shared__ __align__(
      16) float b_tile[2][kVecTileK][kTileN];  // b_tile[s][p][col] = B[k0 + p][tile_col + col]
  const int tile_row = blockIdx.y * kTileM, tile_col = blockIdx.x * kTileN;
  const int thread_row = (threadIdx.x / kThreadsN) * kThreadM,
            thread_col = (threadIdx.x % kThreadsN) * kThreadN;
  const int a_row = threadIdx.x / 2,
            a_col = (threadIdx.x % 2) * 4;  // 128×8 slice of A: a float4 a thread
  const int b_row = threadIdx.x / 32,
            b_col = (threadIdx.x % 32) * 4;  // 8×128 slice of B: a float4 a thread
  const bool a_aligned = k % 4 == 0, b_aligned = n % 4 == 0;

  stage_slices(a_tile[0], b_tile[0], a_row, a_col, b_row, b_col,
               load_row4(a, tile_row + a_row, m, a_col, k, k, a_aligned),
               load_row4(b, b_row, k, tile_col + b_col, n, n, b_aligned));
  __syncthreads();

  float acc[kThreadM][kThreadN] = {};
  int s = 0;
  for (int k0 = 0; k0 < k; k0 += kVecTileK) {
    const bool more = k0 + kVecTileK < k;
    float4 next_a = make_float4(0, 0, 0, 0), next_b = next_a;
    if (more) {  // in flight while this step multiplies
      next_a = load_row4(a, tile_row + a_row, m, k0 + kVecTileK + a_col, k, k, a_aligned);
      next_b = load_row4(b, k0 + kVecTileK + b_row, k, tile_col + b_col, n, n, b_aligned);
    }
#pragma unroll
    for (int p = 0; p < kVecTileK; ++p) {
      float a_frag[kThreadM], b_frag[kThreadN];
      *reinterpret_cast<float4*>(&a_frag[0]) =
          *reinterpret_cast<const float4*>(&a_tile[s][p][thread_row]);
      *reinterpret_cast<float4*>(&a_frag[4]) =
          *reinterpret_cast<const float4*>(&a_tile[s][p][thread_row + 4]);
      *reinterpret_cast<float4*>(&b_frag[0]) =
          *reinterpret_cast<const float4*>(&b_tile[s][p][thread_col]);
      *reinterpret_cast<float4*>(&b_frag[4]) =
          *reinterpret_cast<const float4*>(&b_tile[s][p][thread_col + 4]);
#pragma unroll
      for (int i = 0; i < kThreadM; ++i)
#pragma unroll
        for (int j = 0; j < kThreadN; ++j) acc[i][j] = fmaf(a_frag[i], b_frag[j], acc[i][j]);
    }
    if (more)
      stage_slices(a_tile[s ^ 1], b_tile[s ^ 1], a_row, a_col, b_row, b_col, next_a,
                   next_b);  // the other stage: nobody reads it during this step
    __syncthreads();
    s ^= 1;
  }
#pragma unroll
  for (int i = 0; i < kThreadM; ++i) {
    const int row = tile_row + thread_row + i;
    if (row >= m) continue;
    float* out = c + static_cast<size_t>(row) * n;
#pragma unroll
    for (int j = 0; j < kThreadN; j += 4) {
      const int col = tile_col + thread_col + j;
      if (b_aligned && col + 3 < n) {
        *reinterpret_cast<float4*>(out + col) =
            make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      } else {
        for (int q = 0; q < 4; ++q)
          if (col + q < n) out[col + q] = acc[i][j + q];
      }
    }
  }
}

struct CublasTypes {
  cudaDataType input;
  cublasComputeType_t compute;
};

CublasTypes cublas_types(GemmPrecision precision) {
  switch (precision) {
    case GemmPrecision::fp32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case GemmPrecision::tf32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case GemmPrecision::bf16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case GemmPrecision::fp16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
  }
  throw std::invalid_argument("unknown GemmPrecision");
}

}  // namespace

// ---- kernel launchers ----

void matmul(float* c, const float* a, const float* b, int m, int n, int k, CUstream_st* stream,
            MatmulKernel kernel) {
  const dim3 grid((n + kTileN - 1) / kTileN, (m + kTileM - 1) / kTileM);
  if (kernel == MatmulKernel::vectorized)
    matmul_vectorized_kernel<<<grid, kThreads, 0, stream>>>(c, a, b, m, n, k);
  else
    matmul_tiled_kernel<<<grid, kThreads, 0, stream>>>(c, a, b, m, n, k);
  CUDA_CHECK(cudaGetLastError());
}

// cuBLAS is column-major: the row-major C = A·B is the column-major Cᵀ = Bᵀ·Aᵀ, so B goes first.
void matmul_cublas(cublasContext* handle, GemmPrecision precision, float* c, const void* a,
                   const void* b, int m, int n, int k, CUstream_st* stream) {
  const auto types = cublas_types(precision);
  const float alpha = 1.0f, beta = 0.0f;
  // Only when it changes: cublasSetStream also resets the handle's workspace, which cuBLAS would
  // then allocate again inside a timed (possibly gated) call.
  cudaStream_t current = nullptr;
  CUBLAS_CHECK(cublasGetStream(handle, &current));
  if (current != stream) CUBLAS_CHECK(cublasSetStream(handle, stream));
  CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, types.input, n, a,
                            types.input, k, &beta, c, CUDA_R_32F, n, types.compute,
                            CUBLAS_GEMM_DEFAULT));
}

}  // namespace offloadbench::gpu
