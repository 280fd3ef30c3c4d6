// GPU runners for device-local copies, SM-initiated (zero-copy) copies and latency. Each case is
// setup (buffers, pattern), one call enqueued on a stream, and a check of that call's output made
// once before timing; gpu_calls.h does the timing.
#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/gpu_calls.h"
#include "benchmarks/transfer_extra.h"
#include "harness/benchmark_case.h"
#include "harness/cuda/cuda_raii.h"
#include "harness/gpu_info.h"
#include "harness/sizes.h"
#include "kernels/copy_kernels.h"

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



// Runs one call and waits; then "" when `host_view` of its output holds the seeded pattern, else why not.
// `read_back` (may be empty) brings the output into host_view first.
std::string check_one_call(const EnqueueCall& call, cudaStream_t stream, const void* host_view, std::uint64_t bytes,
                           std::uint64_t seed, const std::function<void()>& read_back = {}) {
  call(stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (read_back) read_back();
  const auto at = first_unseeded_byte(host_view, bytes, seed);
  return at == bytes ? "" : fmt::format("byte {} of {} is wrong after one call", at, bytes);
}

constexpr std::uint64_t kChaseBytes = 256ull << 20;  // 2 Mi lines: far more than any L2 holds
constexpr std::uint64_t kChaseStepsPerCall = 10000;  // ≈10 ms at 1 µs per access

}  // namespace

void run_device_local_copy(benchmark::State& state, const DeviceLocalCopyCase& c) {
  if (auto problem = gpu_problem(c.device, 2 * c.bytes); !problem.empty()) return skip_case(state, problem);
  DeviceBuffer source(c.bytes), destination(c.bytes);
  std::vector<unsigned char> pattern(c.bytes);
  fill_seeded_bytes(pattern.data(), c.bytes, 1);
  CUDA_CHECK(cudaMemcpy(source.data(), pattern.data(), c.bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(destination.data(), 0, c.bytes));
  const EnqueueCall call = [&](cudaStream_t stream) {
    if (c.initiator == CopyInitiator::copy_engine)
      CUDA_CHECK(cudaMemcpyAsync(destination.data(), source.data(), c.bytes, cudaMemcpyDeviceToDevice, stream));
    else
      copy_bytes(destination.data(), source.data(), c.bytes, stream);
  };
  CudaStream stream;
  std::vector<unsigned char> readback(c.bytes);
  const auto read_back = [&] {
    CUDA_CHECK(cudaMemcpy(readback.data(), destination.data(), c.bytes, cudaMemcpyDeviceToHost));
  };
  if (auto problem = check_one_call(call, stream.get(), readback.data(), c.bytes, 1, read_back); !problem.empty())
    return invalidate_case(state, problem);
  mark_validated(state);

  if (!time_device_calls(state, stream.get(), calls_per_batch(2 * c.bytes), true, call)) return;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * c.bytes));  // read + write
  state.counters["copy_bytes_per_second"] =
      benchmark::Counter(static_cast<double>(c.bytes), benchmark::Counter::kIsIterationInvariantRate);
  set_bytes_ceiling(state, device_local_ceiling(c.bytes, gpu_inventory().gpus.at(c.device)));
}

void run_sm_copy(benchmark::State& state, const SmCopyCase& c) {
  if (auto problem = gpu_problem(c.device, c.bytes); !problem.empty()) return skip_case(state, problem);
  if (!device_attribute(cudaDevAttrCanMapHostMemory, c.device))
    return skip_case(state, "the device cannot map host memory (cudaDevAttrCanMapHostMemory = 0)");
  MappedHostBuffer host(c.bytes);
  DeviceBuffer device(c.bytes);
  const bool h2d = c.direction == CopyDirection::h2d;
  void* destination = h2d ? device.data() : host.device();
  const void* source = h2d ? host.device() : device.data();
  const EnqueueCall call = [&](cudaStream_t stream) { copy_bytes_uncached(destination, source, c.bytes, stream); };

  CudaStream stream;
  std::vector<unsigned char> staging(c.bytes);
  std::string problem;
  if (h2d) {
    fill_seeded_bytes(host.host(), c.bytes, 2);
    problem = check_one_call(call, stream.get(), staging.data(), c.bytes, 2, [&] {
      CUDA_CHECK(cudaMemcpy(staging.data(), device.data(), c.bytes, cudaMemcpyDeviceToHost));
    });
  } else {
    fill_seeded_bytes(staging.data(), c.bytes, 3);
    CUDA_CHECK(cudaMemcpy(device.data(), staging.data(), c.bytes, cudaMemcpyHostToDevice));
    std::memset(host.host(), 0, c.bytes);
    problem = check_one_call(call, stream.get(), host.host(), c.bytes, 3);
  }
  if (!problem.empty()) return invalidate_case(state, problem);
  mark_validated(state);

  if (!time_device_calls(state, stream.get(), calls_per_batch(c.bytes), true, call)) return;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c.bytes));
  set_bytes_ceiling(state, link_rate(c.device));
}

