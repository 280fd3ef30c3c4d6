// CUDA events around a batch whose calls run on several GPUs' streams (the peer family), held
// behind the copy gate on the first stream. Every other stream starts when the first one passes the
// start event (nvbandwidth's method: all copies launch at once); joined streams also end the batch,
// the others (interference) run beside it untimed. Events of one GPU are recorded on that GPU's
// streams.
#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "harness/cuda/copy_gate.h"
#include "harness/measure.h"
#include "kernels/cuda/cuda_raii.h"

namespace offloadbench {

// Makes `device` current for its lifetime, then puts back the one that was.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device);
  ~CurrentDevice();
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int previous_ = 0;
};

struct TimedStream {
  int device = 0;
  cudaStream_t stream = nullptr;
  bool joined = true;  // false: interference, not waited for by the end event
};

class MultiGpuEventTimer : public DeviceTimer {
 public:
  // streams[0] carries the gate, the start and the end events. Make it with no CUDA work pending.
  explicit MultiGpuEventTimer(std::vector<TimedStream> streams);
  ~MultiGpuEventTimer() override;  // opens the gate and waits, as EventTimer's does
  MultiGpuEventTimer(const MultiGpuEventTimer&) = delete;
  MultiGpuEventTimer& operator=(const MultiGpuEventTimer&) = delete;
  void begin_batch() override;
  void end_batch() override;
  void delay_batch(double seconds) override;
  DeviceBatch wait(const std::function<void()>& while_waiting) override;

 private:
  std::vector<TimedStream> streams_;
  std::vector<std::unique_ptr<CudaEvent>>
      joined_;                              // per stream, made on its GPU (null for streams_[0])
  std::unique_ptr<CudaEvent> start_, end_;  // on streams_[0]'s GPU
  std::unique_ptr<CopyGate> gate_;
  double pending_delay_seconds_ = 0;
};

}  // namespace offloadbench
