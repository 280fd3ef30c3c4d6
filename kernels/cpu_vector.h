// Helpers for the CPU twins' elementwise passes. OFFLOADBENCH_VECTOR_CLONES compiles a loop for
// three x86-64 levels (AVX-512, AVX2+FMA, baseline SSE2) and picks one when the program loads
// (GCC's target_clones), so a portable binary still runs its passes at the widest vectors the CPU
// has: the AdamW update over 100k parameters takes ~40 µs with AVX-512 against ~110 µs with SSE2.
#pragma once
#include <omp.h>

#include <cstdint>

namespace offloadbench {

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define OFFLOADBENCH_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
// Which clone this CPU runs, for the results file.
inline const char* vector_clone_level() {
  if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4 (AVX-512)";
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3 (AVX2)";
  return "x86-64 (SSE2)";
}
#else
#define OFFLOADBENCH_VECTOR_CLONES
inline const char* vector_clone_level() { return "the compiler's default target"; }
#endif

// Runs body(begin, end) on one contiguous chunk of [0, n) per OpenMP thread when n exceeds
// parallel_above, else once on the caller's thread over the whole range (a fork costs microseconds;
// inside a team the work is the caller's share already).
template <typename Body>
void for_each_chunk(std::int64_t n, std::int64_t parallel_above, Body body) {
  if (n <= parallel_above || omp_get_max_threads() == 1 || omp_in_parallel())
    return body(std::int64_t{0}, n);
#pragma omp parallel
  {
    const std::int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    body(n * t / threads, n * (t + 1) / threads);
  }
}

}  // namespace offloadbench
