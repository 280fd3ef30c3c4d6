// The memset family's GPU view: cudaMemsetAsync over a resident device buffer, one call per sample,
// timed by CUDA events behind the copy gate after a memset twice the size of L2 evicts the buffer
// (cold, so the device's DRAM peak is the ceiling at every size). Checked outside the timing by
// copying the whole buffer back and testing every byte. Built only with CUDA.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/memset/memset_cases.h"
#include "harness/benchmark_case.h"
#include "harness/cuda/event_timer.h"
#include "harness/cuda/gpu_checks.h"
#include "harness/gpu_info.h"
#include "harness/system_info.h"
#include "kernels/cuda/cuda_raii.h"

namespace offloadbench {

namespace {

// Twice L2 (64 MiB when L2 is unknown) written before each sample.
std::size_t flush_bytes(int device) {
  const auto l2 = gpu_inventory().gpus.at(device).l2_cache_bytes;
  return l2 ? 2 * l2 : (64ull << 20);
}

}  // namespace

MeasuredCase setup_memset_gpu(const MemsetCase& c) {
  // Whether the GPU is there first: the inventory lists no GPU to read L2's size from otherwise.
  if (auto reason = gpu_unavailable_reason(c.device); !reason.empty())
    return MeasuredCase::skip(reason);
  const std::size_t flush = flush_bytes(c.device);
  if (auto problem = gpu_problem(c.device, c.bytes + flush); !problem.empty())
    return MeasuredCase::skip(problem);
  if (auto problem = host_fit_problem(c.bytes); !problem.empty())
    return MeasuredCase::skip(problem);  // the check's copy
  struct Buffer {
    explicit Buffer(std::uint64_t bytes) : device(bytes) {}
    DeviceBuffer device;
    CudaStream stream;
    std::uint8_t value = 0;  // what the latest call wrote
  };
  auto buffer = std::make_shared<Buffer>(c.bytes);
  EventTimerOptions timing;
  timing.stream = buffer->stream.get();
  timing.gated = true;  // a device memset never blocks the host
  timing.flush_bytes = flush;

  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [buffer, bytes = c.bytes] {
    buffer->value = next_fill_value(buffer->value);
    CUDA_CHECK(cudaMemsetAsync(buffer->device.data(), buffer->value, bytes, buffer->stream.get()));
  };
  // Twice (so a fill that ignores its value fails too): poison with the complement of the value the
  // next call must write, run that call, copy every byte back and check it.
  m.verify = [buffer, bytes = c.bytes, call = m.call] {
    std::vector<std::uint8_t> back(bytes);
    for (int round = 0; round < 2; ++round) {
      const std::uint8_t expected = next_fill_value(buffer->value);
      CUDA_CHECK(cudaMemsetAsync(buffer->device.data(), static_cast<std::uint8_t>(~expected), bytes,
                                 buffer->stream.get()));
      call();
      buffer->stream.synchronize();
      CUDA_CHECK(cudaMemcpy(back.data(), buffer->device.data(), bytes, cudaMemcpyDeviceToHost));
      if (auto wrong = check_fill(back.data(), bytes, expected); !wrong.empty()) return wrong;
    }
    return std::string();
  };
  m.work.bytes = static_cast<double>(c.bytes);  // written once, nothing read: BabelStream weight 1
  m.calls_per_batch = 1;                        // one cold memset per sample
  m.device = std::make_shared<EventTimer>(timing);
  m.bytes_ceiling = gpu_inventory().gpus.at(c.device).dram_bytes_per_second;
  m.report = [peak = m.bytes_ceiling, bytes = m.work.bytes](benchmark::State& state,
                                                            const Totals& totals) {
    if (peak <= 0 || totals.device_seconds <= 0) return;
    state.counters["peak_bytes_per_second"] = peak;
    state.counters["percent_of_peak"] = 100.0 * bytes * totals.calls / totals.device_seconds / peak;
  };
  return made;
}

}  // namespace offloadbench
