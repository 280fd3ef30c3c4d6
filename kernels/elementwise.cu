// CUDA halves of kernels/elementwise.h: one grid-stride kernel per op, the twin of the CPU loop in
// elementwise_cpu.cpp. One element per thread per step keeps every access coalesced; the grid is
// capped so that a 2^28-element array still launches (each thread then takes a few steps).
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/elementwise.h"

namespace offloadbench::gpu {

namespace {

constexpr int kBlockSize = 256;
constexpr std::size_t kMaxBlocks = 1u << 20;
constexpr int kDotBlocks = 1024;  // partial sums per launch: enough blocks to fill any current GPU

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + kBlockSize - 1) / kBlockSize, 1, kMaxBlocks));
}

__device__ std::size_t first_index() { return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ std::size_t grid_stride() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

// ---- CUDA kernels ----

template <typename T>
__global__ void copy_kernel(T* c, const T* a, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += grid_stride()) c[i] = a[i];
}

template <typename T>
__global__ void scale_kernel(T* b, const T* c, T scalar, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += grid_stride()) b[i] = scalar * c[i];
}

template <typename T>
__global__ void add_kernel(T* c, const T* a, const T* b, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += grid_stride()) c[i] = a[i] + b[i];
}

template <typename T>
__global__ void triad_kernel(T* a, const T* b, const T* c, T scalar, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += grid_stride()) a[i] = b[i] + scalar * c[i];
}

// Each thread sums its grid-stride elements in double, the block reduces in shared memory, and one
// thread per block adds the block's sum to *sum (which the launcher zeroed).
template <typename T>
__global__ void dot_kernel(double* sum, const T* a, const T* b, std::size_t n) {
  __shared__ double partial[kBlockSize];
  double mine = 0;
  for (std::size_t i = first_index(); i < n; i += grid_stride())
    mine += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (int half = kBlockSize / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sum, partial[0]);
}

template <typename T>
__global__ void add_scalar_kernel(T* y, const T* x, T scalar, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += grid_stride()) y[i] = x[i] + scalar;
}

}  // namespace

// ---- kernel launchers ----

template <typename T>
void copy(T* c, const T* a, std::size_t n, CUstream_st* stream) {
  copy_kernel<<<blocks_for(n), kBlockSize, 0, stream>>>(c, a, n);
  CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void scale(T* b, const T* c, T scalar, std::size_t n, CUstream_st* stream) {
  scale_kernel<<<blocks_for(n), kBlockSize, 0, stream>>>(b, c, scalar, n);
  CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void add(T* c, const T* a, const T* b, std::size_t n, CUstream_st* stream) {
  add_kernel<<<blocks_for(n), kBlockSize, 0, stream>>>(c, a, b, n);
  CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void triad(T* a, const T* b, const T* c, T scalar, std::size_t n, CUstream_st* stream) {
  triad_kernel<<<blocks_for(n), kBlockSize, 0, stream>>>(a, b, c, scalar, n);
  CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void dot(double* sum, const T* a, const T* b, std::size_t n, CUstream_st* stream) {
  CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(double), stream));
  const unsigned blocks = std::min<unsigned>(blocks_for(n), kDotBlocks);
  dot_kernel<<<blocks, kBlockSize, 0, stream>>>(sum, a, b, n);
  CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void add_scalar(T* y, const T* x, T scalar, std::size_t n, CUstream_st* stream) {
  add_scalar_kernel<<<blocks_for(n), kBlockSize, 0, stream>>>(y, x, scalar, n);
  CUDA_CHECK(cudaGetLastError());
}

#define OFFLOADBENCH_ELEMENTWISE_GPU(T)                                                 \
  template void copy<T>(T*, const T*, std::size_t, CUstream_st*);                     \
  template void scale<T>(T*, const T*, T, std::size_t, CUstream_st*);                 \
  template void add<T>(T*, const T*, const T*, std::size_t, CUstream_st*);            \
  template void triad<T>(T*, const T*, const T*, T, std::size_t, CUstream_st*);       \
  template void dot<T>(double*, const T*, const T*, std::size_t, CUstream_st*);       \
  template void add_scalar<T>(T*, const T*, T, std::size_t, CUstream_st*);
OFFLOADBENCH_ELEMENTWISE_GPU(float)
OFFLOADBENCH_ELEMENTWISE_GPU(double)
#undef OFFLOADBENCH_ELEMENTWISE_GPU

}  // namespace offloadbench::gpu
