#include "harness/cuda/copy_gate.h"

#include "harness/cuda/global_timer.cuh"
#include "kernels/cuda/cuda_check.h"

namespace offloadbench {

namespace {
// Spins until the host writes 1 to *flag, or gives up after timeout_ns (a bug, not a measurement).
__global__ void copy_gate_kernel(volatile int* flag, int* timed_out,
                                 unsigned long long timeout_ns) {
  const unsigned long long start = global_timer_ns();
  while (*flag == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}
}  // namespace

CopyGate::CopyGate() {
  int* host = nullptr;
  CUDA_CHECK(cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped));
  host[0] = 0;
  host[1] = 0;
  flag_ = host;
  timed_out_ = host + 1;
  int* device = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
  device_flag_ = device;
  device_timed_out_ = device + 1;
}

CopyGate::~CopyGate() { CUDA_CHECK_NOTHROW(cudaFreeHost(const_cast<int*>(flag_))); }

void CopyGate::close(cudaStream_t stream) {
  *flag_ = 0;
  *timed_out_ = 0;
  copy_gate_kernel<<<1, 1, 0, stream>>>(device_flag_, device_timed_out_, 2'000'000'000ull);
  CUDA_CHECK(cudaGetLastError());
}

void CopyGate::open() { __atomic_store_n(const_cast<int*>(flag_), 1, __ATOMIC_SEQ_CST); }

bool CopyGate::timed_out() const { return *timed_out_ != 0; }

}  // namespace offloadbench
