// The streams suite's GPU runner in a build without CUDA: every case says why it cannot run.
#include "benchmarks/streams_cases.h"
#include "harness/gpu_info.h"

namespace offloadbench {

class StreamsWorkspace {};

std::shared_ptr<StreamsWorkspace> make_streams_workspace() { return std::make_shared<StreamsWorkspace>(); }

MeasuredCase setup_streams_gpu(const StreamsCase& c, std::shared_ptr<StreamsWorkspace>) {
  return MeasuredCase::skip(gpu_unavailable_reason(c.device));
}

}  // namespace offloadbench
