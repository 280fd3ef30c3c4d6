// Issue 18's transfer runners in a build without CUDA: every case says why it cannot run.
#include "benchmarks/transfer_extra.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"

namespace offloadbench {

void run_device_local_copy(benchmark::State& state, const DeviceLocalCopyCase& c) {
  skip_case(state, gpu_unavailable_reason(c.device));
}
void run_sm_copy(benchmark::State& state, const SmCopyCase& c) { skip_case(state, gpu_unavailable_reason(c.device)); }
void run_latency(benchmark::State& state, const LatencyCase& c) { skip_case(state, gpu_unavailable_reason(c.device)); }
void run_managed(benchmark::State& state, const ManagedCase& c) { skip_case(state, gpu_unavailable_reason(c.device)); }
void run_small_tensors(benchmark::State& state, const SmallTensorsCase& c) {
  skip_case(state, gpu_unavailable_reason(c.device));
}

}  // namespace offloadbench
