// The streams suite's GPU runner in a build without CUDA: every case says why it cannot run.
#include "benchmarks/streams.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"

namespace offloadbench {

class StreamsWorkspace {};

std::shared_ptr<StreamsWorkspace> make_streams_workspace() { return std::make_shared<StreamsWorkspace>(); }

void run_streams_gpu(benchmark::State& state, const StreamsCase& c, StreamsWorkspace*) {
  skip_case(state, gpu_unavailable_reason(c.device));
}

}  // namespace offloadbench
