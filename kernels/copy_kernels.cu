// GPU half of the transfer family's kernels (see copy_kernels.h). The copy is a grid-stride loop
// of 16-byte words with cache-global loads and stores (__ldcg/__stcg, as nvbandwidth's copy
// kernel); the uncached copy refetches every load and writes through, so no call is served by L2.
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/copy_kernels.h"

namespace offloadbench {

// ---- CUDA kernels ----
namespace {
// kUncached: refetching loads and write-through stores (see copy_bytes_uncached).
template <bool kUncached>
__global__ void copy_words_kernel(uint4* dst, const uint4* src, std::uint64_t words) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < words; i += stride) {
    if constexpr (kUncached)
      __stwt(dst + i, __ldcv(src + i));
    else
      __stcg(dst + i, __ldcg(src + i));
  }
}

template <bool kUncached>
__global__ void copy_bytes_kernel(unsigned char* dst, const unsigned char* src,
                                  std::uint64_t bytes) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < bytes; i += stride) {
    if constexpr (kUncached) {
      *static_cast<volatile unsigned char*>(dst + i) =
          *static_cast<const volatile unsigned char*>(src + i);
    } else {
      dst[i] = src[i];
    }
  }
}

__global__ void sum_words_kernel(unsigned long long* sum, const std::uint32_t* words,
                                 std::uint64_t n) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    local += words[i];
  for (int offset = 16; offset > 0; offset /= 2)
    local += __shfl_down_sync(0xffffffffu, local, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, local);
}

__global__ void pointer_chase_kernel(std::uint64_t* position, const std::uint64_t* next,
                                     std::uint64_t steps) {
  const auto* slots = reinterpret_cast<const unsigned long long*>(next);  // __ldcv's overload
  unsigned long long at = *position;
  for (std::uint64_t s = 0; s < steps; ++s) at = __ldcv(slots + at);
  *position = at;
}

constexpr unsigned kThreads = 256;

unsigned blocks_for(std::uint64_t items, std::uint64_t max_blocks) {
  return static_cast<unsigned>(
      std::min<std::uint64_t>((items + kThreads - 1) / kThreads, max_blocks));
}

// Words where both pointers are 16-byte aligned, single bytes for the rest.
template <bool kUncached>
void launch_copy(void* dst, const void* src, std::uint64_t bytes, CUstream_st* stream) {
  if (bytes == 0) return;
  const bool aligned = reinterpret_cast<std::uintptr_t>(dst) % 16 == 0 &&
                       reinterpret_cast<std::uintptr_t>(src) % 16 == 0;
  const std::uint64_t words = aligned ? bytes / 16 : 0;
  if (words > 0) {
    copy_words_kernel<kUncached><<<blocks_for(words, 1u << 16), kThreads, 0, stream>>>(
        static_cast<uint4*>(dst), static_cast<const uint4*>(src), words);
    CUDA_CHECK(cudaGetLastError());
  }
  const std::uint64_t done = words * 16;
  if (done < bytes) {
    copy_bytes_kernel<kUncached><<<blocks_for(bytes - done, 1u << 16), kThreads, 0, stream>>>(
        static_cast<unsigned char*>(dst) + done, static_cast<const unsigned char*>(src) + done,
        bytes - done);
    CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

// ---- kernel launchers ----
void copy_bytes(void* dst, const void* src, std::uint64_t bytes, CUstream_st* stream) {
  launch_copy<false>(dst, src, bytes, stream);
}

void copy_bytes_uncached(void* dst, const void* src, std::uint64_t bytes, CUstream_st* stream) {
  launch_copy<true>(dst, src, bytes, stream);
}

void sum_words(std::uint64_t* sum, const std::uint32_t* words, std::uint64_t n,
               CUstream_st* stream) {
  static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
  CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(*sum), stream));
  if (n == 0) return;
  sum_words_kernel<<<blocks_for(n, 2048), kThreads, 0, stream>>>(
      reinterpret_cast<unsigned long long*>(sum), words, n);
  CUDA_CHECK(cudaGetLastError());
}

void pointer_chase(std::uint64_t* position, const std::uint64_t* next, std::uint64_t steps,
                   CUstream_st* stream) {
  pointer_chase_kernel<<<1, 1, 0, stream>>>(position, next, steps);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace offloadbench
