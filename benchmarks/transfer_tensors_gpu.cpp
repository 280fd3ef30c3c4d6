// GPU runners for managed memory (host data consumed by a kernel, four ways) and for many small
// tensors (N copies, one packed copy, one batched call). Setup, one call, a check of that call's
// output once before timing; gpu_calls.h does the timing.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/gpu_calls.h"
#include "benchmarks/transfer_extra.h"
#include "harness/benchmark_case.h"
#include "harness/cuda/cuda_raii.h"
#include "harness/gpu_info.h"
#include "kernels/copy_kernels.h"
#include "kernels/tensor_packing.h"

namespace offloadbench {

namespace {

class ManagedBuffer {
 public:
  explicit ManagedBuffer(std::size_t bytes) { CUDA_CHECK(cudaMallocManaged(&data_, bytes, cudaMemAttachGlobal)); }
  ~ManagedBuffer() { CUDA_CHECK_NOTHROW(cudaFree(data_)); }
  ManagedBuffer(const ManagedBuffer&) = delete;
  ManagedBuffer& operator=(const ManagedBuffer&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
};



bool is_managed(ManagedVariant v) { return v == ManagedVariant::managed || v == ManagedVariant::managed_prefetch; }

}  // namespace

// Every variant: the host writes the bytes (untimed), then the timed call makes them reach a kernel
// that sums them on the device. None is gated: a pageable copy or a prefetch may block the host.
void run_managed(benchmark::State& state, const ManagedCase& c) {
  if (auto problem = gpu_problem(c.device, c.bytes); !problem.empty()) return skip_case(state, problem);
  const int concurrent = device_attribute(cudaDevAttrConcurrentManagedAccess, c.device);
  if (is_managed(c.variant) && !concurrent)
    return skip_case(state, "the device reports no concurrent managed access (cudaDevAttrConcurrentManagedAccess = 0)");

  const std::uint64_t words = c.bytes / sizeof(std::uint32_t);
  std::vector<unsigned char> pattern(c.bytes);
  fill_seeded_bytes(pattern.data(), c.bytes, 4);
  std::uint64_t expected = 0;
  sum_words(&expected, reinterpret_cast<const std::uint32_t*>(pattern.data()), words);

  std::unique_ptr<ManagedBuffer> managed;
  HostBuffer host;
  DeviceBuffer device, sum(sizeof(std::uint64_t));
  void* host_side = nullptr;  // what the host writes before each call
  if (is_managed(c.variant)) {
    managed = std::make_unique<ManagedBuffer>(c.bytes);
    host_side = managed->data();
  } else {
    host = HostBuffer(c.bytes, c.variant == ManagedVariant::pinned_copy ? HostMemoryKind::pinned
                                                                        : HostMemoryKind::pageable);
    device = DeviceBuffer(c.bytes);
    host_side = host.data();
  }
  const auto host_writes = [&] { std::memcpy(host_side, pattern.data(), c.bytes); };
  const cudaMemLocation on_device{cudaMemLocationTypeDevice, c.device};
  const EnqueueCall call = [&](cudaStream_t stream) {
    const void* consumed = is_managed(c.variant) ? managed->data() : device.data();
    if (c.variant == ManagedVariant::managed_prefetch)
      CUDA_CHECK(cudaMemPrefetchAsync(managed->data(), c.bytes, on_device, 0, stream));
    if (!is_managed(c.variant))
      CUDA_CHECK(cudaMemcpyAsync(device.data(), host.data(), c.bytes, cudaMemcpyHostToDevice, stream));
    sum_words(sum.as<std::uint64_t>(), static_cast<const std::uint32_t*>(consumed), words, stream);
  };

  CudaStream stream;
  host_writes();
  call(stream.get());
  stream.synchronize();
  std::uint64_t got = 0;
  CUDA_CHECK(cudaMemcpy(&got, sum.data(), sizeof(got), cudaMemcpyDeviceToHost));
  if (got != expected) return invalidate_case(state, fmt::format("device sum {} differs from the CPU's {}", got, expected));
  mark_validated(state);

  if (!time_device_calls(state, stream.get(), 1, false, call, host_writes)) return;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c.bytes));
  state.counters["concurrent_managed_access"] = concurrent;
  set_bytes_ceiling(state, link_rate(c.device));
}

namespace {

// The N tensors of one case: their own pageable memory, a pinned pool laid out like the packed
// buffer (the already-pinned sources, and the staging buffer of the packed method), and one device
// buffer with the same layout, so every method writes the same destinations.
struct SmallTensors {
  PackedLayout layout;
  std::vector<std::vector<unsigned char>> pageable;
  HostBuffer pinned;
  DeviceBuffer device;
  std::vector<const void*> pageable_sources, pinned_sources;
  std::vector<void*> destinations;
  std::vector<std::size_t> sizes;

