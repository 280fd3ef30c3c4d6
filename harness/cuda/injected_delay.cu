#include "harness/cuda/injected_delay.h"

#include <stdexcept>

#include <fmt/format.h>

#include "harness/cuda/global_timer.cuh"
#include "kernels/cuda/cuda_check.h"

namespace offloadbench {

namespace {

// __nanosleep(t) sleeps for somewhere in [0, 2t] (and at most ~1 ms), so each sleep asks for half
// of what is left: it cannot overshoot, and the last few nanoseconds are a spin on the timer.
__global__ void injected_delay_kernel(unsigned long long delay_ns) {
  const unsigned long long start = global_timer_ns();
  for (unsigned long long now = start; now - start < delay_ns; now = global_timer_ns()) {
    const unsigned long long half_left = (delay_ns - (now - start)) / 2;
    __nanosleep(static_cast<unsigned>(half_left < 1'000'000ull ? half_left : 1'000'000ull));
  }
}

}  // namespace

void preload_injected_delay() {
  static const bool loaded = [] {
    cudaFuncAttributes attributes{};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, injected_delay_kernel));
    return true;
  }();
  static_cast<void>(loaded);
}

void enqueue_injected_delay(double seconds, cudaStream_t stream) {
  if (!(seconds > 0 && seconds <= 10))
    throw std::invalid_argument(fmt::format("injected delay of {} s: out of (0, 10] s", seconds));
  injected_delay_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(seconds * 1e9 + 0.5));
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace offloadbench
