// See gpu_calls.h.
#include "benchmarks/gpu_calls.h"

#include <algorithm>
#include <chrono>

#include "harness/benchmark_case.h"
#include "harness/cuda/copy_gate.h"
#include "harness/cuda/cuda_raii.h"
#include "harness/gpu_info.h"

namespace offloadbench {

std::string gpu_problem(int device, std::uint64_t device_bytes) {
  if (auto reason = gpu_unavailable_reason(device); !reason.empty()) return reason;
  CUDA_CHECK(cudaSetDevice(device));
  return device_fit_problem(device_bytes);
}

int device_attribute(cudaDeviceAttr attribute, int device) {
  int value = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

double link_rate(int device) { return gpu_inventory().gpus.at(device).link.theoretical_bytes_per_second(); }

int calls_per_batch(std::uint64_t bytes) {
  return static_cast<int>(std::clamp<std::uint64_t>((64ull << 20) / std::max<std::uint64_t>(bytes, 1), 1, 64));
}

std::optional<double> time_device_calls(benchmark::State& state, cudaStream_t stream, int batch, bool gated,
                                        const EnqueueCall& enqueue_call, const std::function<void()>& between_batches) {
  CudaEvent start, end;
  CopyGate gate;
  double device_seconds = 0;
  for (auto _ : state) {
    if (between_batches) between_batches();
    if (gated) gate.close(stream);
    start.record(stream);
    for (int i = 0; i < batch; ++i) enqueue_call(stream);
    end.record(stream);
    if (gated) gate.open();
    const double seconds = elapsed_seconds(start, end);
    if (gated && gate.timed_out()) {
      invalidate_case(state, "copy gate timed out: the batch was not timed");
      return std::nullopt;
    }
    device_seconds += seconds / batch;
    state.SetIterationTime(seconds / batch);  // one iteration stands for one call
  }
  report_device_seconds(state, device_seconds);
  state.counters["calls_per_batch"] = batch;
  return device_seconds;
}

double time_host_calls(benchmark::State& state, cudaStream_t stream, const EnqueueCall& call) {
  double host_seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    call(stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    host_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  report_host_seconds(state, host_seconds);
  return host_seconds;
}

}  // namespace offloadbench
