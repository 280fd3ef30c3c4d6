// The mlp suite's GPU runner in a build without CUDA: every GPU case says why it cannot run.
#include "benchmarks/mlp.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"

namespace offloadbench {

void run_mlp_gpu(benchmark::State& state, const MlpCase& c) { skip_case(state, gpu_unavailable_reason(c.device)); }

}  // namespace offloadbench
