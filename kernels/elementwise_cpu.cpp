// CPU twins of kernels/elementwise.cu, one loop for every op: a simd loop over one contiguous range,
// compiled for AVX-512, AVX2 and SSE2 and picked at load time (kernels/cpu_vector.h); with more than
// one thread (and at least kElementwiseParallelGrain elements) each OpenMP thread streams one
// contiguous chunk (the chunk it first-touched when the caller initialised with the same threads and a
// static schedule). With one thread no OpenMP runtime is involved.
#include <omp.h>

#include <cstdint>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OFFLOADBENCH_STREAMING_STORES 1
#endif

#include "kernels/cpu_vector.h"
#include "kernels/elementwise.h"

namespace offloadbench::cpu {

namespace {

// Sizes go up to 2^28 and beyond, so 64-bit indices.
using Index = std::int64_t;

// z[i] = apply(x[i], y[i]) over [begin, end). Base pointers and a range, not offset pointers: y may be
// null (one-input ops), and the conditional never reads it then.
template <typename Op, typename T>
OFFLOADBENCH_VECTOR_CLONES void map_range(T* __restrict z, const T* __restrict x, const T* __restrict y, T a, T b,
                                          Index begin, Index end) {
#pragma omp simd
  for (Index i = begin; i < end; ++i) z[i] = Op::apply(x[i], Op::info.inputs == 2 ? y[i] : T(0), a, b);
}

#if OFFLOADBENCH_STREAMING_STORES
// The same with AVX-512 non-temporal stores, for outputs larger than the caches: an ordinary store
// first reads the line it writes (read-for-ownership), so z = x + y moves four arrays, not three. Measured
// on a 2-vCPU EPYC (Zen 4), one thread, z = x + y: 16Mi floats 26-28 GB/s -> 37-39, 4Mi 34-40 -> 53-56,
// 1Mi 85 -> 79-82 (in cache: not used there). GCC 12 ignores `omp simd nontemporal`, hence intrinsics;
// each 64-byte block is formed by the op's simd loop, then streamed.
template <typename Op, typename T>
__attribute__((target("avx512f"))) void map_range_streaming(T* __restrict z, const T* __restrict x,
                                                            const T* __restrict y, T a, T b, Index begin, Index end) {
  constexpr Index kLanes = 64 / sizeof(T);
  const auto apply_at = [&](Index i) { return Op::apply(x[i], Op::info.inputs == 2 ? y[i] : T(0), a, b); };
  Index i = begin;
  for (; i < end && reinterpret_cast<std::uintptr_t>(z + i) % 64 != 0; ++i) z[i] = apply_at(i);
  for (; i + kLanes <= end; i += kLanes) {
    alignas(64) T block[kLanes];
#pragma omp simd
    for (Index l = 0; l < kLanes; ++l) block[l] = Op::apply(x[i + l], Op::info.inputs == 2 ? y[i + l] : T(0), a, b);
    if constexpr (sizeof(T) == 4)
      _mm512_stream_ps(reinterpret_cast<float*>(z + i), _mm512_load_ps(reinterpret_cast<const float*>(block)));
    else
      _mm512_stream_pd(reinterpret_cast<double*>(z + i), _mm512_load_pd(reinterpret_cast<const double*>(block)));
  }
  for (; i < end; ++i) z[i] = apply_at(i);
  _mm_sfence();  // streaming stores are weakly ordered: visible before the call returns
}
#endif

// Outputs at least this large (bytes) are streamed where the CPU can (above: in-cache sizes lose).
constexpr std::size_t kStreamingStoreBytes = std::size_t{8} << 20;

template <typename Op, typename T>
void map_range_for(bool streaming, T* z, const T* x, const T* y, T a, T b, Index begin, Index end) {
#if OFFLOADBENCH_STREAMING_STORES
  if (streaming) return map_range_streaming<Op>(z, x, y, a, b, begin, end);
#endif
  (void)streaming;
  map_range<Op>(z, x, y, a, b, begin, end);
}

bool streams_output(std::size_t bytes) {
#if OFFLOADBENCH_STREAMING_STORES
  static const bool has_avx512 = __builtin_cpu_supports("avx512f");
  return has_avx512 && bytes >= kStreamingStoreBytes;
#else
  (void)bytes;
  return false;
#endif
}

// Σ apply(x[i], y[i]) over [begin, end), in double.
template <typename Op, typename T>
OFFLOADBENCH_VECTOR_CLONES double sum_range(const T* __restrict x, const T* __restrict y, T a, T b, Index begin,
                                            Index end) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (Index i = begin; i < end; ++i) sum += Op::apply(x[i], Op::info.inputs == 2 ? y[i] : T(0), a, b);
  return sum;
}

// Runs range(begin, end) over [0, n) on `threads` threads, one contiguous chunk each, and returns the sum
// of what the calls return (a reduction's partial sums; 0 for the other ops).
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
    on_threads(p.n, threads,
               [&](Index b, Index e) { return map_range_for<Op>(streaming, p.z, p.x, p.y, p.a, p.b, b, e), 0.0; });
  } else
    *p.sum = on_threads(p.n, threads, [&](Index b, Index e) { return sum_range<Op>(p.x, p.y, p.a, p.b, b, e); });
}

}  // namespace

template <typename T>
ElementwiseFunction<T> elementwise(ElementwiseOp op) {
  static constexpr auto table = per_elementwise_op([](auto o) -> ElementwiseFunction<T> { return &run<decltype(o), T>; });
  return table.at(static_cast<std::size_t>(op));
}

template ElementwiseFunction<float> elementwise<float>(ElementwiseOp);
template ElementwiseFunction<double> elementwise<double>(ElementwiseOp);

}  // namespace offloadbench::cpu
