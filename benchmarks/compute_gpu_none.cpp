// The compute suite's GPU runners in a build without CUDA: every GPU row says why it cannot run.
#include "benchmarks/compute.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"

namespace offloadbench {

struct ElementwiseGpuArrays {};
struct MatmulGpuArrays {};

std::shared_ptr<ReusedArrays<ElementwiseGpuArrays>> make_elementwise_gpu_reuse() {
  return std::make_shared<ReusedArrays<ElementwiseGpuArrays>>();
}

std::shared_ptr<ReusedArrays<MatmulGpuArrays>> make_matmul_gpu_reuse() {
  return std::make_shared<ReusedArrays<MatmulGpuArrays>>();
}

void run_elementwise_gpu(benchmark::State& state, const ElementwiseCase& c, ReusedArrays<ElementwiseGpuArrays>&) {
  skip_case(state, gpu_unavailable_reason(c.device));
}

void run_matmul_gpu(benchmark::State& state, const MatmulCase& c, ReusedArrays<MatmulGpuArrays>&) {
  skip_case(state, gpu_unavailable_reason(c.device));
}

}  // namespace offloadbench
