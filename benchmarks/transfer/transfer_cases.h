// The transfer family: host<->device copies by direction and host memory kind, what pinning costs,
// and the host-memory baseline that a CPU-only machine can still measure.
#pragma once
#include <cstdint>

#include "harness/measure.h"
#include "harness/numa.h"
#include "harness/suite.h"
#include "kernels/cuda/host_memory.h"

namespace offloadbench {

enum class CopyDirection { h2d, d2h, bidirectional };
const char* to_string(CopyDirection direction);

struct DeviceCopyCase {
  CopyDirection direction = CopyDirection::h2d;
  HostMemoryKind host_memory = HostMemoryKind::pinned;
  std::uint64_t bytes = 0;  // per direction
  int device = 0;
  HostPlacement placement;  // the host buffers' NUMA node (harness/numa.h); node -1: unbound
};

enum class PinOperation {
  host_alloc,
  host_register
};  // names and API calls: kPinOperations (transfer_cases.cpp)

struct PinCostCase {
  PinOperation operation = PinOperation::host_alloc;
  std::uint64_t bytes = 0;
  int device = 0;
};

// Setups for the measurement layer (harness/measure.h), run once per case.
// GPU (transfer_run_gpu.cpp, built with CUDA only: harness/gpu_runner.h).
MeasuredCase setup_device_copy(const DeviceCopyCase& c);

// A bidirectional copy's rates per direction, each over its own stream's time
// (Totals::lane_seconds: H2D first), and their sum, which is how nvbandwidth reports a
// bidirectional copy. All 0 without both lanes' times.
struct LaneRates {
  double h2d = 0, d2h = 0, sum = 0;
};
LaneRates bidirectional_lane_rates(std::uint64_t bytes_per_direction, const Totals& totals);
MeasuredCase setup_pin_cost(const PinCostCase& c);

// Host (transfer_run_cpu.cpp): need no GPU.
MeasuredCase setup_host_memcpy(std::uint64_t bytes, int threads);
MeasuredCase setup_host_memcpy_first_touch(std::uint64_t bytes);
MeasuredCase setup_first_touch(std::uint64_t bytes);

void register_transfer_suite(const RunConfig& config);
// The suite: its name, what it measures, and the function above (benchmarks/suites.h lists it).
Suite transfer_suite();

}  // namespace offloadbench
