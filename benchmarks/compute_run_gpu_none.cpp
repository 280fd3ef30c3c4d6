// The compute suite's GPU runners in a build without CUDA: every GPU row says why it cannot run.
#include "benchmarks/compute_cases.h"
#include "harness/gpu_info.h"

namespace offloadbench {

struct ElementwiseGpuArrays {};
struct MatmulGpuArrays {};

MeasuredCase setup_elementwise_gpu(const ElementwiseCase& c, ReusedArrays<ElementwiseGpuArrays>&) {
  return MeasuredCase::skip(gpu_unavailable_reason(c.device));
}

MeasuredCase setup_matmul_gpu(const MatmulCase& c, ReusedArrays<MatmulGpuArrays>&) {
  return MeasuredCase::skip(gpu_unavailable_reason(c.device));
}

}  // namespace offloadbench
