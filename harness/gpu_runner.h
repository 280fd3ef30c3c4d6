// How a case table names a GPU runner, so that a family with GPU cases builds without CUDA and
// without stubs: OFFLOADBENCH_GPU_RUNNER(setup_device_copy) is that function in a build with CUDA
// and, in a build without, a skip that says why (gpu_skip_reason of the case). A family's GPU
// runner files are then simply left out of a build without CUDA
// (benchmarks/<family>/CMakeLists.txt).
#pragma once
#include <string>

#include "harness/gpu_info.h"
#include "harness/measure.h"

namespace offloadbench {

// Why a GPU case cannot run in this build: for a case with a `device` field, that device's reason.
// A case that knows more (a plan's problem) gives an overload beside its type.
template <typename Case>
std::string gpu_skip_reason(const Case& c) {
  return gpu_unavailable_reason(c.device);
}

}  // namespace offloadbench

#if OFFLOADBENCH_HAVE_CUDA
#define OFFLOADBENCH_GPU_RUNNER(setup) setup
#else
#define OFFLOADBENCH_GPU_RUNNER(setup)                                    \
  [](const auto& gpu_case, auto&&...) {                                   \
    return ::offloadbench::MeasuredCase::skip(gpu_skip_reason(gpu_case)); \
  }
#endif
