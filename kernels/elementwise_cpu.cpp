// CPU twins of kernels/elementwise.cu: OpenMP loops with a static schedule, so each thread streams one
// contiguous chunk (the same chunk it first-touched when the caller initialised with the same threads).
#include "kernels/elementwise.h"

#include <cstdint>

namespace offloadbench::cpu {

// OpenMP wants a signed loop index; sizes go up to 2^28 and beyond, so 64-bit. With one thread
// the if clause skips the OpenMP runtime altogether: cpu_1t is a plain loop.
using Index = std::int64_t;

template <typename T>
void copy(T* c, const T* a, std::size_t n, int threads) {
#pragma omp parallel for simd if (threads > 1) num_threads(threads) schedule(static)
  for (Index i = 0; i < static_cast<Index>(n); ++i) c[i] = a[i];
}

template <typename T>
void scale(T* b, const T* c, T scalar, std::size_t n, int threads) {
#pragma omp parallel for simd if (threads > 1) num_threads(threads) schedule(static)
  for (Index i = 0; i < static_cast<Index>(n); ++i) b[i] = scalar * c[i];
}

template <typename T>
void add(T* c, const T* a, const T* b, std::size_t n, int threads) {
#pragma omp parallel for simd if (threads > 1) num_threads(threads) schedule(static)
  for (Index i = 0; i < static_cast<Index>(n); ++i) c[i] = a[i] + b[i];
}

template <typename T>
void triad(T* a, const T* b, const T* c, T scalar, std::size_t n, int threads) {
#pragma omp parallel for simd if (threads > 1) num_threads(threads) schedule(static)
  for (Index i = 0; i < static_cast<Index>(n); ++i) a[i] = b[i] + scalar * c[i];
}

template <typename T>
void dot(double* sum, const T* a, const T* b, std::size_t n, int threads) {
  double total = 0;
#pragma omp parallel for simd if (threads > 1) num_threads(threads) schedule(static) reduction(+ : total)
  for (Index i = 0; i < static_cast<Index>(n); ++i) total += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  *sum = total;
}

template <typename T>
void add_scalar(T* y, const T* x, T scalar, std::size_t n, int threads) {
#pragma omp parallel for simd if (threads > 1) num_threads(threads) schedule(static)
  for (Index i = 0; i < static_cast<Index>(n); ++i) y[i] = x[i] + scalar;
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
