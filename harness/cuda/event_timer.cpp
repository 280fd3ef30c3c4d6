#include "harness/cuda/event_timer.h"

#include <utility>

#include "harness/cuda/injected_delay.h"

namespace offloadbench {

EventTimer::EventTimer(EventTimerOptions options)
    : options_(std::move(options)), joined_(options_.side_streams.size()) {
  if (options_.gated) {
    gate_ = std::make_unique<CopyGate>();
    preload_injected_delay();  // its first launch would come inside the gate (see there)
  }
  if (options_.flush_bytes > 0) flush_ = DeviceBuffer(options_.flush_bytes);
}

EventTimer::~EventTimer() {
  if (!gate_) return;
  gate_->open();
  CUDA_CHECK_NOTHROW(cudaStreamSynchronize(options_.stream));
}

void EventTimer::prepare_batch() {
  if (options_.flush_bytes == 0) return;
  CUDA_CHECK(cudaMemsetAsync(flush_.data(), ++flushes_ & 0xff, flush_.bytes(), options_.stream));
  CUDA_CHECK(cudaStreamSynchronize(options_.stream));
}

void EventTimer::begin_batch() {
  if (gate_) gate_->close(options_.stream);
  start_.record(options_.stream);
  for (auto side : options_.side_streams) CUDA_CHECK(cudaStreamWaitEvent(side, start_.get(), 0));
}

void EventTimer::end_batch() {
  if (!joined_.empty()) main_done_.record(options_.stream);
  for (std::size_t i = 0; i < joined_.size(); ++i) {
    joined_[i].record(options_.side_streams[i]);
    CUDA_CHECK(cudaStreamWaitEvent(options_.stream, joined_[i].get(), 0));
  }
  if (pending_delay_seconds_ > 0)
    enqueue_injected_delay(std::exchange(pending_delay_seconds_, 0.0), options_.stream);
  end_.record(options_.stream);
  if (gate_) gate_->open();
}

void EventTimer::delay_batch(double seconds) { pending_delay_seconds_ = seconds; }

DeviceBatch EventTimer::wait(const std::function<void()>& while_waiting) {
  if (while_waiting) {
    cudaError_t rc;
    while ((rc = cudaEventQuery(end_.get())) == cudaErrorNotReady) while_waiting();
    CUDA_CHECK(rc);
    // Some runtimes keep "not ready" as the last error; clear only that, so the next launch check
    // does not report it.
    if (cudaPeekAtLastError() == cudaErrorNotReady) static_cast<void>(cudaGetLastError());
  }
  DeviceBatch batch;
  batch.seconds = elapsed_seconds(start_, end_);  // synchronizes on the end event
  batch.gate_timed_out = gate_ && gate_->timed_out();
  if (!joined_.empty()) {
    batch.lane_seconds.push_back(elapsed_seconds(start_, main_done_));
    for (const auto& joined : joined_)
      batch.lane_seconds.push_back(elapsed_seconds(start_, joined));
  }
  return batch;
}

}  // namespace offloadbench
