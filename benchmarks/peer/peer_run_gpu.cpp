// GPU runner of the peer family: makes the buffers and streams of a case's copy plan (peer_copies),
// enables peer access where a copy crosses GPUs (a pair without it is skipped with the reason, as
// nvbandwidth "waives" it), and hands the measurement layer one call = every copy of the plan,
// timed by CUDA events on the first copy's GPU behind the copy gate.
#include <cuda_runtime.h>

#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/peer/peer_cases.h"
#include "harness/cuda/gpu_checks.h"
#include "harness/cuda/multi_gpu_timer.h"
#include "harness/gpu_info.h"
#include "harness/numa.h"
#include "harness/nvml.h"
#include "kernels/copy_kernels.h"
#include "kernels/cuda/cuda_raii.h"

namespace offloadbench {

namespace {

// Pinned host memory every GPU sees as pinned and can address (UVA: the host pointer is the
// device's).
class PortableHostBuffer {
 public:
  explicit PortableHostBuffer(std::size_t bytes) {
    CUDA_CHECK(cudaHostAlloc(&data_, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
    std::memset(data_, 0, bytes);
  }
  ~PortableHostBuffer() { CUDA_CHECK_NOTHROW(cudaFreeHost(data_)); }
  PortableHostBuffer(const PortableHostBuffer&) = delete;
  PortableHostBuffer& operator=(const PortableHostBuffer&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
};

// One copy's memory and stream. Device memory lives on its GPU; the stream on the copy's context
// GPU.
struct CopyLane {
  PeerCopy copy;
  DeviceBuffer device_source, device_destination;
  std::unique_ptr<PortableHostBuffer> host_source, host_destination;
  std::unique_ptr<CudaStream> stream;
  void* source() const { return host_source ? host_source->data() : device_source.data(); }
  void* destination() const {
    return host_destination ? host_destination->data() : device_destination.data();
  }
};

struct PeerResources {
  std::unique_ptr<HostNumaBinding> numa;  // first made, last gone
  int host_memory_node = kNumaNodeUnknown;
  std::vector<CopyLane> lanes;
};

constexpr std::uint64_t kChaseBytes = 256ull << 20;  // far more than any L2 holds
constexpr std::uint64_t kChaseStepsPerCall = 10000;
constexpr std::uint64_t kSeedBase = 350;  // no other family fills with these seeds

int nvml_p2p_status(int gpu, int peer) {
  const auto& gpus = gpu_inventory().gpus;
  const auto link = Nvml::instance().peer_link(gpus.at(static_cast<std::size_t>(gpu)).pci_bus_id,
                                               gpus.at(static_cast<std::size_t>(peer)).pci_bus_id);
  return link ? link->p2p_read_status : -1;
}

// "" once `context` can address `other`'s memory directly, else why not.
std::string enable_peer_access(int context, int other) {
  int can = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&can, context, other));
  if (!can) return peer_access_problem(context, other, false, nvml_p2p_status(context, other));
  CurrentDevice on(context);
  const cudaError_t rc = cudaDeviceEnablePeerAccess(other, 0);
  if (rc == cudaSuccess) return "";
  static_cast<void>(cudaGetLastError());  // not sticky: clear it
  if (rc == cudaErrorPeerAccessAlreadyEnabled) return "";
  return fmt::format(
      "peer access from GPU {} to GPU {} is disabled: cudaDeviceEnablePeerAccess failed with {} "
      "({})",
      context, other, cudaGetErrorName(rc), cudaGetErrorString(rc));
}

// "" when every GPU of the plan is usable, holds its buffers, and reaches the GPUs it copies with.
std::string plan_problem(const std::vector<PeerCopy>& copies) {
  std::map<int, std::uint64_t> device_bytes;
  for (const auto& copy : copies) {
    if (copy.from != kHost) device_bytes[copy.from] += copy.bytes;
    if (copy.to != kHost) device_bytes[copy.to] += copy.bytes;
    device_bytes[copy.context] += 0;
  }
  for (const auto& [device, bytes] : device_bytes)
    if (auto problem = gpu_problem(device, bytes); !problem.empty()) return problem;
  for (const auto& copy : copies) {
    if (copy.from == kHost || copy.to == kHost) continue;
    const int other = copy.context == copy.from ? copy.to : copy.from;
    if (auto problem = enable_peer_access(copy.context, other); !problem.empty()) return problem;
  }
  return "";
}

CopyLane make_lane(const PeerCopy& copy) {
  CopyLane lane;
  lane.copy = copy;
  if (copy.from == kHost) {
    lane.host_source = std::make_unique<PortableHostBuffer>(copy.bytes);
  } else {
    CurrentDevice on(copy.from);
    lane.device_source = DeviceBuffer(copy.bytes);
  }
  if (copy.to == kHost) {
    lane.host_destination = std::make_unique<PortableHostBuffer>(copy.bytes);
  } else {
    CurrentDevice on(copy.to);
    lane.device_destination = DeviceBuffer(copy.bytes);
  }
  CurrentDevice on(copy.context);
  lane.stream = std::make_unique<CudaStream>();
  return lane;
}

void enqueue(const CopyLane& lane, CopyInitiator initiator) {
  CurrentDevice on(lane.copy.context);
  if (initiator == CopyInitiator::copy_engine)
    CUDA_CHECK(cudaMemcpyAsync(lane.destination(), lane.source(), lane.copy.bytes,
                               cudaMemcpyDefault, lane.stream->get()));
  else
    copy_bytes(lane.destination(), lane.source(), lane.copy.bytes, lane.stream->get());
}

// Seeded sources, poisoned destinations, one call, then every destination checked byte for byte.
std::string verify_plan(const PeerResources& r, const std::function<void()>& call) {
  std::vector<unsigned char> staging;
  for (std::size_t i = 0; i < r.lanes.size(); ++i) {
    const auto& lane = r.lanes[i];
    const auto bytes = lane.copy.bytes;
    if (lane.host_source) {
      fill_seeded_bytes(lane.host_source->data(), bytes, kSeedBase + i);
    } else {
      staging.resize(bytes);
      fill_seeded_bytes(staging.data(), bytes, kSeedBase + i);
      CUDA_CHECK(cudaMemcpy(lane.device_source.data(), staging.data(), bytes, cudaMemcpyDefault));
    }
    if (lane.host_destination) {
      std::memset(lane.host_destination->data(), 0xA5, bytes);
    } else {
      CurrentDevice on(lane.copy.to);
      CUDA_CHECK(cudaMemset(lane.device_destination.data(), 0xA5, bytes));
    }
  }
  for (const auto& lane : r.lanes) {
    CurrentDevice on(lane.copy.to == kHost ? lane.copy.context : lane.copy.to);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  call();
  for (const auto& lane : r.lanes) lane.stream->synchronize();
  for (std::size_t i = 0; i < r.lanes.size(); ++i) {
    const auto& lane = r.lanes[i];
    const auto bytes = lane.copy.bytes;
    const void* got = lane.host_destination ? lane.host_destination->data() : nullptr;
    if (!got) {
      staging.resize(bytes);
      CUDA_CHECK(
          cudaMemcpy(staging.data(), lane.device_destination.data(), bytes, cudaMemcpyDefault));
      got = staging.data();
    }
    if (auto at = first_unseeded_byte(got, bytes, kSeedBase + i); at != bytes)
      return fmt::format("copy {} (GPU {} -> GPU {}, -1 = host) corrupted byte {} of {}", i,
                         lane.copy.from, lane.copy.to, at, bytes);
  }
  return "";
}

MeasuredCase setup_copies(const PeerCase& c) {
  const auto copies = peer_copies(c);
  if (auto problem = plan_problem(copies); !problem.empty()) return MeasuredCase::skip(problem);
  auto r = std::make_shared<PeerResources>();
  const bool host = c.testcase.pattern == PeerPattern::all_to_host ||
                    c.testcase.pattern == PeerPattern::host_to_all;
  if (host) {  // host memory beside the measured GPU, as nvbandwidth's HostBuffer(size, deviceId)
    const auto numa = read_numa_topology();
    const int gpu_node = gpu_inventory().gpus.at(static_cast<std::size_t>(c.gpu)).numa_node;
    r->numa = std::make_unique<HostNumaBinding>(local_bind_node(gpu_node, numa));
    if (!r->numa->problem().empty())
      r->numa.reset();  // beside the GPU when it can be; unbound else
  }
  for (const auto& copy : copies) r->lanes.push_back(make_lane(copy));
  if (host) {
    const auto& first = r->lanes.front();
    r->host_memory_node = memory_numa_node(
        first.host_source ? first.host_source->data() : first.destination(), first.copy.bytes);
  }
  std::vector<TimedStream> streams;
  for (const auto& lane : r->lanes)
    streams.push_back({lane.copy.context, lane.stream->get(), lane.copy.timed});
  const auto initiator = c.testcase.initiator;
  const double counted = peer_counted_bytes(c);

  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [r, initiator] {
    for (const auto& lane : r->lanes) enqueue(lane, initiator);
  };
  m.verify = [r, call = m.call] { return verify_plan(*r, call); };
  // Interference left over from the last batch must not eat into this one's start.
  m.before_batch = [r] {
    for (const auto& lane : r->lanes)
      if (!lane.copy.timed) lane.stream->synchronize();
  };
  m.work.bytes = counted;
  m.calls_per_batch = calls_per_batch_moving(counted, 1, 16);
  m.device = std::make_shared<MultiGpuEventTimer>(streams);
  m.bytes_ceiling = peer_case_ceiling(c);
  m.report = [r, host](benchmark::State& state, const Totals&) {
    state.counters["copies_per_call"] = static_cast<double>(r->lanes.size());
    if (!host) return;
    state.counters["host_memory_numa_node"] = r->host_memory_node;
    state.counters["thread_numa_node"] = thread_numa_node();
  };
  return made;
}

// The row GPU's SMs walk a chain in the column GPU's memory: one dependent load per step.
MeasuredCase setup_peer_latency(const PeerCase& c) {
  if (auto problem = gpu_problem(c.peer, kChaseBytes); !problem.empty())
    return MeasuredCase::skip(problem);
  if (auto problem = gpu_problem(c.gpu, sizeof(std::uint64_t)); !problem.empty())
    return MeasuredCase::skip(problem);
  if (auto problem = enable_peer_access(c.gpu, c.peer); !problem.empty())
    return MeasuredCase::skip(problem);
  struct Chain {
    std::vector<std::uint64_t> twin;
    DeviceBuffer on_peer, position;
    std::unique_ptr<CudaStream> stream;
  };
  auto chain = std::make_shared<Chain>();
  const std::uint64_t nodes = kChaseBytes / sizeof(std::uint64_t);
  chain->twin.resize(nodes);
  build_pointer_chase(chain->twin.data(), nodes, kChaseStrideSlots, 35);
  {
    CurrentDevice on(c.peer);
    chain->on_peer = DeviceBuffer(kChaseBytes);
    CUDA_CHECK(
        cudaMemcpy(chain->on_peer.data(), chain->twin.data(), kChaseBytes, cudaMemcpyHostToDevice));
  }
  CurrentDevice on(c.gpu);
  chain->position = DeviceBuffer(sizeof(std::uint64_t));
  chain->stream = std::make_unique<CudaStream>();
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [chain, gpu = c.gpu] {
    CurrentDevice on(gpu);
    pointer_chase(chain->position.as<std::uint64_t>(), chain->on_peer.as<const std::uint64_t>(),
                  kChaseStepsPerCall, chain->stream->get());
  };
  m.verify = [chain, gpu = c.gpu, call = m.call]() -> std::string {
    {
      CurrentDevice on(gpu);
      CUDA_CHECK(cudaMemset(chain->position.data(), 0, sizeof(std::uint64_t)));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    call();
    call();
    chain->stream->synchronize();
    std::uint64_t got = 0, expected = 0;
    CUDA_CHECK(cudaMemcpy(&got, chain->position.data(), sizeof(got), cudaMemcpyDeviceToHost));
    pointer_chase(&expected, chain->twin.data(), 2 * kChaseStepsPerCall);
    return got == expected ? "" : fmt::format("chase ended at slot {}, expected {}", got, expected);
  };
  m.work.latency_steps = static_cast<double>(kChaseStepsPerCall);
  m.calls_per_batch = 1;
  m.device = std::make_shared<MultiGpuEventTimer>(
      std::vector<TimedStream>{{c.gpu, chain->stream->get(), true}});
  m.report = [](benchmark::State& state, const Totals&) {
    state.counters["steps_per_call"] = static_cast<double>(kChaseStepsPerCall);
    state.counters["chain_bytes"] = static_cast<double>(kChaseBytes);
  };
  return made;
}

}  // namespace

MeasuredCase setup_peer(const PeerCase& c) {
  if (!c.problem.empty()) return MeasuredCase::skip(c.problem);
  if (c.testcase.pattern == PeerPattern::latency) return setup_peer_latency(c);
  return setup_copies(c);
}

}  // namespace offloadbench
