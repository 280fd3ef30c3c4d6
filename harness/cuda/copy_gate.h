// nvbandwidth's timing method: a short kernel holds the stream while the host enqueues a batch of
// copies between two events, then the host opens the gate. The events then time only the copies,
// not the host's enqueue gaps. Only for asynchronous work: a call that blocks the host until the
// stream reaches it (a pageable cudaMemcpyAsync may) must not be queued behind a closed gate.
#pragma once
#include <cuda_runtime.h>

namespace offloadbench {

class CopyGate {
 public:
  CopyGate();  // allocates a host-mapped flag
  ~CopyGate();
  CopyGate(const CopyGate&) = delete;
  CopyGate& operator=(const CopyGate&) = delete;

  void close(cudaStream_t stream);  // launches the spinning kernel on `stream`
  void open();                      // releases it
  // True when the last kernel gave up waiting (after 2 s) instead of being opened: timing invalid.
  bool timed_out() const;

 private:
  volatile int* flag_ = nullptr;  // host view; 1 = open
  int* device_flag_ = nullptr;    // device view of the same memory
  int* timed_out_ = nullptr;      // host-mapped, written by the kernel
  int* device_timed_out_ = nullptr;
};

}  // namespace offloadbench
