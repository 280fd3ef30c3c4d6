// The copy-idiom and pinning-at-scale GPU cases in a build without CUDA: every case says why it cannot run.
#include "benchmarks/transfer_idioms_cases.h"
#include "harness/gpu_info.h"

namespace offloadbench {

MeasuredCase setup_torch_idiom(const TorchIdiomCase& c) { return MeasuredCase::skip(gpu_unavailable_reason(c.device)); }
MeasuredCase setup_pin_at_scale(const PinScaleCase& c) { return MeasuredCase::skip(gpu_unavailable_reason(c.device)); }

}  // namespace offloadbench
