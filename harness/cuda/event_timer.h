// The device half of the measurement layer: CUDA events around a batch of calls on one stream,
// optionally held behind the copy gate (nvbandwidth's method, so the events time the work and not
// the host's enqueue gaps), joined with side streams, and preceded by an L2 flush (cold samples).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "harness/cuda/copy_gate.h"
#include "kernels/cuda/cuda_raii.h"
#include "harness/measure.h"

namespace offloadbench {

struct EventTimerOptions {
  cudaStream_t stream = nullptr;  // where the batch starts and ends (nullptr: legacy stream)
  std::vector<cudaStream_t>
      side_streams;  // also start after the start event; joined before the end
  // Hold the batch behind a gate kernel while the host enqueues. Never for work that may block the
  // host until the stream reaches it (a pageable cudaMemcpyAsync, a blocking cudaMemcpy).
  bool gated = false;
  std::size_t flush_bytes = 0;  // > 0: a memset this large before each batch evicts L2
};

class EventTimer : public DeviceTimer {
 public:
  explicit EventTimer(EventTimerOptions options);
  // Opens the gate and waits for the stream: a batch cut short by an exception must not leave
  // the gate kernel spinning on memory about to be freed.
  ~EventTimer() override;
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void prepare_batch() override;
  void begin_batch() override;
  void end_batch() override;
  void delay_batch(
      double seconds) override;  // an injected-delay kernel (harness/cuda/injected_delay.h)
  DeviceBatch wait(const std::function<void()>& while_waiting) override;

 private:
  EventTimerOptions options_;
  CudaEvent start_, end_, main_done_;  // main_done_: the main stream's own end, before the joins
  std::vector<CudaEvent> joined_;
  std::unique_ptr<CopyGate> gate_;
  DeviceBuffer flush_;
  int flushes_ = 0;
  double pending_delay_seconds_ = 0;  // for the next end_batch
};

}  // namespace offloadbench
