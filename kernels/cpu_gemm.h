// Row-major fp32 GEMM on the CPU through the libraries the suite can choose from: OpenBLAS always,
// oneDNN's dnnl_sgemm when the build found it. No one library wins every shape on every CPU
// (OpenBLAS leads at 64×64×12288; oneDNN on the MLP's skinny 4096×10×128 and 4096×128×10, where
// OpenBLAS's threading loses to its own single thread: lab/records/cpu-baseline.md), so the MLP
// times its step with each at set-up and keeps the faster (plan_mlp_gemms).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace offloadbench {

enum class CpuGemmLibrary { openblas, onednn };
const char* to_string(CpuGemmLibrary library);  // "OpenBLAS", "oneDNN"
// OpenBLAS, then oneDNN when this build has it.
const std::vector<CpuGemmLibrary>& cpu_gemm_libraries();
bool cpu_gemm_available(CpuGemmLibrary library);
// "OpenBLAS 0.3.21 … (pthreads)" / "oneDNN 2.6.3 (OpenMP)": what the results file names.
std::string cpu_gemm_description(CpuGemmLibrary library);
// How the OpenBLAS that was loaded runs its threads: "OpenMP" (libgomp, the pool oneDNN and the
// suite's loops use; what the build links first), "pthreads" (its own pool) or "sequential".
const char* openblas_threading();
// The available ones' descriptions joined with " or ".
std::string cpu_gemm_library_list();

// What the MLP's CPU steps run when it is pinned instead of planned (OFFLOADBENCH_CPU_GEMM, parsed
// by the command line, cli/environment.h): not pinned plans; a library alone pins every GEMM to it
// (and no packed inference); oneDNN with packed_inference pins inference to oneDNN's matmul with
// packed weights and training to oneDNN.
struct CpuGemmPin {
  bool pinned = false;
  CpuGemmLibrary library = CpuGemmLibrary::openblas;
  bool packed_inference = false;
};

// C (M,N) = alpha·op(A)·op(B) + beta·C, row-major; op transposes when trans_* is set. Then the
// epilogue, when asked for: C += bias (one value per column), then C = max(C, 0) — a layer's bias
// and ReLU, which oneDNN's matmul applies while C is still in registers instead of in another pass
// over it.
struct CpuGemm {
  bool trans_a = false, trans_b = false;
  int M = 0, N = 0, K = 0;
  float alpha = 1;
  const float* A = nullptr;
  int lda = 0;
  const float* B = nullptr;
  int ldb = 0;
  float beta = 0;
  float* C = nullptr;
  int ldc = 0;
  const float* bias = nullptr;  // N values, or none
  bool relu = false;
};

// Runs it with `library` on the calling thread's thread count: OpenBLAS's is set with
// openblas_set_num_threads, oneDNN's (OpenMP) with omp_set_num_threads. Throws std::runtime_error
// naming the library when it refuses (oneDNN returns a status), std::invalid_argument for a library
// this build lacks.
void sgemm(CpuGemmLibrary library, const CpuGemm& gemm);

// Whether `library`'s GEMM, called by each thread of an OpenMP team, runs on that thread alone:
// oneDNN and an OpenMP or sequential OpenBLAS do; a pthreads OpenBLAS would bring its own pool into
// the team.
bool gemm_runs_alone_in_team(CpuGemmLibrary library);

// The same product with K split over the calling thread's OpenMP threads, each running its share as
// a one-thread GEMM (the first into C with beta, the others into scratch), then the shares added
// into C in thread order. For a weight gradient (op(A) = doutᵀ, K = the batch) whose output is
// small: the libraries thread it over M and N, which for 128 × 784 leaves each thread a thin slice;
// split over the batch each runs at the one-thread rate (784-128-10's dW1 at batch 4096, two
// threads: about 5% faster; lab/microbench/split_k_weight_gradient.cpp). Falls back to sgemm on one
// thread, below 256 rows of K per thread, above 2^18 outputs (the shares' sum then costs what the
// split saves), with an epilogue, or with a pthreads OpenBLAS (whose own threads would join the
// team's).
void sgemm_split_k(CpuGemmLibrary library, const CpuGemm& gemm);

// Times two ways of doing the same work on a shared machine: one warm-up call each, then `trials`
// trials each, alternating so that a slow spell hits both, each trial long enough (≥ 2 ms, at most
// 1000 calls) that the clock's resolution does not decide. True when `challenger` has the lower
// median, by more than `margin` (0.02: 2% faster), so a tie keeps the incumbent.
bool runs_faster(const std::function<void()>& challenger, const std::function<void()>& incumbent,
                 int trials, double margin = 0.02);

}  // namespace offloadbench
