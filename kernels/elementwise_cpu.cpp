// CPU twins of kernels/elementwise.cu, one loop for every op: a simd loop over one contiguous
// range, compiled for AVX-512, AVX2 and SSE2 and picked at load time (kernels/cpu_vector.h); with
// more than one thread (and at least kElementwiseParallelGrain elements) each OpenMP thread streams
// one contiguous chunk (the chunk it first-touched when the caller initialised with the same
// threads and a static schedule). With one thread no OpenMP runtime is involved.
#include <omp.h>

#include <cstdint>
#include <type_traits>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OFFLOADBENCH_STREAMING_STORES 1
#endif

#include "kernels/cpu_vector.h"
#include "kernels/elementwise.h"
#include "kernels/tolerance.h"

namespace offloadbench::cpu {

namespace {

// Sizes go up to 2^28 and beyond, so 64-bit indices.
using Index = std::int64_t;

// z[i] = apply(x[i], y[i]) over [begin, end). Base pointers and a range, not offset pointers: y may
// be null (one-input ops), and the conditional never reads it then.
template <typename Op, typename T>
OFFLOADBENCH_VECTOR_CLONES void map_range(T* __restrict z, const T* __restrict x,
                                          const T* __restrict y, T a, T b, Index begin, Index end) {
#pragma omp simd
  for (Index i = begin; i < end; ++i)
    z[i] = Op::apply(x[i], Op::info.inputs == 2 ? y[i] : T(0), a, b);
}

#if OFFLOADBENCH_STREAMING_STORES
// Outputs larger than the caches are written with non-temporal stores: an ordinary store first
// reads the line it writes (read-for-ownership), so z = x + y moves four arrays, not three. GCC 12
// ignores `omp simd nontemporal`, hence intrinsics, in one function per vector width (an intrinsic
// cannot be inlined into a function compiled for a lesser target); each vector's worth of z is
// formed by the op's simd loop in a register-sized block, then streamed. Streaming each block as it
// is formed matters: a variant that filled a 4 KiB block in L1 and then streamed it out ran no
// faster than ordinary stores, a quarter slower than streaming each vector
// (lab/records/cpu-baseline.md).

// z[i] for i from begin up to the first index whose address is a multiple of `alignment`; returns
// it.
template <typename Op, typename T>
[[gnu::always_inline]] inline Index map_until_aligned(T* z, const T* x, const T* y, T a, T b,
                                                      Index begin, Index end,
                                                      std::uintptr_t alignment) {
  Index i = begin;
  for (; i < end && reinterpret_cast<std::uintptr_t>(z + i) % alignment != 0; ++i)
    z[i] = Op::apply(x[i], Op::info.inputs == 2 ? y[i] : T(0), a, b);
  return i;
}

template <typename Op, typename T, Index kLanes>
[[gnu::always_inline]] inline void fill_block(T* __restrict block, const T* __restrict x,
                                              const T* __restrict y, T a, T b, Index i) {
#pragma omp simd
  for (Index l = 0; l < kLanes; ++l)
    block[l] = Op::apply(x[i + l], Op::info.inputs == 2 ? y[i + l] : T(0), a, b);
}

// AVX-512 streaming stores give one thread's z = x + y 40-50% more bandwidth at 4Mi-16Mi floats.
// A copy goes four pages at a time, a line of each in turn, as glibc's memcpy streams large copies
// (large_memcpy_4x): 11-13% faster at 64Mi, 3% slower at 2Mi-4Mi. Add and triad gain nothing from
// that order (up to 5% slower), so they stream linearly (lab/records/cpu-baseline.md).
template <typename Op, typename T>
__attribute__((target("avx512f"), always_inline)) inline void stream_vector_avx512(
    T* __restrict z, const T* __restrict x, const T* __restrict y, T a, T b, Index i) {
  constexpr Index kLanes = 64 / sizeof(T);
  alignas(64) T block[kLanes];
  fill_block<Op, T, kLanes>(block, x, y, a, b, i);
  _mm512_stream_si512(reinterpret_cast<__m512i*>(z + i),
                      _mm512_load_si512(reinterpret_cast<const __m512i*>(block)));
}

template <typename Op, typename T>
__attribute__((target("avx512f"))) void map_range_streaming_avx512(T* __restrict z,
                                                                   const T* __restrict x,
                                                                   const T* __restrict y, T a, T b,
                                                                   Index begin, Index end) {
  constexpr Index kLanes = 64 / sizeof(T), kPage = 4096 / sizeof(T), kPages = 4;
  Index i = map_until_aligned<Op>(z, x, y, a, b, begin, end, 64);
  if constexpr (std::is_same_v<Op, CopyOp>)
    for (; i + kPages * kPage <= end; i += kPages * kPage)
      for (Index line = 0; line < kPage; line += kLanes)
        for (Index page = 0; page < kPages; ++page)
          stream_vector_avx512<Op>(z, x, y, a, b, i + page * kPage + line);
  for (; i + kLanes <= end; i += kLanes) stream_vector_avx512<Op>(z, x, y, a, b, i);
  map_range<Op>(z, x, y, a, b, i, end);  // the tail
  _mm_sfence();  // streaming stores are weakly ordered: visible before the call returns
}

// The same with AVX (32-byte) stores, for CPUs without AVX-512 (Zen 3, many Xeons).
template <typename Op, typename T>
__attribute__((target("avx2"))) void map_range_streaming_avx2(T* __restrict z,
                                                              const T* __restrict x,
                                                              const T* __restrict y, T a, T b,
                                                              Index begin, Index end) {
  constexpr Index kLanes = 32 / sizeof(T);
  Index i = map_until_aligned<Op>(z, x, y, a, b, begin, end, 32);
  for (; i + kLanes <= end; i += kLanes) {
    alignas(32) T block[kLanes];
    fill_block<Op, T, kLanes>(block, x, y, a, b, i);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(z + i),
                        _mm256_load_si256(reinterpret_cast<const __m256i*>(block)));
  }
  map_range<Op>(z, x, y, a, b, i, end);
  _mm_sfence();
}

enum class StreamingStores { none, avx2, avx512 };
StreamingStores streaming_stores_of_this_cpu() {
  static const StreamingStores level = __builtin_cpu_supports("avx512f") ? StreamingStores::avx512
                                       : __builtin_cpu_supports("avx2")  ? StreamingStores::avx2
                                                                         : StreamingStores::none;
  return level;
}
#endif

// Outputs at least this large (bytes) are streamed where the CPU can (below it they are in cache,
// where streaming is slower: z = x + y on 1Mi floats loses 4-7% on Zen 4).
constexpr std::size_t kStreamingStoreBytes = std::size_t{8} << 20;

template <typename Op, typename T>
void map_range_for(bool streaming, T* z, const T* x, const T* y, T a, T b, Index begin, Index end) {
#if OFFLOADBENCH_STREAMING_STORES
  if (streaming && streaming_stores_of_this_cpu() == StreamingStores::avx512)
    return map_range_streaming_avx512<Op>(z, x, y, a, b, begin, end);
  if (streaming && streaming_stores_of_this_cpu() == StreamingStores::avx2)
    return map_range_streaming_avx2<Op>(z, x, y, a, b, begin, end);
#endif
  (void)streaming;
  map_range<Op>(z, x, y, a, b, begin, end);
}

bool streams_output(std::size_t bytes) {
#if OFFLOADBENCH_STREAMING_STORES
  return streaming_stores_of_this_cpu() != StreamingStores::none && bytes >= kStreamingStoreBytes;
#else
  (void)bytes;
  return false;
#endif
}

// Σ apply(x[i], y[i]) over [begin, end), in double.
template <typename Op, typename T>
OFFLOADBENCH_VECTOR_CLONES double sum_range(const T* __restrict x, const T* __restrict y, T a, T b,
                                            Index begin, Index end) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (Index i = begin; i < end; ++i)
    sum += Op::apply(x[i], Op::info.inputs == 2 ? y[i] : T(0), a, b);
  return sum;
}

