// cuBLAS's counterpart of CUDA_CHECK: CUBLAS_CHECK throws CublasError naming file:line, the call
// and the status by name (CUBLAS_STATUS_NOT_SUPPORTED, ...); CublasHandle owns a handle.
#pragma once
#include <cublas_v2.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.h"

namespace offloadbench {

struct CublasError : std::runtime_error {
  CublasError(cublasStatus_t status, const std::string& message)
      : std::runtime_error(message), status(status) {}
  cublasStatus_t status;
};

[[noreturn]] inline void throw_cublas_error(cublasStatus_t status, const char* call,
                                            const char* file, int line) {
  // Plain string building: this header is also compiled by nvcc, where fmt is best avoided.
  throw CublasError(status, std::string(file) + ":" + std::to_string(line) + ": " + call +
                                " failed: " + cublasGetStatusName(status));
}

}  // namespace offloadbench

#define CUBLAS_CHECK(call)                                                                 \
  do {                                                                                     \
    const cublasStatus_t offloadbench_status_ = (call);                                    \
    if (offloadbench_status_ != CUBLAS_STATUS_SUCCESS)                                     \
      ::offloadbench::throw_cublas_error(offloadbench_status_, #call, __FILE__, __LINE__); \
  } while (0)

namespace offloadbench {

class CublasHandle {
 public:
  CublasHandle() { CUBLAS_CHECK(cublasCreate(&handle_)); }
  ~CublasHandle() {
    if (handle_) {
      const cublasStatus_t status = cublasDestroy(handle_);
      if (status != CUBLAS_STATUS_SUCCESS)
        std::fprintf(stderr, "offloadbench: cublasDestroy failed: %s\n",
                     cublasGetStatusName(status));
    }
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace offloadbench
