// GPU runners for device-local copies, SM-initiated (zero-copy) copies and latency. Each case's
// setup makes its buffers once and hands the measurement layer (harness/measure.h) one call, the
// work that call does, and a check of one call's output; the layer times, batches and rates.
#include <cuda_runtime.h>

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/transfer/transfer_extra_cases.h"
#include "harness/cuda/event_timer.h"
#include "harness/cuda/gpu_checks.h"
#include "harness/gpu_info.h"
#include "kernels/copy_kernels.h"
#include "kernels/cuda/cuda_raii.h"

namespace offloadbench {

namespace {

// Pinned host memory the GPU can address (cudaHostAllocMapped); device() is its device pointer.
class MappedHostBuffer {
 public:
  explicit MappedHostBuffer(std::size_t bytes) {
    CUDA_CHECK(cudaHostAlloc(&host_, bytes, cudaHostAllocMapped));
    CUDA_CHECK(cudaHostGetDevicePointer(&device_, host_, 0));
  }
  ~MappedHostBuffer() { CUDA_CHECK_NOTHROW(cudaFreeHost(host_)); }
  MappedHostBuffer(const MappedHostBuffer&) = delete;
  MappedHostBuffer& operator=(const MappedHostBuffer&) = delete;
  void* host() const { return host_; }
  void* device() const { return device_; }

