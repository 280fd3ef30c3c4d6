// The device's global nanosecond timer (%globaltimer), shared by the kernels that wait on it: the
// copy gate's timeout and the injected delay. It ticks in wall-clock nanoseconds whatever the SM
// clock does, but is updated only every so often: every 32 ns on recent GPUs, every ~1 µs on some.
#pragma once

namespace offloadbench {

__device__ inline unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace offloadbench
