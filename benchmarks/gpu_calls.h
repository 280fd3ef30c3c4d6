// How issue 18's GPU runners check a GPU and time one call, until the measurement layer (issue 11)
// lands; then time_device_calls and time_host_calls are what it replaces. One Google Benchmark iteration is one call, always:
// the device clock sets SetIterationTime(batch seconds / batch), and the runner counts bytes per
// iteration, so rates are per call (not per batch, the defect of the older transfer runner).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <benchmark/benchmark.h>

namespace offloadbench {

// Enqueues the work of one call on the stream; must not block the host when `gated`.
using EnqueueCall = std::function<void(cudaStream_t)>;

// Device clock: CUDA events around `batch` calls (behind the copy gate when `gated`, so host
// enqueue gaps are not timed), per state iteration. `between_batches` (may be empty) runs on the
// host before each batch, outside the events (e.g. moving managed pages back to the host).
// Returns the seconds per call summed over iterations (also reported as device_time_s), or nothing
// (after invalidating the case) when the gate timed out.
std::optional<double> time_device_calls(benchmark::State& state, cudaStream_t stream, int batch, bool gated,
                       const EnqueueCall& enqueue_call, const std::function<void()>& between_batches = {});

// Host clock (the case is registered with Clock::host_wall): each iteration runs one call and
// waits for the stream, so the wall time is what the caller waits for. Returns the wall seconds
// summed over iterations (also reported as host_time_s).
double time_host_calls(benchmark::State& state, cudaStream_t stream, const EnqueueCall& call);

// "" when GPU `device` is usable (it is made current) and `device_bytes` fit in it, else why not.
std::string gpu_problem(int device, std::uint64_t device_bytes);
int device_attribute(cudaDeviceAttr attribute, int device);
// The link's theoretical rate per direction (0 when unknown): the ceiling of every host<->device case.
double link_rate(int device);

// Calls per timed batch for a call that moves `bytes`: ≈64 MiB per batch, 1 to 64 calls.
int calls_per_batch(std::uint64_t bytes);

}  // namespace offloadbench
