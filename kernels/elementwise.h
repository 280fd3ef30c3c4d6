// Elementwise ops, BabelStream's set plus add-a-scalar: each is a CPU twin (namespace cpu,
// elementwise_cpu.cpp, OpenMP) and a CUDA launcher (namespace gpu, elementwise.cu) with the same
// name, argument order (outputs, inputs, scalars, size) and semantics; the CPU twin takes its thread
// count last, the launcher its stream. Every array has n elements; outputs are overwritten (=).
// Instantiated for float and double. The GPU arrays are device pointers.
#pragma once
#include <cstddef>

struct CUstream_st;  // cudaStream_t without the CUDA headers, so CPU-only code can include this

namespace offloadbench {

namespace cpu {
template <typename T> void copy(T* c, const T* a, std::size_t n, int threads);                          // c = a
template <typename T> void scale(T* b, const T* c, T scalar, std::size_t n, int threads);               // b = s·c
template <typename T> void add(T* c, const T* a, const T* b, std::size_t n, int threads);               // c = a + b
template <typename T> void triad(T* a, const T* b, const T* c, T scalar, std::size_t n, int threads);   // a = b + s·c
// sum = Σ a·b, accumulated in double (a float accumulator cannot sum 2^28 terms).
template <typename T> void dot(double* sum, const T* a, const T* b, std::size_t n, int threads);
template <typename T> void add_scalar(T* y, const T* x, T scalar, std::size_t n, int threads);          // y = x + s
}  // namespace cpu

namespace gpu {
template <typename T> void copy(T* c, const T* a, std::size_t n, CUstream_st* stream);
template <typename T> void scale(T* b, const T* c, T scalar, std::size_t n, CUstream_st* stream);
template <typename T> void add(T* c, const T* a, const T* b, std::size_t n, CUstream_st* stream);
template <typename T> void triad(T* a, const T* b, const T* c, T scalar, std::size_t n, CUstream_st* stream);
// *sum (one device double) = Σ a·b, accumulated in double; the launcher zeroes it first.
template <typename T> void dot(double* sum, const T* a, const T* b, std::size_t n, CUstream_st* stream);
template <typename T> void add_scalar(T* y, const T* x, T scalar, std::size_t n, CUstream_st* stream);
}  // namespace gpu

}  // namespace offloadbench