  explicit SmallTensors(const PackedLayout& l)
      : layout(l), pageable(l.sizes.size()), pinned(l.total_bytes, HostMemoryKind::pinned), device(l.total_bytes) {
    for (std::size_t i = 0; i < layout.sizes.size(); ++i) {
      pageable[i].resize(layout.sizes[i]);
      fill_seeded_bytes(pageable[i].data(), layout.sizes[i], 100 + i);
      pageable_sources.push_back(pageable[i].data());
      pinned_sources.push_back(pinned.as<unsigned char>() + layout.offsets[i]);
      destinations.push_back(device.as<unsigned char>() + layout.offsets[i]);
      sizes.push_back(layout.sizes[i]);
    }
    pack_tensors(pinned.data(), pageable_sources.data(), layout);
  }
};

cudaError_t copy_as_batch(const SmallTensors& t, int device, cudaStream_t stream) {
  cudaMemcpyAttributes attributes{};
  attributes.srcAccessOrder = cudaMemcpySrcAccessOrderStream;  // the same promise as cudaMemcpyAsync
  attributes.srcLocHint = {cudaMemLocationTypeHost, 0};
  attributes.dstLocHint = {cudaMemLocationTypeDevice, device};
  std::size_t first_copy = 0;
  return cudaMemcpyBatchAsync(t.destinations.data(), t.pageable_sources.data(), t.sizes.data(), t.sizes.size(),
                              &attributes, &first_copy, 1, stream);
}

// "" when every tensor arrived intact in the device buffer, else which one did not.
std::string check_tensors(const SmallTensors& t) {
  std::vector<unsigned char> packed(t.layout.total_bytes);
  CUDA_CHECK(cudaMemcpy(packed.data(), t.device.data(), packed.size(), cudaMemcpyDeviceToHost));
  std::vector<std::vector<unsigned char>> arrived(t.sizes.size());
  std::vector<void*> views;
  for (std::size_t i = 0; i < arrived.size(); ++i) {
    arrived[i].resize(t.sizes[i]);
    views.push_back(arrived[i].data());
  }
  unpack_tensors(views.data(), packed.data(), t.layout);
  for (std::size_t i = 0; i < arrived.size(); ++i)
    if (arrived[i] != t.pageable[i]) return fmt::format("tensor {} of {} arrived wrong", i, arrived.size());
  return "";
}

double median_pack_seconds(SmallTensors& t) {
  std::vector<double> samples;
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    pack_tensors(t.pinned.data(), t.pageable_sources.data(), t.layout);
    samples.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

void run_small_tensors(benchmark::State& state, const SmallTensorsCase& c) {
  const auto layout =
      pack_layout(draw_tensor_sizes(bert_tiny_layer_parameters(), c.tensors, kSmallTensorsSeed), kPackAlignment);
  if (auto problem = gpu_problem(c.device, layout.total_bytes); !problem.empty()) return skip_case(state, problem);
  SmallTensors t(layout);
  const EnqueueCall call = [&](cudaStream_t stream) {
    switch (c.method) {
      case SmallTensorsMethod::separate_pageable:
      case SmallTensorsMethod::separate_pinned: {
        const auto& sources = c.method == SmallTensorsMethod::separate_pinned ? t.pinned_sources : t.pageable_sources;
        for (std::size_t i = 0; i < t.sizes.size(); ++i)
          CUDA_CHECK(cudaMemcpyAsync(t.destinations[i], sources[i], t.sizes[i], cudaMemcpyHostToDevice, stream));
        break;
      }
      case SmallTensorsMethod::packed_pinned:  // the previous call's copy has finished: staging is free
        pack_tensors(t.pinned.data(), t.pageable_sources.data(), t.layout);
        CUDA_CHECK(cudaMemcpyAsync(t.device.data(), t.pinned.data(), t.layout.total_bytes, cudaMemcpyHostToDevice,
                                   stream));
        break;
      case SmallTensorsMethod::batch_api: CUDA_CHECK(copy_as_batch(t, c.device, stream)); break;
    }
  };

  CudaStream stream;
  CUDA_CHECK(cudaMemset(t.device.data(), 0, t.layout.total_bytes));
  if (c.method == SmallTensorsMethod::batch_api) {
    if (const auto rc = copy_as_batch(t, c.device, stream.get()); rc != cudaSuccess) {
      (void)cudaGetLastError();  // clear the (non-sticky) error before the run goes on
      return skip_case(state, fmt::format("cudaMemcpyBatchAsync is not available here: {}", cudaGetErrorName(rc)));
    }
  } else {
    call(stream.get());
  }
  stream.synchronize();
  if (auto problem = check_tensors(t); !problem.empty()) return invalidate_case(state, problem);
  mark_validated(state);

  time_host_calls(state, stream.get(), call);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * t.layout.payload_bytes));
  if (c.method == SmallTensorsMethod::packed_pinned) state.counters["pack_time_s"] = median_pack_seconds(t);
  set_bytes_ceiling(state, link_rate(c.device));
}

}  // namespace offloadbench