// dot on fp32 inputs, the way numpy's sdot runs it (independent vector accumulators, fp32 sums) but
// bounded: each lane sums kDotFp32TermsPerLane terms in fp32, then each block's lane sums are added
// in double, so the error stays a few fp32 roundings per term (tolerance.h) at any n. sum_range's
// double per term costs a conversion every 4 elements, which held it at 0.77 of sdot's rate in
// cache (Zen 3). GCC vectors of at most 32 bytes (one ymm; two xmm in the SSE2 clone): wider
// generic vectors, and arrays of accumulators, were kept on the stack by GCC 12.
using Floats8 = float __attribute__((vector_size(32)));
using Doubles4 = double __attribute__((vector_size(32)));

// sum += x[0..8) · y[0..8), lane by lane (by reference: a vector passed by value changes the ABI
// per clone).
[[gnu::always_inline]] inline void add_products8(Floats8& sum, const float* x, const float* y) {
  Floats8 xs, ys;
  __builtin_memcpy(&xs, x, sizeof xs);
  __builtin_memcpy(&ys, y, sizeof ys);
  sum += xs * ys;
}

OFFLOADBENCH_VECTOR_CLONES double dot_range_fp32(const float* __restrict x,
                                                 const float* __restrict y, Index begin,
                                                 Index end) {
  constexpr Index kLanes =
      8;  // 8 accumulators of 8 lanes: two loads per add keep a few adds in flight
  constexpr Index kBlock = kLanes * kDotFp32TermsPerLane;
  static_assert(kDotFp32TermsPerLane % 8 == 0);
  Doubles4 total_low = {},
           total_high = {};  // two ymm (a vector of 8 doubles was kept on the stack)
  Index i = begin;
  for (; i + kBlock <= end; i += kBlock) {
    Floats8 s0 = {}, s1 = {}, s2 = {}, s3 = {}, s4 = {}, s5 = {}, s6 = {}, s7 = {};
    for (Index j = i; j < i + kBlock; j += 8 * kLanes) {
      add_products8(s0, x + j, y + j);
      add_products8(s1, x + j + 8, y + j + 8);
      add_products8(s2, x + j + 16, y + j + 16);
      add_products8(s3, x + j + 24, y + j + 24);
      add_products8(s4, x + j + 32, y + j + 32);
      add_products8(s5, x + j + 40, y + j + 40);
      add_products8(s6, x + j + 48, y + j + 48);
      add_products8(s7, x + j + 56, y + j + 56);
    }
    const Floats8 block_sum = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
    total_low += __builtin_convertvector(__builtin_shufflevector(block_sum, block_sum, 0, 1, 2, 3),
                                         Doubles4);
    total_high += __builtin_convertvector(__builtin_shufflevector(block_sum, block_sum, 4, 5, 6, 7),
                                          Doubles4);
  }
  const Doubles4 total = total_low + total_high;
  double sum = (total[0] + total[1]) + (total[2] + total[3]);
  for (; i < end; ++i) sum += DotOp::apply(x[i], y[i], 0.0f, 0.0f);
  return sum;
}

