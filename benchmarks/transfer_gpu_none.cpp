// The transfer suite's GPU runners in a build without CUDA: every case says why it cannot run.
#include "benchmarks/transfer.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"

namespace offloadbench {

void run_device_copy(benchmark::State& state, const DeviceCopyCase& c) {
  skip_case(state, gpu_unavailable_reason(c.device));
}

void run_pin_cost(benchmark::State& state, const PinCostCase& c) {
  skip_case(state, gpu_unavailable_reason(c.device));
}

}  // namespace offloadbench
