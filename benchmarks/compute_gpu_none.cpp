// The compute suite's GPU runners in a build without CUDA: every GPU row says why it cannot run.
#include "benchmarks/compute.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"

namespace offloadbench {

void run_elementwise_gpu(benchmark::State& state, const ElementwiseCase& c) {
  skip_case(state, gpu_unavailable_reason(c.device));
}

void run_matmul_gpu(benchmark::State& state, const MatmulCase& c) {
  skip_case(state, gpu_unavailable_reason(c.device));
}

}  // namespace offloadbench
