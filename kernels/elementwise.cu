// CUDA halves of kernels/elementwise.h: one grid-stride kernel for every op (and one for reductions),
// the twin of the CPU loop in elementwise_cpu.cpp. One element per thread per step keeps every access
// coalesced; the grid is capped so that a 2^28-element array still launches (each thread then takes a
// few steps).
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/elementwise.h"

namespace offloadbench::gpu {

namespace {

constexpr int kBlockSize = 256;
constexpr std::size_t kMaxBlocks = 1u << 20;
constexpr unsigned kReductionBlocks = 1024;  // partial sums per launch: enough blocks to fill any current GPU

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + kBlockSize - 1) / kBlockSize, 1, kMaxBlocks));
}

__device__ std::size_t first_index() { return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ std::size_t grid_stride() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

// ---- CUDA kernels ----
// TwoInputs is Op::info.inputs == 2, passed from the host (the info table is host data); y may be null
// otherwise and is never read then.

template <typename Op, bool TwoInputs, typename T>
__global__ void map_kernel(T* z, const T* x, const T* y, T a, T b, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += grid_stride()) z[i] = Op::apply(x[i], TwoInputs ? y[i] : T(0), a, b);
}

// Each thread sums its grid-stride terms in double, the block reduces in shared memory, and one thread
// per block adds the block's sum to *sum (which the launcher zeroed).
template <typename Op, bool TwoInputs, typename T>
__global__ void sum_kernel(double* sum, const T* x, const T* y, T a, T b, std::size_t n) {
  __shared__ double partial[kBlockSize];
  double mine = 0;
  for (std::size_t i = first_index(); i < n; i += grid_stride()) mine += Op::apply(x[i], TwoInputs ? y[i] : T(0), a, b);
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (int half = kBlockSize / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sum, partial[0]);
}

// ---- kernel launcher ----

template <typename Op, typename T>
void launch(const ElementwiseArgs<T>& p, CUstream_st* stream) {
  constexpr bool two_inputs = Op::info.inputs == 2;
  if constexpr (Op::info.writes_array) {
    map_kernel<Op, two_inputs><<<blocks_for(p.n), kBlockSize, 0, stream>>>(p.z, p.x, p.y, p.a, p.b, p.n);
  } else {
    CUDA_CHECK(cudaMemsetAsync(p.sum, 0, sizeof(double), stream));
    const unsigned blocks = std::min(blocks_for(p.n), kReductionBlocks);
    sum_kernel<Op, two_inputs><<<blocks, kBlockSize, 0, stream>>>(p.sum, p.x, p.y, p.a, p.b, p.n);
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

template <typename T>
ElementwiseFunction<T> elementwise(ElementwiseOp op) {
  static constexpr auto table = per_elementwise_op([](auto o) -> ElementwiseFunction<T> { return &launch<decltype(o), T>; });
  return table.at(static_cast<std::size_t>(op));
}

template ElementwiseFunction<float> elementwise<float>(ElementwiseOp);
template ElementwiseFunction<double> elementwise<double>(ElementwiseOp);

}  // namespace offloadbench::gpu
