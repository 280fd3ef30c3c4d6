// GPU runners for managed memory (host data consumed by a kernel, four ways) and for many small
// tensors (N copies, one packed copy, one batched call). Each setup makes its buffers once and
// hands the measurement layer (harness/measure.h) one call, its bytes and a check of one call's
// output.
#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/transfer/transfer_extra_cases.h"
#include "harness/cuda/event_timer.h"
#include "harness/cuda/gpu_checks.h"
#include "harness/gpu_info.h"
#include "kernels/copy_kernels.h"
#include "kernels/cuda/cuda_raii.h"
#include "kernels/tensor_packing.h"

namespace offloadbench {

namespace {

class ManagedBuffer {
 public:
  explicit ManagedBuffer(std::size_t bytes) {
    CUDA_CHECK(cudaMallocManaged(&data_, bytes, cudaMemAttachGlobal));
  }
  ~ManagedBuffer() { CUDA_CHECK_NOTHROW(cudaFree(data_)); }
  ManagedBuffer(const ManagedBuffer&) = delete;
  ManagedBuffer& operator=(const ManagedBuffer&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
};

// The bytes of one managed case, the buffers they live in, and the device sum they must reach.
struct ManagedBytes {
  std::vector<unsigned char> pattern;
  std::uint64_t expected_sum = 0;
  std::unique_ptr<ManagedBuffer> managed;
  HostBuffer host;
  DeviceBuffer device, sum{sizeof(std::uint64_t)};
  void* host_side = nullptr;  // what the host writes before each call
  CudaStream stream;
};

}  // namespace

// Every variant: the host writes the bytes before each call (untimed), then the timed call makes
// them reach a kernel that sums them on the device. None is gated: a pageable copy or a prefetch
// may block the host.
MeasuredCase setup_managed(const ManagedCase& c) {
  if (auto problem = gpu_problem(c.device, c.bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  const int concurrent = device_attribute(cudaDevAttrConcurrentManagedAccess, c.device);
  if (is_managed(c.variant) && !concurrent)
    return MeasuredCase::skip(
        "the device reports no concurrent managed access (cudaDevAttrConcurrentManagedAccess = 0)");

  auto b = std::make_shared<ManagedBytes>();
  const std::uint64_t words = c.bytes / sizeof(std::uint32_t);
  b->pattern.resize(c.bytes);
  fill_seeded_bytes(b->pattern.data(), c.bytes, 4);
  sum_words(&b->expected_sum, reinterpret_cast<const std::uint32_t*>(b->pattern.data()), words);
  if (is_managed(c.variant)) {
    b->managed = std::make_unique<ManagedBuffer>(c.bytes);
    b->host_side = b->managed->data();
  } else {
    b->host =
        HostBuffer(c.bytes, c.variant == ManagedVariant::pinned_copy ? HostMemoryKind::pinned
                                                                     : HostMemoryKind::pageable);
    b->device = DeviceBuffer(c.bytes);
    b->host_side = b->host.data();
  }
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.before_batch = [c, b] { std::memcpy(b->host_side, b->pattern.data(), c.bytes); };
  m.call = [c, b, words] {
    const cudaStream_t stream = b->stream.get();
    const void* consumed = is_managed(c.variant) ? b->managed->data() : b->device.data();
    const cudaMemLocation on_device{cudaMemLocationTypeDevice, c.device};
    if (c.variant == ManagedVariant::managed_prefetch)
      CUDA_CHECK(cudaMemPrefetchAsync(b->managed->data(), c.bytes, on_device, 0, stream));
    if (!is_managed(c.variant))
      CUDA_CHECK(cudaMemcpyAsync(b->device.data(), b->host.data(), c.bytes, cudaMemcpyHostToDevice,
                                 stream));
    sum_words(b->sum.as<std::uint64_t>(), static_cast<const std::uint32_t*>(consumed), words,
              stream);
  };
  m.verify = [b, write = m.before_batch, call = m.call]() -> std::string {
    write();
    call();
    b->stream.synchronize();
    std::uint64_t got = 0;
    CUDA_CHECK(cudaMemcpy(&got, b->sum.data(), sizeof(got), cudaMemcpyDeviceToHost));
    if (got == b->expected_sum) return "";
    return fmt::format("device sum {} differs from the CPU's {}", got, b->expected_sum);
  };
  m.work.bytes = static_cast<double>(c.bytes);
  m.calls_per_batch = 1;  // the host rewrites the bytes before every call
  EventTimerOptions timing;
  timing.stream = b->stream.get();
  m.device = std::make_shared<EventTimer>(timing);
  m.bytes_ceiling = link_ceiling(c.device);
  m.report = [concurrent, device = c.device](benchmark::State& state, const Totals&) {
    state.counters["concurrent_managed_access"] = concurrent;
    report_link_under_load(state, device, 1);
  };
  return made;
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
  CudaStream stream;

  explicit SmallTensors(const PackedLayout& l)
      : layout(l),
        pageable(l.sizes.size()),
        pinned(l.total_bytes, HostMemoryKind::pinned),
        device(l.total_bytes) {
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
  // Read during the call, as cudaMemcpyAsync reads pageable memory (it stages it before returning).
  attributes.srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
  attributes.srcLocHint = {cudaMemLocationTypeHost, 0};
  attributes.dstLocHint = {cudaMemLocationTypeDevice, device};
  std::size_t first_copy = 0;
  return cudaMemcpyBatchAsync(t.destinations.data(), t.pageable_sources.data(), t.sizes.data(),
                              t.sizes.size(), &attributes, &first_copy, 1, stream);
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
    if (arrived[i] != t.pageable[i])
      return fmt::format("tensor {} of {} arrived wrong", i, arrived.size());
  return "";
}

}  // namespace

// One call moves the N tensors and waits for them, by the host's wall clock.
MeasuredCase setup_small_tensors(const SmallTensorsCase& c) {
  const auto layout =
      pack_layout(draw_tensor_sizes(bert_tiny_layer_parameters(), c.tensors, kSmallTensorsSeed),
                  kPackAlignment);
  if (auto problem = gpu_problem(c.device, layout.total_bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  if (auto problem = small_tensors_problem(c); !problem.empty()) return MeasuredCase::skip(problem);
  auto t = std::make_shared<SmallTensors>(layout);
  if (c.method == SmallTensorsMethod::batch_api) {
    if (const auto rc = copy_as_batch(*t, c.device, t->stream.get()); rc != cudaSuccess) {
      (void)cudaGetLastError();  // clears a non-sticky error; a fault stays, and gpu_context_error
                                 // says so
      if (auto broken = gpu_context_error(); !broken.empty())
        return MeasuredCase::skip(
            fmt::format("cudaMemcpyBatchAsync faulted the CUDA context: {}", cudaGetErrorName(rc)));
      return MeasuredCase::skip(
          fmt::format("cudaMemcpyBatchAsync is not available here: {}", cudaGetErrorName(rc)));
    }
    t->stream.synchronize();
  }
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [c, t] {
    const cudaStream_t stream = t->stream.get();
    switch (c.method) {
      case SmallTensorsMethod::separate_pageable:
      case SmallTensorsMethod::separate_pinned: {
        const auto& sources = c.method == SmallTensorsMethod::separate_pinned ? t->pinned_sources
                                                                              : t->pageable_sources;
        for (std::size_t i = 0; i < t->sizes.size(); ++i)
          CUDA_CHECK(cudaMemcpyAsync(t->destinations[i], sources[i], t->sizes[i],
                                     cudaMemcpyHostToDevice, stream));
        break;
      }
      case SmallTensorsMethod::packed_pinned:  // the previous call's copy has finished: staging is
                                               // free
        pack_tensors(t->pinned.data(), t->pageable_sources.data(), t->layout);
        CUDA_CHECK(cudaMemcpyAsync(t->device.data(), t->pinned.data(), t->layout.total_bytes,
                                   cudaMemcpyHostToDevice, stream));
        break;
      case SmallTensorsMethod::batch_api:
        CUDA_CHECK(copy_as_batch(*t, c.device, stream));
        break;
    }
    t->stream.synchronize();
  };
  m.verify = [t, call = m.call] {
    CUDA_CHECK(cudaMemset(t->device.data(), 0, t->layout.total_bytes));
    CUDA_CHECK(cudaDeviceSynchronize());  // the memset ran on the legacy stream; the copies' stream
                                          // is non-blocking
    call();
    return check_tensors(*t);
  };
  m.work.bytes = static_cast<double>(t->layout.payload_bytes);
  m.bytes_ceiling = link_ceiling(c.device);
  double pack_s = -1;  // packed_pinned only
  if (c.method == SmallTensorsMethod::packed_pinned)
    pack_s = median_wall_seconds(
        5, [t] { pack_tensors(t->pinned.data(), t->pageable_sources.data(), t->layout); });
  m.report = [pack_s, device = c.device](benchmark::State& state, const Totals&) {
    if (pack_s >= 0) state.counters["pack_time_s"] = pack_s;
    report_link_under_load(state, device, 1);
  };
  return made;
}

}  // namespace offloadbench
