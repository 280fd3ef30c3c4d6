// The transfer suite's GPU runners in a build without CUDA: every case says why it cannot run.
#include "benchmarks/transfer_cases.h"
#include "harness/gpu_info.h"

namespace offloadbench {

MeasuredCase setup_device_copy(const DeviceCopyCase& c) { return MeasuredCase::skip(gpu_unavailable_reason(c.device)); }

MeasuredCase setup_pin_cost(const PinCostCase& c) { return MeasuredCase::skip(gpu_unavailable_reason(c.device)); }

}  // namespace offloadbench
