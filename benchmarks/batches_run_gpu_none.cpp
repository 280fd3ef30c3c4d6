// The batches family's GPU rows in a build without CUDA: each says why it cannot run.
#include "benchmarks/batches_cases.h"
#include "harness/gpu_info.h"

namespace offloadbench {

MeasuredCase setup_batch_to_gpu(const BatchToGpuCase& c) { return MeasuredCase::skip(gpu_unavailable_reason(c.device)); }

}  // namespace offloadbench
