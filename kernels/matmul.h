// C = A·B in fp32 (row-major; A is m×k, B is k×n, C is m×n; C is overwritten). The CPU twin
// (matmul_cpu.cpp) calls OpenBLAS; the CUDA launcher (matmul.cu) runs one of the project's own
// shared-memory 2-D block-tiled kernels; both take the same arguments, the CPU one its thread count
// last and the GPU one its stream. matmul_cublas runs cuBLAS in the precisions the suite compares.
#pragma once
#include <cstddef>
#include <string>

#include "kernels/cpu_gemm.h"

struct CUstream_st;    // cudaStream_t
struct cublasContext;  // cublasHandle_t

namespace offloadbench {

// What the multiply's inputs are rounded to; accumulation and C are fp32 in every case.
enum class GemmPrecision {
  fp32,  // strict fp32 (cuBLAS CUBLAS_COMPUTE_32F, default math mode)
  tf32,  // fp32 storage, tensor cores round inputs to TF32 (CUBLAS_COMPUTE_32F_FAST_TF32)
  bf16,  // bf16 inputs, fp32 accumulation and output (cublasGemmEx)
  fp16,  // fp16 inputs, fp32 accumulation and output (cublasGemmEx)
};
const char* to_string(GemmPrecision precision);
std::size_t input_element_bytes(GemmPrecision precision);  // 4, 4, 2, 2
double input_roundoff(GemmPrecision precision);            // unit roundoff of the inputs

// Row-major float matrices whose values are multiples of 1/64 in [-1, 1]: exact in fp32, tf32, bf16
// and fp16, so every precision multiplies the same numbers and only accumulation can differ.
void fill_exact_matrix(float* data, std::size_t count, unsigned seed);

// "" when C matches A·B (computed in double) at `samples` spread entries, else what differs.
// Checks a large product in O(samples·k) rather than O(m·n·k).
std::string sampled_matmul_mismatches(const float* c, const float* a, const float* b, int m, int n,
                                      int k, double input_roundoff, int samples = 256);

// Keeps OpenBLAS at `threads` for its lifetime and restores the previous count afterwards.
class BlasThreads {
 public:
  explicit BlasThreads(int threads);
  ~BlasThreads();
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;

 private:
  int previous_;
};

namespace cpu {
// cblas_sgemm (OpenBLAS) or dnnl_sgemm (oneDNN) with `threads` threads (the library's count,
// restored afterwards: OpenBLAS's pthreads or OpenMP's team).
void matmul(float* c, const float* a, const float* b, int m, int n, int k, int threads,
            CpuGemmLibrary library = CpuGemmLibrary::openblas);
}  // namespace cpu

// The project's own SGEMM kernels (matmul.cu), both 128×128 C tiles with an 8×8 register sub-tile
// per thread: `tiled` (scalar loads, K step 16) and `vectorized` (float4 loads, K step 8, the next
// step's slices loaded while this one multiplies). Both bounds-checked for any shape.
enum class MatmulKernel { tiled, vectorized };

namespace gpu {
// One of the project's SGEMM kernels; device pointers.
void matmul(float* c, const float* a, const float* b, int m, int n, int k, CUstream_st* stream,
            MatmulKernel kernel = MatmulKernel::tiled);
// cuBLAS: a and b hold float (fp32, tf32), __nv_bfloat16 (bf16) or __half (fp16); c is float.
// Throws CublasError naming the status when cuBLAS refuses.
void matmul_cublas(cublasContext* handle, GemmPrecision precision, float* c, const void* a,
                   const void* b, int m, int n, int k, CUstream_st* stream);
}  // namespace gpu

}  // namespace offloadbench
