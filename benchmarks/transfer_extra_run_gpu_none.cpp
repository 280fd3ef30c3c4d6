// Issue 18's transfer cases in a build without CUDA: every case says why it cannot run.
#include "benchmarks/transfer_extra_cases.h"
#include "harness/gpu_info.h"

namespace offloadbench {

MeasuredCase setup_device_local_copy(const DeviceLocalCopyCase& c) {
  return MeasuredCase::skip(gpu_unavailable_reason(c.device));
}
MeasuredCase setup_sm_copy(const SmCopyCase& c) { return MeasuredCase::skip(gpu_unavailable_reason(c.device)); }
MeasuredCase setup_latency(const LatencyCase& c) { return MeasuredCase::skip(gpu_unavailable_reason(c.device)); }
MeasuredCase setup_managed(const ManagedCase& c) { return MeasuredCase::skip(gpu_unavailable_reason(c.device)); }
MeasuredCase setup_small_tensors(const SmallTensorsCase& c) {
  return MeasuredCase::skip(gpu_unavailable_reason(c.device));
}

}  // namespace offloadbench
