// The streams suite's GPU runner in a build without CUDA: every case says why it cannot run.
#include "benchmarks/streams.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"

namespace offloadbench {

void run_streams_gpu(benchmark::State& state, const StreamsCase& c) {
  skip_case(state, gpu_unavailable_reason(c.device));
}

}  // namespace offloadbench
