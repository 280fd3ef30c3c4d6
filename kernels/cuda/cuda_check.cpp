#include "kernels/cuda/cuda_check.h"

#include <fmt/format.h>

namespace offloadbench {

namespace {
std::string describe(cudaError_t code, const char* call, const char* file, int line) {
  return fmt::format("{}:{}: {} failed: {} ({})", file, line, call, cudaGetErrorName(code),
                     cudaGetErrorString(code));
}
}  // namespace

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  // A failed call also leaves its error as the runtime's "last error" (a failed 16 GiB
  // cudaHostRegister, say): cleared here, the next case's launch check does not fail for it. A
  // sticky error (a broken context) stays whatever we do.
  (void)cudaGetLastError();
  throw CudaError(code, describe(code, call, file, line));
}

void report_cuda_error(cudaError_t code, const char* call, const char* file, int line) noexcept {
  std::fprintf(stderr, "offloadbench: %s\n", describe(code, call, file, line).c_str());
}

}  // namespace offloadbench
