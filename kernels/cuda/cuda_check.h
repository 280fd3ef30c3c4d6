// One error check for every CUDA call: CUDA_CHECK throws CudaError naming file:line, the call and
// the CUDA error; CUDA_CHECK_NOTHROW only reports (for destructors). Check launches with
// CUDA_CHECK(cudaGetLastError()).
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace offloadbench {

struct CudaError : std::runtime_error {
  CudaError(cudaError_t code, const std::string& message)
      : std::runtime_error(message), code(code) {}
  cudaError_t code;
};

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);
void report_cuda_error(cudaError_t code, const char* call, const char* file, int line) noexcept;

}  // namespace offloadbench

#define CUDA_CHECK(call)                                                             \
  do {                                                                               \
    const cudaError_t offloadbench_rc_ = (call);                                     \
    if (offloadbench_rc_ != cudaSuccess)                                             \
      ::offloadbench::throw_cuda_error(offloadbench_rc_, #call, __FILE__, __LINE__); \
  } while (0)

#define CUDA_CHECK_NOTHROW(call)                                                      \
  do {                                                                                \
    const cudaError_t offloadbench_rc_ = (call);                                      \
    if (offloadbench_rc_ != cudaSuccess)                                              \
      ::offloadbench::report_cuda_error(offloadbench_rc_, #call, __FILE__, __LINE__); \
  } while (0)
