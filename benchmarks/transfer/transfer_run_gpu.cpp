// Host<->device copies timed the nvbandwidth way: CUDA events around a batch of copies queued
// behind a closed gate (the measurement layer's event timer), reported per copy; plus the host wall
// time of a plain synchronous copy, which is what a user's code waits for. Pinning costs are host
// wall time. Buffers are pinned, filled and verified once per case, not per Google Benchmark call.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/transfer/transfer_cases.h"
#include "benchmarks/transfer/transfer_extra_cases.h"
#include "harness/benchmark_case.h"
#include "harness/cuda/event_timer.h"
#include "harness/cuda/gpu_checks.h"
#include "harness/gpu_info.h"
#include "harness/numa.h"
#include "harness/system_info.h"
#include "kernels/cuda/cuda_raii.h"

namespace offloadbench {

namespace {

// Copies per timed batch: enough that small copies are not all launch latency, few for large ones.
int copies_per_batch(std::uint64_t bytes) {
  return calls_per_batch_moving(static_cast<double>(bytes), 4);
}

// The check patterns' seeds (fill_seeded_bytes), one per direction: a bidirectional copy that
// crossed its buffers fails, and no other transfer case fills with these.
constexpr std::uint64_t kH2dSeed = 5, kD2hSeed = 6;

// The buffers and streams of one case. For a bidirectional case `up` carries H2D and `down` D2H at
// once; one-way copies use `up` alone. Streams are declared last so they go first.
struct CopyResources {
  std::unique_ptr<HostNumaBinding> numa;    // first made, last gone: held while the case runs
  int host_memory_node = kNumaNodeUnknown;  // the kernel's answer, read once the buffers exist
  HostBuffer host_up, host_down;
  DeviceBuffer device_up, device_down;
  CudaStream up, down;
};

cudaStream_t d2h_stream(const DeviceCopyCase& c, const CopyResources& r) {
  return c.direction == CopyDirection::bidirectional ? r.down.get() : r.up.get();
}

// One timed call: one copy per direction, queued.
void enqueue_copy(const DeviceCopyCase& c, CopyResources& r) {
  if (c.direction != CopyDirection::d2h)
    CUDA_CHECK(cudaMemcpyAsync(r.device_up.data(), r.host_up.data(), c.bytes,
                               cudaMemcpyHostToDevice, r.up.get()));
  if (c.direction != CopyDirection::h2d)
    CUDA_CHECK(cudaMemcpyAsync(r.host_down.data(), r.device_down.data(), c.bytes,
                               cudaMemcpyDeviceToHost, d2h_stream(c, r)));
}

// Runs one timed call on patterned sources and poisoned destinations, then reads every destination
// back through a device copy into ordinary memory: the CPU reads write-combined memory very slowly,
// so no host buffer of the case is ever read by the CPU.
std::string verify_copy(const DeviceCopyCase& c, CopyResources& r) {
  const auto bytes = c.bytes;
  std::vector<std::uint8_t> scratch(bytes);
  if (c.direction != CopyDirection::d2h) {
    fill_seeded_bytes(r.host_up.data(), bytes,
                      kH2dSeed);  // CPU writes to write-combined memory are fast
    CUDA_CHECK(cudaMemset(r.device_up.data(), 0xA5, bytes));
  }
  if (c.direction != CopyDirection::h2d) {
    fill_seeded_bytes(scratch.data(), bytes, kD2hSeed);
    CUDA_CHECK(cudaMemcpy(r.device_down.data(), scratch.data(), bytes, cudaMemcpyHostToDevice));
    std::memset(r.host_down.data(), 0xA5, bytes);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  enqueue_copy(c, r);
  CUDA_CHECK(cudaDeviceSynchronize());
  if (c.direction != CopyDirection::d2h) {
    CUDA_CHECK(cudaMemcpy(scratch.data(), r.device_up.data(), bytes, cudaMemcpyDeviceToHost));
    if (auto at = first_unseeded_byte(scratch.data(), bytes, kH2dSeed); at != bytes)
      return fmt::format("host-to-device copy corrupted byte {}", at);
  }
  if (c.direction != CopyDirection::h2d) {
    // host_down -> device_down (the copy engine reads it) -> scratch.
    CUDA_CHECK(cudaMemcpy(r.device_down.data(), r.host_down.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(scratch.data(), r.device_down.data(), bytes, cudaMemcpyDeviceToHost));
    if (auto at = first_unseeded_byte(scratch.data(), bytes, kD2hSeed); at != bytes)
      return fmt::format("device-to-host copy corrupted byte {}", at);
  }
  return "";
}

// A bidirectional row counts both directions' bytes over the joined time (bytes_per_second); each
// direction also has its own time, from the batch's start to its stream's last copy, and
// nvbandwidth reports the sum of the two directions' rates counted that way: both are kept.
void report_lanes(benchmark::State& state, std::uint64_t bytes, const Totals& totals) {
  const auto lanes = bidirectional_lane_rates(bytes, totals);
  if (lanes.sum <= 0) return;
  state.counters["h2d_lane_bytes_per_second"] = lanes.h2d;
  state.counters["d2h_lane_bytes_per_second"] = lanes.d2h;
  state.counters["sum_of_lane_rates_bytes_per_second"] =
      lanes.sum;  // nvbandwidth's bidirectional figure
}

// Median host wall time of a synchronous copy (both directions at once for bidirectional).
double synchronous_copy_seconds(const DeviceCopyCase& c, CopyResources& r) {
  return median_wall_seconds(5, [&] {
    if (c.direction == CopyDirection::h2d) {
      CUDA_CHECK(cudaMemcpy(r.device_up.data(), r.host_up.data(), c.bytes, cudaMemcpyHostToDevice));
    } else if (c.direction == CopyDirection::d2h) {
      CUDA_CHECK(
          cudaMemcpy(r.host_down.data(), r.device_down.data(), c.bytes, cudaMemcpyDeviceToHost));
    } else {
      enqueue_copy(c, r);
      CUDA_CHECK(cudaStreamSynchronize(r.up.get()));
      CUDA_CHECK(cudaStreamSynchronize(r.down.get()));
    }
  });
}
}  // namespace

MeasuredCase setup_device_copy(const DeviceCopyCase& c) {
  const int directions = c.direction == CopyDirection::bidirectional ? 2 : 1;
  if (auto problem = gpu_problem(c.device, c.bytes * directions); !problem.empty())
    return MeasuredCase::skip(problem);
  if (auto problem = host_fit_problem(c.bytes * (directions + 1)); !problem.empty())
    return MeasuredCase::skip(problem);

  if (!c.placement.problem.empty()) return MeasuredCase::skip(c.placement.problem);

  auto r = std::make_shared<CopyResources>();
  // Bound before any host buffer is made: allocations and first touches land on the node.
  r->numa = std::make_unique<HostNumaBinding>(c.placement.node);
  const bool bind_failed = !r->numa->problem().empty();
  if (bind_failed && binding_failure_skips(c.placement))
    return MeasuredCase::skip(r->numa->problem());
  if (bind_failed) r->numa.reset();  // the default placement: measured unbound, and the row says so
  if (c.direction != CopyDirection::d2h) {
    r->host_up = HostBuffer(c.bytes, c.host_memory);
    r->device_up = DeviceBuffer(c.bytes);
  }
  if (c.direction != CopyDirection::h2d) {
    r->host_down = HostBuffer(c.bytes, c.host_memory);
    r->device_down = DeviceBuffer(c.bytes);
  }
  const HostBuffer& host = c.direction != CopyDirection::d2h ? r->host_up : r->host_down;
  r->host_memory_node = memory_numa_node(host.data(), host.bytes());
  EventTimerOptions timing;
  timing.stream = r->up.get();
  if (c.direction == CopyDirection::bidirectional) timing.side_streams = {r->down.get()};
  // A pageable cudaMemcpyAsync can block the host until the stream reaches it: never gate those.
  timing.gated = c.host_memory != HostMemoryKind::pageable;

  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [c, r] { enqueue_copy(c, *r); };
  m.verify = [c, r] { return verify_copy(c, *r); };
  m.work.bytes = static_cast<double>(c.bytes) * directions;
  m.calls_per_batch = copies_per_batch(c.bytes);
  m.device = std::make_shared<EventTimer>(timing);
  m.bytes_ceiling =
      link_ceiling(c.device) * directions;  // raised after the run where the link reads higher
  // What a user's synchronous copy waits for: its host_time_s replaces the timed calls' own.
  SideRate synchronous;
  synchronous.rate_counter = "host_bytes_per_second";
  synchronous.time_counter = "host_time_s";
  synchronous.bytes = m.work.bytes;
  synchronous.time = [c, r] { return synchronous_copy_seconds(c, *r); };
  m.side_rates = {synchronous};
  m.report = [c, r, directions, bind_failed](benchmark::State& state, const Totals& totals) {
    report_link_under_load(state, c.device, directions);
    if (c.direction == CopyDirection::bidirectional) report_lanes(state, c.bytes, totals);
    if (bind_failed) state.counters["host_numa_bind_failed"] = 1;
    // -1: the kernel cannot place the pages (driver-mapped pinned memory), -2: more than one node.
    state.counters["host_memory_numa_node"] = r->host_memory_node;
    state.counters["thread_numa_node"] = thread_numa_node();
    state.counters["copies_per_batch"] = copies_per_batch(c.bytes);
  };
  return made;
}

MeasuredCase setup_pin_cost(const PinCostCase& c) {
  if (auto reason = gpu_unavailable_reason(c.device); !reason.empty())
    return MeasuredCase::skip(reason);
  CUDA_CHECK(cudaSetDevice(c.device));
  if (auto problem = host_fit_problem(c.bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  struct PinTimes {
    double pin_s = 0, unpin_s = 0;
    std::int64_t calls = 0;
    int untimed_left =
        0;  // the measurement layer's warm-up calls (harness/measure.cpp): first-pin costs
    HostBuffer memory;  // host_register: touched once, outside the timed calls
  };
  auto times = std::make_shared<PinTimes>();
  if (c.operation == PinOperation::host_register)
    times->memory = HostBuffer(c.bytes, HostMemoryKind::pageable);
  MeasuredCase made;
  Measurement& m = made.measurement;
  times->untimed_left = std::max(m.warmup_calls, 1);  // as many as warm_up makes
  // The call is pin + unpin; each half is also timed alone, by the same wall clock.
  m.call = [c, times] {
    void* p = times->memory.data();
    const double pin_s = wall_seconds([&] {
      if (c.operation == PinOperation::host_alloc)
        CUDA_CHECK(cudaHostAlloc(&p, c.bytes, cudaHostAllocDefault));
      else
        CUDA_CHECK(cudaHostRegister(p, c.bytes, cudaHostRegisterDefault));
    });
    const double unpin_s = wall_seconds([&] {
      if (c.operation == PinOperation::host_alloc)
        CUDA_CHECK(cudaFreeHost(p));
      else
        CUDA_CHECK(cudaHostUnregister(p));
    });
    if (times->untimed_left > 0) {
      --times->untimed_left;
      return;
    }
    times->pin_s += pin_s;
    times->unpin_s += unpin_s;
    ++times->calls;
  };
  m.work.bytes = static_cast<double>(c.bytes);
  m.report = [times](benchmark::State& state, const Totals&) {
    const auto calls = static_cast<double>(std::max<std::int64_t>(times->calls, 1));
    state.counters["pin_time_s"] = times->pin_s / calls;
    state.counters["unpin_time_s"] = times->unpin_s / calls;
    times->pin_s = times->unpin_s = 0;  // the next Google Benchmark call starts afresh
    times->calls = 0;
  };
  return made;
}

}  // namespace offloadbench
