// A workload whose arithmetic per element is a parameter, so the streams suite can make the kernel
// last ¼×, 1× or 4× as long as the copy of the same data. Each element runs a dependent chain of
// `fma_iterations` steps x ← a·x + b (fp32, fused): 2·fma_iterations FLOPs and 8 bytes per element.
// The CPU twin and the CUDA launcher share name, argument order and `=` semantics; both use a
// fused multiply-add per step, so they agree to the last bit.
#pragma once
#include <cstdint>

struct CUstream_st;  // cudaStream_t without pulling CUDA headers into CPU-only code

namespace offloadbench {

// a = 1 − 2⁻²⁰, b = 2⁻²⁰: the fixed point is 1 and a^k stays near 1 for any k a GPU runs in a
// few milliseconds (a^10⁶ ≈ 0.39), so the output still depends on the input and a misplaced chunk
// shows up in the check.
inline constexpr float kFmaWorkloadScale = 1.0f - 1.0f / 1048576.0f;
inline constexpr float kFmaWorkloadShift = 1.0f / 1048576.0f;

// out, in: (n) floats. CPU twin: OpenMP over elements.
void fma_workload(float* out, const float* in, std::uint64_t n, int fma_iterations);

// GPU: out, in are device pointers; enqueued on `stream` (nullptr = the legacy default stream);
// the launch is checked, the work is not waited for. Defined in fma_workload.cu (CUDA builds only).
void fma_workload(float* out, const float* in, std::uint64_t n, int fma_iterations,
                  CUstream_st* stream);

}  // namespace offloadbench
