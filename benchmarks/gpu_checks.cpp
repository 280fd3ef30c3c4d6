// See gpu_checks.h.
#include "benchmarks/gpu_checks.h"

#include "kernels/cuda/cuda_raii.h"
#include "harness/gpu_info.h"

namespace offloadbench {

std::string gpu_problem(int device, std::uint64_t device_bytes) {
  if (auto reason = gpu_unavailable_reason(device); !reason.empty()) return reason;
  CUDA_CHECK(cudaSetDevice(device));
  return device_fit_problem(device_bytes);
}

int device_attribute(cudaDeviceAttr attribute, int device) {
  int value = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

double link_ceiling(int device) { return gpu_inventory().gpus.at(device).link.ceiling_bytes_per_second(); }

}  // namespace offloadbench
