// The mlp suite's GPU runner in a build without CUDA: every GPU case says why it cannot run.
#include "benchmarks/mlp_cases.h"
#include "harness/gpu_info.h"

namespace offloadbench {

MeasuredCase setup_mlp_gpu(const MlpCase& c) { return MeasuredCase::skip(gpu_unavailable_reason(c.device)); }

}  // namespace offloadbench
