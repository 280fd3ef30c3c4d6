// The device half of the regression self-test's slowdown (harness/injected_slowdown.h): a
// one-thread kernel that waits on a stream for a given time, so that a device-timed batch gets
// slower for real. It sleeps with __nanosleep (sm_70+) between reads of %globaltimer instead of
// spinning, so it takes no issue slots from work running beside it on the same SM.
//
// Accuracy (unmeasured until a GPU run): the wait ends within one update of %globaltimer after the
// target (32 ns on recent GPUs, ~1 µs on some); the batch also gets the gap between two kernels on
// a stream (~1-3 µs). Against a batch of 1 ms that is a few tenths of a percent; against a batch of
// 10 µs it is more than the slowdowns the self-test asks for, so its probes time batches of ~1 ms.
#pragma once
#include <cuda_runtime.h>

namespace offloadbench {

// Enqueues a wait of `seconds` (0 < seconds <= 10) on `stream`; throws CudaError when the launch
// fails and std::invalid_argument on a time out of range.
void enqueue_injected_delay(double seconds, cudaStream_t stream);

// Loads the kernel's module now (once per process). With lazy loading (CUDA 12.2+'s default) the
// first launch loads it, which may synchronize the context: inside a gated batch that would wait on
// the spinning gate until it timed out. Gated timers call this when they are made.
void preload_injected_delay();

}  // namespace offloadbench
