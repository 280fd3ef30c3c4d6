// CPU twin of the FMA workload (see fma_workload.h): the reference the GPU output is checked
// against.
#include "kernels/fma_workload.h"

#include <cmath>

namespace offloadbench {

void fma_workload(float* out, const float* in, std::uint64_t n, int fma_iterations) {
  const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    float x = in[i];
    for (int k = 0; k < fma_iterations; ++k) x = std::fma(x, kFmaWorkloadScale, kFmaWorkloadShift);
    out[i] = x;
  }
}

}  // namespace offloadbench
