#include "harness/cuda/multi_gpu_timer.h"

#include <utility>

#include "harness/cuda/injected_delay.h"

namespace offloadbench {

CurrentDevice::CurrentDevice(int device) {
  CUDA_CHECK(cudaGetDevice(&previous_));
  CUDA_CHECK(cudaSetDevice(device));
}

CurrentDevice::~CurrentDevice() { CUDA_CHECK_NOTHROW(cudaSetDevice(previous_)); }

MultiGpuEventTimer::MultiGpuEventTimer(std::vector<TimedStream> streams)
    : streams_(std::move(streams)) {
  joined_.resize(streams_.size());
  for (std::size_t i = 1; i < streams_.size(); ++i) {
    if (!streams_[i].joined) continue;
    CurrentDevice on(streams_[i].device);
    joined_[i] = std::make_unique<CudaEvent>();
  }
  CurrentDevice on(streams_.at(0).device);
  start_ = std::make_unique<CudaEvent>();
  end_ = std::make_unique<CudaEvent>();
  gate_ = std::make_unique<CopyGate>();
  preload_injected_delay();  // its first launch would come inside the gate
}

MultiGpuEventTimer::~MultiGpuEventTimer() {
  gate_->open();
  CUDA_CHECK_NOTHROW(cudaStreamSynchronize(streams_[0].stream));
}

void MultiGpuEventTimer::begin_batch() {
  {
    CurrentDevice on(streams_[0].device);
    gate_->close(streams_[0].stream);
    start_->record(streams_[0].stream);
  }
  for (std::size_t i = 1; i < streams_.size(); ++i) {
    CurrentDevice on(streams_[i].device);
    CUDA_CHECK(cudaStreamWaitEvent(streams_[i].stream, start_->get(), 0));
  }
}

void MultiGpuEventTimer::end_batch() {
  for (std::size_t i = 1; i < streams_.size(); ++i) {
    if (!joined_[i]) continue;
    {
      CurrentDevice on(streams_[i].device);
      joined_[i]->record(streams_[i].stream);
    }
    CurrentDevice on(streams_[0].device);
    CUDA_CHECK(cudaStreamWaitEvent(streams_[0].stream, joined_[i]->get(), 0));
  }
  CurrentDevice on(streams_[0].device);
  if (pending_delay_seconds_ > 0)
    enqueue_injected_delay(std::exchange(pending_delay_seconds_, 0.0), streams_[0].stream);
  end_->record(streams_[0].stream);
  gate_->open();
}

void MultiGpuEventTimer::delay_batch(double seconds) { pending_delay_seconds_ = seconds; }

DeviceBatch MultiGpuEventTimer::wait(const std::function<void()>& while_waiting) {
  CurrentDevice on(streams_[0].device);
  if (while_waiting) {
    cudaError_t rc;
    while ((rc = cudaEventQuery(end_->get())) == cudaErrorNotReady) while_waiting();
    CUDA_CHECK(rc);
    if (cudaPeekAtLastError() == cudaErrorNotReady) static_cast<void>(cudaGetLastError());
  }
  DeviceBatch batch;
  batch.seconds = elapsed_seconds(*start_, *end_);  // synchronizes on the end event
  batch.gate_timed_out = gate_->timed_out();
  return batch;
}

}  // namespace offloadbench
