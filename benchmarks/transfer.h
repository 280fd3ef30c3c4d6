// The transfer family: host<->device copies by direction and host memory kind, what pinning costs,
// and the host-memory baseline that a CPU-only machine can still measure.
#pragma once
#include <cstdint>

#include <benchmark/benchmark.h>

#include "harness/host_memory.h"
#include "harness/suite.h"

namespace offloadbench {

enum class CopyDirection { h2d, d2h, bidirectional };
const char* to_string(CopyDirection direction);

struct DeviceCopyCase {
  CopyDirection direction;
  HostMemoryKind host_memory;
  std::uint64_t bytes;  // per direction
  int device;
};

enum class PinOperation { host_alloc, host_register };

struct PinCostCase {
  PinOperation operation;
  std::uint64_t bytes;
  int device;
};

// GPU runners (transfer_gpu.cpp; transfer_gpu_none.cpp skips them in a build without CUDA).
void run_device_copy(benchmark::State& state, const DeviceCopyCase& c);
void run_pin_cost(benchmark::State& state, const PinCostCase& c);

// Host runners (transfer_host.cpp): need no GPU.
void run_host_memcpy(benchmark::State& state, std::uint64_t bytes, int threads);
void run_host_memcpy_first_touch(benchmark::State& state, std::uint64_t bytes);
void run_first_touch(benchmark::State& state, std::uint64_t bytes);

void register_transfer_suite(const RunConfig& config);

}  // namespace offloadbench