// Runs range(begin, end) over [0, n) on `threads` threads, one contiguous chunk each, and returns
// the sum of what the calls return (a reduction's partial sums; 0 for the other ops).
template <typename Range>
double on_threads(std::size_t n, int threads, Range range) {
  const auto count = static_cast<Index>(n);
  if (threads <= 1 || n < kElementwiseParallelGrain) return range(Index{0}, count);
  double total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    const Index t = omp_get_thread_num(), team = omp_get_num_threads();
    total += range(count * t / team, count * (t + 1) / team);
  }
  return total;
}

template <typename Op, typename T>
void run(const ElementwiseArgs<T>& p, int threads) {
  if constexpr (Op::info.writes_array) {
    const bool streaming = streams_output(p.n * sizeof(T));
    on_threads(p.n, threads, [&](Index b, Index e) {
      return map_range_for<Op>(streaming, p.z, p.x, p.y, p.a, p.b, b, e), 0.0;
    });
  } else
    *p.sum = on_threads(p.n, threads, [&](Index b, Index e) {
      if constexpr (std::is_same_v<Op, DotOp> && std::is_same_v<T, float>)
        return dot_range_fp32(p.x, p.y, b, e);
      return sum_range<Op>(p.x, p.y, p.a, p.b, b, e);
    });
}

}  // namespace

template <typename T>
ElementwiseFunction<T> elementwise(ElementwiseOp op) {
  static constexpr auto table =
      per_elementwise_op([](auto o) -> ElementwiseFunction<T> { return &run<decltype(o), T>; });
  return table.at(static_cast<std::size_t>(op));
}

template ElementwiseFunction<float> elementwise<float>(ElementwiseOp);
template ElementwiseFunction<double> elementwise<double>(ElementwiseOp);

}  // namespace offloadbench::cpu
