// CPU twins of kernels/elementwise.cu, one loop for every op: a simd loop over one contiguous range,
// compiled for AVX-512, AVX2 and SSE2 and picked at load time (kernels/cpu_vector.h); with more than
// one thread (and at least kElementwiseParallelGrain elements) each OpenMP thread streams one
// contiguous chunk (the chunk it first-touched when the caller initialised with the same threads and a
// static schedule). With one thread no OpenMP runtime is involved.
#include <omp.h>

#include <cstdint>

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
  if constexpr (Op::info.writes_array)
    on_threads(p.n, threads, [&](Index b, Index e) { return map_range<Op>(p.z, p.x, p.y, p.a, p.b, b, e), 0.0; });
  else
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