namespace {

void run_pointer_chase(benchmark::State& state, const LatencyCase& c) {
  const bool on_host = c.probe == LatencyProbe::chase_mapped_host;
  if (auto problem = gpu_problem(c.device, on_host ? 0 : kChaseBytes); !problem.empty())
    return skip_case(state, problem);
  if (on_host && !device_attribute(cudaDevAttrCanMapHostMemory, c.device))
    return skip_case(state, "the device cannot map host memory (cudaDevAttrCanMapHostMemory = 0)");
  const std::uint64_t nodes = kChaseBytes / sizeof(std::uint64_t);
  std::vector<std::uint64_t> chain(nodes);
  build_pointer_chase(chain.data(), nodes, kChaseStrideSlots, 18);
  std::unique_ptr<MappedHostBuffer> host_chain;
  DeviceBuffer device_chain, position(sizeof(std::uint64_t));
  const std::uint64_t* next = nullptr;
  if (on_host) {
    host_chain = std::make_unique<MappedHostBuffer>(kChaseBytes);
    std::memcpy(host_chain->host(), chain.data(), kChaseBytes);
    next = static_cast<const std::uint64_t*>(host_chain->device());
  } else {
    device_chain = DeviceBuffer(kChaseBytes);
    CUDA_CHECK(cudaMemcpy(device_chain.data(), chain.data(), kChaseBytes, cudaMemcpyHostToDevice));
    next = device_chain.as<const std::uint64_t>();
  }
  CUDA_CHECK(cudaMemset(position.data(), 0, sizeof(std::uint64_t)));
  const EnqueueCall call = [&](cudaStream_t stream) {
    pointer_chase(position.as<std::uint64_t>(), next, kChaseStepsPerCall, stream);
  };

  // Two calls on the GPU end where two calls of the CPU twin end.
  CudaStream stream;
  call(stream.get());
  call(stream.get());
  stream.synchronize();
  std::uint64_t got = 0, expected = 0;
  CUDA_CHECK(cudaMemcpy(&got, position.data(), sizeof(got), cudaMemcpyDeviceToHost));
  pointer_chase(&expected, chain.data(), 2 * kChaseStepsPerCall);
  if (got != expected) return invalidate_case(state, fmt::format("chase ended at slot {}, expected {}", got, expected));
  mark_validated(state);

  const auto seconds = time_device_calls(state, stream.get(), 1, true, call);
  if (!seconds) return;
  state.counters["latency_ns"] = *seconds / static_cast<double>(state.iterations()) / kChaseStepsPerCall * 1e9;
  state.counters["steps_per_call"] = static_cast<double>(kChaseStepsPerCall);
  state.counters["chain_bytes"] = static_cast<double>(kChaseBytes);
}

void run_round_trip(benchmark::State& state, const LatencyCase& c) {
  if (auto problem = gpu_problem(c.device, 1); !problem.empty()) return skip_case(state, problem);
  HostBuffer host(1, HostMemoryKind::pinned), back(1, HostMemoryKind::pinned);
  DeviceBuffer device(1);
  const bool h2d = c.probe == LatencyProbe::round_trip_h2d_pinned;
  const EnqueueCall call = [&](cudaStream_t stream) {
    if (h2d) CUDA_CHECK(cudaMemcpyAsync(device.data(), host.data(), 1, cudaMemcpyHostToDevice, stream));
    else CUDA_CHECK(cudaMemcpyAsync(host.data(), device.data(), 1, cudaMemcpyDeviceToHost, stream));
  };
  // The byte must survive the trip: 0x5a up (or down), then the other way into `back`.
  CudaStream stream;
  *host.as<unsigned char>() = 0x5a;
  if (!h2d) CUDA_CHECK(cudaMemcpy(device.data(), host.data(), 1, cudaMemcpyHostToDevice));
  if (!h2d) *host.as<unsigned char>() = 0;
  call(stream.get());
  stream.synchronize();
  CUDA_CHECK(cudaMemcpy(back.data(), device.data(), 1, cudaMemcpyDeviceToHost));
  if (*back.as<unsigned char>() != 0x5a || *host.as<unsigned char>() != 0x5a)
    return invalidate_case(state, "the 1-byte copy did not arrive");
  mark_validated(state);

  const double seconds = time_host_calls(state, stream.get(), call);
  state.counters["latency_ns"] = seconds / static_cast<double>(state.iterations()) * 1e9;
}

}  // namespace

void run_latency(benchmark::State& state, const LatencyCase& c) {
  if (c.probe == LatencyProbe::chase_mapped_host || c.probe == LatencyProbe::chase_device)
    run_pointer_chase(state, c);
  else
    run_round_trip(state, c);
}

}  // namespace offloadbench
