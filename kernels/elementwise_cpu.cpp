// CPU twins of kernels/elementwise.cu. Each op is a simd loop over one contiguous range, compiled for
// AVX-512, AVX2 and SSE2 and picked at load time (kernels/cpu_vector.h); with more than one thread each
// OpenMP thread streams one contiguous chunk (the chunk it first-touched when the caller initialised
// with the same threads and a static schedule). With one thread no OpenMP runtime is involved.
#include "kernels/elementwise.h"

#include <omp.h>

#include <cstdint>

#include "kernels/cpu_vector.h"

namespace offloadbench::cpu {

namespace {

// Sizes go up to 2^28 and beyond, so 64-bit indices.
using Index = std::int64_t;

template <typename T>
OFFLOADBENCH_VECTOR_CLONES void copy_range(T* __restrict c, const T* __restrict a, Index n) {
#pragma omp simd
  for (Index i = 0; i < n; ++i) c[i] = a[i];
}

template <typename T>
OFFLOADBENCH_VECTOR_CLONES void scale_range(T* __restrict b, const T* __restrict c, T scalar, Index n) {
#pragma omp simd
  for (Index i = 0; i < n; ++i) b[i] = scalar * c[i];
}

template <typename T>
OFFLOADBENCH_VECTOR_CLONES void add_range(T* __restrict c, const T* __restrict a, const T* __restrict b, Index n) {
#pragma omp simd
  for (Index i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

template <typename T>
OFFLOADBENCH_VECTOR_CLONES void triad_range(T* __restrict a, const T* __restrict b, const T* __restrict c, T scalar,
                                            Index n) {
#pragma omp simd
  for (Index i = 0; i < n; ++i) a[i] = b[i] + scalar * c[i];
}

template <typename T>
OFFLOADBENCH_VECTOR_CLONES double dot_range(const T* __restrict a, const T* __restrict b, Index n) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (Index i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return sum;
}

template <typename T>
OFFLOADBENCH_VECTOR_CLONES void add_scalar_range(T* __restrict y, const T* __restrict x, T scalar, Index n) {
#pragma omp simd
  for (Index i = 0; i < n; ++i) y[i] = x[i] + scalar;
}

// Runs range(begin, end) over [0, n) on `threads` threads, one contiguous chunk each, and returns the sum
// of what the calls return (the dot product's partial sums; 0 for the other ops).
template <typename Range>
double on_threads(std::size_t n, int threads, Range range) {
  const auto count = static_cast<Index>(n);
  if (threads <= 1) return range(Index{0}, count);
  double total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    const Index t = omp_get_thread_num(), team = omp_get_num_threads();
    total += range(count * t / team, count * (t + 1) / team);
  }
  return total;
}

}  // namespace

template <typename T>
void copy(T* c, const T* a, std::size_t n, int threads) {
  on_threads(n, threads, [&](Index b, Index e) { return copy_range(c + b, a + b, e - b), 0.0; });
}

template <typename T>
void scale(T* b, const T* c, T scalar, std::size_t n, int threads) {
  on_threads(n, threads, [&](Index i, Index e) { return scale_range(b + i, c + i, scalar, e - i), 0.0; });
}

template <typename T>
void add(T* c, const T* a, const T* b, std::size_t n, int threads) {
  on_threads(n, threads, [&](Index i, Index e) { return add_range(c + i, a + i, b + i, e - i), 0.0; });
}

template <typename T>
void triad(T* a, const T* b, const T* c, T scalar, std::size_t n, int threads) {
  on_threads(n, threads, [&](Index i, Index e) { return triad_range(a + i, b + i, c + i, scalar, e - i), 0.0; });
}

template <typename T>
void dot(double* sum, const T* a, const T* b, std::size_t n, int threads) {
  *sum = on_threads(n, threads, [&](Index i, Index e) { return dot_range(a + i, b + i, e - i); });
}

template <typename T>
void add_scalar(T* y, const T* x, T scalar, std::size_t n, int threads) {
  on_threads(n, threads, [&](Index i, Index e) { return add_scalar_range(y + i, x + i, scalar, e - i), 0.0; });
}

#define OFFLOADBENCH_ELEMENTWISE_CPU(T)                                        \
  template void copy<T>(T*, const T*, std::size_t, int);                     \
  template void scale<T>(T*, const T*, T, std::size_t, int);                 \
  template void add<T>(T*, const T*, const T*, std::size_t, int);            \
  template void triad<T>(T*, const T*, const T*, T, std::size_t, int);       \
  template void dot<T>(double*, const T*, const T*, std::size_t, int);       \
  template void add_scalar<T>(T*, const T*, T, std::size_t, int);
OFFLOADBENCH_ELEMENTWISE_CPU(float)
OFFLOADBENCH_ELEMENTWISE_CPU(double)
#undef OFFLOADBENCH_ELEMENTWISE_CPU

}  // namespace offloadbench::cpu
