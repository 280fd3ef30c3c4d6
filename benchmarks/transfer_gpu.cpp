// Host<->device copies timed the nvbandwidth way: CUDA events around a batch of copies queued
// behind a closed gate, reported per copy through UseManualTime; plus the host wall time of a
// plain synchronous copy, which is what a user's code waits for. Pinning costs are host wall time.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/transfer.h"
#include "harness/benchmark_case.h"
#include "harness/cuda/copy_gate.h"
#include "harness/cuda/cuda_raii.h"
#include "harness/gpu_info.h"
#include "harness/sizes.h"
#include "harness/system_info.h"

namespace offloadbench {

namespace {

using WallClock = std::chrono::steady_clock;

double seconds_since(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

// Copies per timed batch: enough that small copies are not all launch latency, few for large ones.
int copies_per_batch(std::uint64_t bytes) {
  return static_cast<int>(std::clamp<std::uint64_t>((64ull << 20) / bytes, 4, 64));
}

std::uint8_t pattern_byte(std::uint64_t i, unsigned seed) {
  return static_cast<std::uint8_t>((i * 2654435761u + seed) >> 7);
}

void fill(void* data, std::uint64_t bytes, unsigned seed) {
  auto* p = static_cast<std::uint8_t*>(data);
  for (std::uint64_t i = 0; i < bytes; ++i) p[i] = pattern_byte(i, seed);
}

// Index of the first byte that breaks the pattern, or bytes when none does.
std::uint64_t first_mismatch(const void* data, std::uint64_t bytes, unsigned seed) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  for (std::uint64_t i = 0; i < bytes; ++i)
    if (p[i] != pattern_byte(i, seed)) return i;
  return bytes;
}

// The buffers of one case. For a bidirectional case `up` carries H2D and `down` D2H at once.
struct CopyBuffers {
  HostBuffer host_up, host_down;
  DeviceBuffer device_up, device_down;
};

// Moves a pattern through the buffers the timed copies use and checks every byte came out right.
// Write-combined memory is read back through a normal copy: the CPU reads it very slowly.
std::string verify_copies(const DeviceCopyCase& c, CopyBuffers& b) {
  const auto bytes = c.bytes;
  std::vector<std::uint8_t> scratch(bytes);
  if (c.direction != CopyDirection::d2h) {
    fill(b.host_up.data(), bytes, 1);
    CUDA_CHECK(cudaMemcpy(b.device_up.data(), b.host_up.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(scratch.data(), b.device_up.data(), bytes, cudaMemcpyDeviceToHost));
    if (auto at = first_mismatch(scratch.data(), bytes, 1); at != bytes)
      return fmt::format("host-to-device copy corrupted byte {}", at);
  }
  if (c.direction != CopyDirection::h2d) {
    fill(scratch.data(), bytes, 2);
    CUDA_CHECK(cudaMemcpy(b.device_down.data(), scratch.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b.host_down.data(), b.device_down.data(), bytes, cudaMemcpyDeviceToHost));
    std::memcpy(scratch.data(), b.host_down.data(), bytes);
    if (auto at = first_mismatch(scratch.data(), bytes, 2); at != bytes)
      return fmt::format("device-to-host copy corrupted byte {}", at);
  }
  return "";
}

void enqueue_copies(const DeviceCopyCase& c, CopyBuffers& b, cudaStream_t up, cudaStream_t down, int count) {
  for (int i = 0; i < count; ++i) {
    if (c.direction != CopyDirection::d2h)
      CUDA_CHECK(cudaMemcpyAsync(b.device_up.data(), b.host_up.data(), c.bytes, cudaMemcpyHostToDevice, up));
    if (c.direction != CopyDirection::h2d)
      CUDA_CHECK(cudaMemcpyAsync(b.host_down.data(), b.device_down.data(), c.bytes, cudaMemcpyDeviceToHost, down));
  }
}

// Median host wall time of a synchronous copy (both directions at once for bidirectional).
double synchronous_copy_seconds(const DeviceCopyCase& c, CopyBuffers& b, cudaStream_t up, cudaStream_t down) {
  std::vector<double> samples;
  for (int i = 0; i < 5; ++i) {
    const auto start = WallClock::now();
    if (c.direction == CopyDirection::h2d) {
      CUDA_CHECK(cudaMemcpy(b.device_up.data(), b.host_up.data(), c.bytes, cudaMemcpyHostToDevice));
    } else if (c.direction == CopyDirection::d2h) {
      CUDA_CHECK(cudaMemcpy(b.host_down.data(), b.device_down.data(), c.bytes, cudaMemcpyDeviceToHost));
    } else {
      enqueue_copies(c, b, up, down, 1);
      CUDA_CHECK(cudaStreamSynchronize(up));
      CUDA_CHECK(cudaStreamSynchronize(down));
    }
    samples.push_back(seconds_since(start));
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

void run_device_copy(benchmark::State& state, const DeviceCopyCase& c) {
  if (auto reason = gpu_unavailable_reason(c.device); !reason.empty()) return skip_case(state, reason);
  CUDA_CHECK(cudaSetDevice(c.device));
  const int directions = c.direction == CopyDirection::bidirectional ? 2 : 1;
  if (auto problem = device_fit_problem(c.bytes * directions); !problem.empty()) return skip_case(state, problem);
  const auto host_available = host_memory_available_bytes();
  if (host_available && c.bytes * (directions + 1) + (512ull << 20) > host_available)
    return skip_case(state, fmt::format("needs {} of host memory, {} available",
                                        format_size(c.bytes * (directions + 1)), format_size(host_available)));

  CopyBuffers b;
  if (c.direction != CopyDirection::d2h) {
    b.host_up = HostBuffer(c.bytes, c.host_memory);
    b.device_up = DeviceBuffer(c.bytes);
  }
  if (c.direction != CopyDirection::h2d) {
    b.host_down = HostBuffer(c.bytes, c.host_memory);
    b.device_down = DeviceBuffer(c.bytes);
  }
  if (auto problem = verify_copies(c, b); !problem.empty()) return invalidate_case(state, problem);
  mark_validated(state);

  CudaStream up, down;
  CudaEvent start, up_done, end;
  CopyGate gate;
  // A pageable cudaMemcpyAsync can block the host until the stream reaches it: never gate those.
  const bool gated = c.host_memory != HostMemoryKind::pageable;
  const int batch = copies_per_batch(c.bytes);
  double device_seconds = 0;
  for (auto _ : state) {
    if (gated) gate.close(up.get());
    start.record(up.get());
    CUDA_CHECK(cudaStreamWaitEvent(down.get(), start.get(), 0));
    enqueue_copies(c, b, up.get(), down.get(), batch);
    up_done.record(down.get());
    CUDA_CHECK(cudaStreamWaitEvent(up.get(), up_done.get(), 0));
    end.record(up.get());
    if (gated) gate.open();
    const double seconds = elapsed_seconds(start, end);
    device_seconds += seconds;
    state.SetIterationTime(seconds / batch);
  }
  if (gated && gate.timed_out()) return invalidate_case(state, "copy gate timed out: the batch was not timed");

  const double copies = static_cast<double>(state.iterations()) * batch;
  state.SetBytesProcessed(static_cast<std::int64_t>(copies * c.bytes * directions));
  state.counters["device_time_s"] = device_seconds / copies;
  state.counters["copies_per_batch"] = batch;
  const double host_seconds = synchronous_copy_seconds(c, b, up.get(), down.get());
  state.counters["host_time_s"] = host_seconds;
  state.counters["host_bytes_per_second"] = c.bytes * directions / host_seconds;
  const auto& link = gpu_inventory().gpus.at(c.device).link;
  set_bytes_ceiling(state, link.theoretical_bytes_per_second() * directions);
}

void run_pin_cost(benchmark::State& state, const PinCostCase& c) {
  if (auto reason = gpu_unavailable_reason(c.device); !reason.empty()) return skip_case(state, reason);
  CUDA_CHECK(cudaSetDevice(c.device));
  const auto host_available = host_memory_available_bytes();
  if (host_available && c.bytes + (512ull << 20) > host_available)
    return skip_case(state, fmt::format("needs {} of host memory, {} available", format_size(c.bytes),
                                        format_size(host_available)));
  double pin_seconds = 0, unpin_seconds = 0;
  if (c.operation == PinOperation::host_alloc) {
    for (auto _ : state) {
      void* p = nullptr;
      auto t0 = WallClock::now();
      CUDA_CHECK(cudaHostAlloc(&p, c.bytes, cudaHostAllocDefault));
      pin_seconds += seconds_since(t0);
      auto t1 = WallClock::now();
      CUDA_CHECK(cudaFreeHost(p));
      unpin_seconds += seconds_since(t1);
    }
  } else {
    HostBuffer memory(c.bytes, HostMemoryKind::pageable);  // touched once, outside the loop
    for (auto _ : state) {
      auto t0 = WallClock::now();
      CUDA_CHECK(cudaHostRegister(memory.data(), c.bytes, cudaHostRegisterDefault));
      pin_seconds += seconds_since(t0);
      auto t1 = WallClock::now();
      CUDA_CHECK(cudaHostUnregister(memory.data()));
      unpin_seconds += seconds_since(t1);
    }
  }
  state.counters["pin_time_s"] = benchmark::Counter(pin_seconds, benchmark::Counter::kAvgIterations);
  state.counters["unpin_time_s"] = benchmark::Counter(unpin_seconds, benchmark::Counter::kAvgIterations);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c.bytes));
}

}  // namespace offloadbench