 private:
  void* host_ = nullptr;
  void* device_ = nullptr;
};

// CUDA events around each batch on `stream`, behind the copy gate: for calls that never block the
// host.
std::shared_ptr<DeviceTimer> gated_events(cudaStream_t stream) {
  EventTimerOptions timing;
  timing.stream = stream;
  timing.gated = true;
  return std::make_shared<EventTimer>(timing);
}

// Runs one call and waits; then "" when `host_view` of its output holds the seeded pattern, else
// why not. `read_back` (may be empty) brings the output into host_view first.
std::string check_one_call(const std::function<void()>& call, cudaStream_t stream,
                           const void* host_view, std::uint64_t bytes, std::uint64_t seed,
                           const std::function<void()>& read_back = {}) {
  // The set-up's cudaMemcpy/cudaMemset ran on the legacy stream and may still be running (a
  // pageable H2D cudaMemcpy returns once staged, a memset at once); the case's non-blocking stream
  // would not wait.
  CUDA_CHECK(cudaDeviceSynchronize());
  call();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (read_back) read_back();
  const auto at = first_unseeded_byte(host_view, bytes, seed);
  return at == bytes ? "" : fmt::format("byte {} of {} is wrong after one call", at, bytes);
}

constexpr std::uint64_t kChaseBytes = 256ull << 20;  // 2 Mi lines: far more than any L2 holds
constexpr std::uint64_t kChaseStepsPerCall = 10000;  // ≈10 ms at 1 µs per access

const char* const kCannotMapHost =
    "the device cannot map host memory (cudaDevAttrCanMapHostMemory = 0)";

}  // namespace

MeasuredCase setup_device_local_copy(const DeviceLocalCopyCase& c) {
  if (auto problem = gpu_problem(c.device, 2 * c.bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  struct Buffers {
    DeviceBuffer source, destination;
    CudaStream stream;
  };
  auto b = std::make_shared<Buffers>(
      Buffers{DeviceBuffer(c.bytes), DeviceBuffer(c.bytes), CudaStream()});
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [c, b] {
    if (c.initiator == CopyInitiator::copy_engine)
      CUDA_CHECK(cudaMemcpyAsync(b->destination.data(), b->source.data(), c.bytes,
                                 cudaMemcpyDeviceToDevice, b->stream.get()));
    else
      copy_bytes(b->destination.data(), b->source.data(), c.bytes, b->stream.get());
  };
  m.verify = [c, b, call = m.call] {
    std::vector<unsigned char> staging(c.bytes);
    fill_seeded_bytes(staging.data(), c.bytes, 1);
    CUDA_CHECK(cudaMemcpy(b->source.data(), staging.data(), c.bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(b->destination.data(), 0, c.bytes));
    return check_one_call(call, b->stream.get(), staging.data(), c.bytes, 1, [&] {
      CUDA_CHECK(
          cudaMemcpy(staging.data(), b->destination.data(), c.bytes, cudaMemcpyDeviceToHost));
    });
  };
  m.work.bytes = 2.0 * c.bytes;  // read + write, so the rate compares with the DRAM peak
  m.work.items = static_cast<double>(c.bytes);  // the copy size once: nvbandwidth's figure
  m.work.items_rate = "copy_bytes_per_second";
  m.calls_per_batch = calls_per_batch_moving(2.0 * c.bytes);
  m.device = gated_events(b->stream.get());
  m.bytes_ceiling = device_local_ceiling(c.bytes, gpu_inventory().gpus.at(c.device));
  return made;
}

MeasuredCase setup_sm_copy(const SmCopyCase& c) {
  if (auto problem = gpu_problem(c.device, c.bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  if (!device_attribute(cudaDevAttrCanMapHostMemory, c.device))
    return MeasuredCase::skip(kCannotMapHost);
  struct Buffers {
    MappedHostBuffer host;
    DeviceBuffer device;
    CudaStream stream;
    explicit Buffers(std::uint64_t bytes) : host(bytes), device(bytes) {}
  };
  auto b = std::make_shared<Buffers>(c.bytes);
  const bool h2d = c.direction == CopyDirection::h2d;
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [c, b, h2d] {
    void* destination = h2d ? b->device.data() : b->host.device();
    const void* source = h2d ? b->host.device() : b->device.data();
    copy_bytes_uncached(destination, source, c.bytes, b->stream.get());
  };
  m.verify = [c, b, h2d, call = m.call] {
    std::vector<unsigned char> staging(c.bytes);
    if (h2d) {
      fill_seeded_bytes(b->host.host(), c.bytes, 2);
      // Poisoned, so a call that copied nothing cannot pass on a buffer left holding this pattern.
      CUDA_CHECK(cudaMemset(b->device.data(), 0, c.bytes));
      return check_one_call(call, b->stream.get(), staging.data(), c.bytes, 2, [&] {
        CUDA_CHECK(cudaMemcpy(staging.data(), b->device.data(), c.bytes, cudaMemcpyDeviceToHost));
      });
    }
    fill_seeded_bytes(staging.data(), c.bytes, 3);
    CUDA_CHECK(cudaMemcpy(b->device.data(), staging.data(), c.bytes, cudaMemcpyHostToDevice));
    std::memset(b->host.host(), 0, c.bytes);
    return check_one_call(call, b->stream.get(), b->host.host(), c.bytes, 3);
  };
  m.work.bytes = static_cast<double>(c.bytes);
  m.calls_per_batch = calls_per_batch_moving(static_cast<double>(c.bytes));
  m.device = gated_events(b->stream.get());
  m.bytes_ceiling = link_ceiling(c.device);
  m.report = [device = c.device](benchmark::State& state, const Totals&) {
    report_link_under_load(state, device, 1);
  };
  return made;
}

namespace {

// Each call walks kChaseStepsPerCall dependent loads on from where the previous call stopped.
MeasuredCase setup_pointer_chase(const LatencyCase& c) {
  const bool on_host = c.probe == LatencyProbe::chase_mapped_host;
  if (auto problem = gpu_problem(c.device, on_host ? 0 : kChaseBytes); !problem.empty())
    return MeasuredCase::skip(problem);
  if (on_host && !device_attribute(cudaDevAttrCanMapHostMemory, c.device))
    return MeasuredCase::skip(kCannotMapHost);
  struct Chain {
    std::vector<std::uint64_t> twin;  // the chain the CPU twin walks
    std::unique_ptr<MappedHostBuffer> host;
    DeviceBuffer device, position{sizeof(std::uint64_t)};
    const std::uint64_t* next = nullptr;  // the chain the GPU walks
    CudaStream stream;
  };
  auto chain = std::make_shared<Chain>();
  const std::uint64_t nodes = kChaseBytes / sizeof(std::uint64_t);
  chain->twin.resize(nodes);
  build_pointer_chase(chain->twin.data(), nodes, kChaseStrideSlots, 18);
  if (on_host) {
    chain->host = std::make_unique<MappedHostBuffer>(kChaseBytes);
    std::memcpy(chain->host->host(), chain->twin.data(), kChaseBytes);
    chain->next = static_cast<const std::uint64_t*>(chain->host->device());
  } else {
    chain->device = DeviceBuffer(kChaseBytes);
    CUDA_CHECK(
        cudaMemcpy(chain->device.data(), chain->twin.data(), kChaseBytes, cudaMemcpyHostToDevice));
    chain->next = chain->device.as<const std::uint64_t>();
  }
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [chain] {
    pointer_chase(chain->position.as<std::uint64_t>(), chain->next, kChaseStepsPerCall,
                  chain->stream.get());
  };
  // Two calls on the GPU end where two calls of the CPU twin end.
  m.verify = [chain, call = m.call]() -> std::string {
    CUDA_CHECK(cudaMemset(chain->position.data(), 0, sizeof(std::uint64_t)));
    CUDA_CHECK(cudaDeviceSynchronize());  // the memset ran on the legacy stream; the chase's stream
                                          // is non-blocking
    call();
    call();
    chain->stream.synchronize();
    std::uint64_t got = 0, expected = 0;
    CUDA_CHECK(cudaMemcpy(&got, chain->position.data(), sizeof(got), cudaMemcpyDeviceToHost));
    pointer_chase(&expected, chain->twin.data(), 2 * kChaseStepsPerCall);
    return got == expected ? "" : fmt::format("chase ended at slot {}, expected {}", got, expected);
  };
  m.work.latency_steps = static_cast<double>(kChaseStepsPerCall);
  m.calls_per_batch = 1;
  m.device = gated_events(chain->stream.get());
  m.report = [](benchmark::State& state, const Totals&) {
    state.counters["steps_per_call"] = static_cast<double>(kChaseStepsPerCall);
    state.counters["chain_bytes"] = static_cast<double>(kChaseBytes);
  };
  return made;
}

// One call is a 1-byte copy and the wait for it, by the host's wall clock.
MeasuredCase setup_round_trip(const LatencyCase& c) {
  if (auto problem = gpu_problem(c.device, 1); !problem.empty()) return MeasuredCase::skip(problem);
  struct Bytes {
    HostBuffer host{1, HostMemoryKind::pinned}, back{1, HostMemoryKind::pinned};
    DeviceBuffer device{1};
    CudaStream stream;
  };
  auto b = std::make_shared<Bytes>();
  const bool h2d = c.probe == LatencyProbe::round_trip_h2d_pinned;
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [b, h2d] {
    if (h2d)
      CUDA_CHECK(cudaMemcpyAsync(b->device.data(), b->host.data(), 1, cudaMemcpyHostToDevice,
                                 b->stream.get()));
    else
      CUDA_CHECK(cudaMemcpyAsync(b->host.data(), b->device.data(), 1, cudaMemcpyDeviceToHost,
                                 b->stream.get()));
    b->stream.synchronize();
  };
  // The byte must survive the trip: 0x5a up (or down), then the other way into `back`.
  m.verify = [b, h2d, call = m.call]() -> std::string {
    *b->host.as<unsigned char>() = 0x5a;
    if (!h2d) CUDA_CHECK(cudaMemcpy(b->device.data(), b->host.data(), 1, cudaMemcpyHostToDevice));
    if (!h2d) *b->host.as<unsigned char>() = 0;
    call();
    CUDA_CHECK(cudaMemcpy(b->back.data(), b->device.data(), 1, cudaMemcpyDeviceToHost));
    if (*b->back.as<unsigned char>() != 0x5a || *b->host.as<unsigned char>() != 0x5a)
      return "the 1-byte copy did not arrive";
    return "";
  };
  m.work.latency_steps = 1;
  return made;
}

}  // namespace

MeasuredCase setup_latency(const LatencyCase& c) {
  return latency_probe_info(c.probe).chase ? setup_pointer_chase(c) : setup_round_trip(c);
}

}  // namespace offloadbench
