// CUDA halves of kernels/elementwise.h: one grid-stride kernel for every op (and one for
// reductions), the twin of the CPU loop in elementwise_cpu.cpp, in two widths: one element per
// thread per step (every access coalesced), or four (16-byte accesses: fewer, wider memory
// transactions, as BabelStream's four elements a thread). The grid is capped so that a 2^28-element
// array still launches (each thread then takes a few steps).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/cuda_check.h"
#include "kernels/elementwise.h"

namespace offloadbench::gpu {

namespace {

constexpr int kBlockSize = 256;
constexpr std::size_t kMaxBlocks = 1u << 20;
constexpr unsigned kReductionBlocks =
    1024;  // partial sums per launch: enough blocks to fill any current GPU

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(
      std::clamp<std::size_t>((n + kBlockSize - 1) / kBlockSize, 1, kMaxBlocks));
}

__device__ std::size_t first_index() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ std::size_t grid_stride() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

// Four consecutive elements, loaded and stored as one 16-byte-aligned piece (two for double).
template <typename T>
struct alignas(16) Four {
  T v[4];
};

template <typename T>
bool four_aligned(const T* p) {
  return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % alignof(Four<T>) == 0;
}

// ---- CUDA kernels ----
// TwoInputs is Op::info.inputs == 2, passed from the host (the info table is host data); y may be
// null otherwise and is never read then.

template <typename Op, bool TwoInputs, typename T>
__global__ void map_kernel(T* z, const T* x, const T* y, T a, T b, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += grid_stride())
    z[i] = Op::apply(x[i], TwoInputs ? y[i] : T(0), a, b);
}

// Four elements a thread per step over the first n/4·4, then the tail one a thread.
template <typename Op, bool TwoInputs, typename T>
__global__ void map_four_kernel(T* z, const T* x, const T* y, T a, T b, std::size_t n) {
  const std::size_t fours = n / 4;
  auto* z4 = reinterpret_cast<Four<T>*>(z);
  const auto* x4 = reinterpret_cast<const Four<T>*>(x);
  const auto* y4 = reinterpret_cast<const Four<T>*>(y);
  for (std::size_t i = first_index(); i < fours; i += grid_stride()) {
    const Four<T> xs = x4[i];
    Four<T> ys{}, out;
    if (TwoInputs) ys = y4[i];
#pragma unroll
    for (int q = 0; q < 4; ++q) out.v[q] = Op::apply(xs.v[q], ys.v[q], a, b);
    z4[i] = out;
  }
  for (std::size_t i = 4 * fours + first_index(); i < n; i += grid_stride())
    z[i] = Op::apply(x[i], TwoInputs ? y[i] : T(0), a, b);
}

// The block's sum of `mine` into *sum: a shared-memory tree, one atomicAdd per block.
__device__ void add_block_sum(double* sum, double mine) {
  __shared__ double partial[kBlockSize];
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (int half = kBlockSize / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sum, partial[0]);
}

template <typename Op, bool TwoInputs, typename T>
__global__ void sum_four_kernel(double* sum, const T* x, const T* y, T a, T b, std::size_t n) {
  const std::size_t fours = n / 4;
  const auto* x4 = reinterpret_cast<const Four<T>*>(x);
  const auto* y4 = reinterpret_cast<const Four<T>*>(y);
  double mine = 0;
  for (std::size_t i = first_index(); i < fours; i += grid_stride()) {
    const Four<T> xs = x4[i];
    Four<T> ys{};
    if (TwoInputs) ys = y4[i];
#pragma unroll
    for (int q = 0; q < 4; ++q) mine += Op::apply(xs.v[q], ys.v[q], a, b);
  }
  for (std::size_t i = 4 * fours + first_index(); i < n; i += grid_stride())
    mine += Op::apply(x[i], TwoInputs ? y[i] : T(0), a, b);
  add_block_sum(sum, mine);
}

// Each thread sums its grid-stride terms in double, the block reduces in shared memory, and one
// thread per block adds the block's sum to *sum (which the launcher zeroed).
template <typename Op, bool TwoInputs, typename T>
__global__ void sum_kernel(double* sum, const T* x, const T* y, T a, T b, std::size_t n) {
  double mine = 0;
  for (std::size_t i = first_index(); i < n; i += grid_stride())
    mine += Op::apply(x[i], TwoInputs ? y[i] : T(0), a, b);
  add_block_sum(sum, mine);
}

// ---- kernel launcher ----

template <typename Op, ElementwiseKernel Kernel, typename T>
void launch(const ElementwiseArgs<T>& p, CUstream_st* stream) {
  constexpr bool two_inputs = Op::info.inputs == 2;
  const bool four = Kernel == ElementwiseKernel::four_per_thread && four_aligned(p.x) &&
                    four_aligned(p.y) && (!Op::info.writes_array || four_aligned(p.z));
  const unsigned blocks = blocks_for(four ? (p.n + 3) / 4 : p.n);
  if constexpr (Op::info.writes_array) {
    if (four)
      map_four_kernel<Op, two_inputs>
          <<<blocks, kBlockSize, 0, stream>>>(p.z, p.x, p.y, p.a, p.b, p.n);
    else
      map_kernel<Op, two_inputs><<<blocks, kBlockSize, 0, stream>>>(p.z, p.x, p.y, p.a, p.b, p.n);
  } else {
    CUDA_CHECK(cudaMemsetAsync(p.sum, 0, sizeof(double), stream));
    const unsigned capped = std::min(blocks, kReductionBlocks);
    if (four)
      sum_four_kernel<Op, two_inputs>
          <<<capped, kBlockSize, 0, stream>>>(p.sum, p.x, p.y, p.a, p.b, p.n);
    else
      sum_kernel<Op, two_inputs><<<capped, kBlockSize, 0, stream>>>(p.sum, p.x, p.y, p.a, p.b, p.n);
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

template <typename T>
ElementwiseFunction<T> elementwise(ElementwiseOp op, ElementwiseKernel kernel) {
  static constexpr auto one = per_elementwise_op([](auto o) -> ElementwiseFunction<T> {
    return &launch<decltype(o), ElementwiseKernel::one_per_thread, T>;
  });
  static constexpr auto four = per_elementwise_op([](auto o) -> ElementwiseFunction<T> {
    return &launch<decltype(o), ElementwiseKernel::four_per_thread, T>;
  });
  return (kernel == ElementwiseKernel::four_per_thread ? four : one)
      .at(static_cast<std::size_t>(op));
}

template ElementwiseFunction<float> elementwise<float>(ElementwiseOp, ElementwiseKernel);
template ElementwiseFunction<double> elementwise<double>(ElementwiseOp, ElementwiseKernel);

}  // namespace offloadbench::gpu
