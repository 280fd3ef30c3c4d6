// GPU runner for PyTorch's copy idioms as the CUDA runtime does them (see transfer_idioms_cases.h).
// A batch idiom's call takes kBatchesPerCall batches, cycling through kSourceBatches seeded
// pageable batches, to the device the way the idiom does, each followed by the same GPU step:
// sum_words of the batch into sums[b] (checked against its CPU twin) and a fixed wait. A result
// idiom's call is a D2H copy and the stream synchronize the host needs before reading it. Host wall
// clock: what a training loop waits for. Every call ends with the stream synchronized.
#include <cuda_runtime.h>

#include <array>
#include <stdexcept>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/transfer/transfer_extra_cases.h"
#include "benchmarks/transfer/transfer_idioms_cases.h"
#include "harness/cuda/gpu_checks.h"
#include "harness/cuda/injected_delay.h"
#include "harness/gpu_info.h"
#include "harness/system_info.h"
#include "kernels/copy_kernels.h"
#include "kernels/cuda/cuda_raii.h"

namespace offloadbench {

namespace {

constexpr std::uint64_t kIdiomSeed = 34;  // source batch k holds fill_seeded_bytes(kIdiomSeed + k)

// One cudaHostAlloc block freed with cudaFreeHost: what pin_memory() gets without a caching
// allocator.
struct FreshPinnedBlock {
  void* data = nullptr;
  explicit FreshPinnedBlock(std::size_t bytes) {
    CUDA_CHECK(cudaHostAlloc(&data, bytes, cudaHostAllocDefault));
  }
  ~FreshPinnedBlock() { CUDA_CHECK_NOTHROW(cudaFreeHost(data)); }
  FreshPinnedBlock(const FreshPinnedBlock&) = delete;
  FreshPinnedBlock& operator=(const FreshPinnedBlock&) = delete;
};

struct BatchResources {
  TorchIdiomCase c;
  std::vector<HostBuffer> sources;      // kSourceBatches batches (pinned for already_pinned)
  std::vector<std::uint64_t> expected;  // the CPU twin's sum of each source batch
  std::array<HostBuffer, 2> staging;  // pinned slots: pin_memory_cached(_item), pin_thread_pipeline
  std::array<DeviceBuffer, 2> device;  // batch b lands in device[b % 2]
  std::array<CudaEvent, 2> copied;     // recorded after the copy out of staging[slot]
  DeviceBuffer sums{sizeof(std::uint64_t) * kBatchesPerCall};
  CudaStream stream;

  const void* source(int batch) const { return sources[batch % kSourceBatches].data(); }
  std::uint64_t words() const { return c.bytes / sizeof(std::uint32_t); }

  // The GPU step of batch `batch`, whose bytes are in device[slot].
  void step(int slot, int batch) {
    sum_words(sums.as<std::uint64_t>() + batch, device[slot].as<const std::uint32_t>(), words(),
              stream.get());
    if (c.gpu_step_s > 0) enqueue_injected_delay(c.gpu_step_s, stream.get());
  }
  void copy_up(int slot, const void* from) {
    CUDA_CHECK(
        cudaMemcpyAsync(device[slot].data(), from, c.bytes, cudaMemcpyHostToDevice, stream.get()));
  }
  // Staging slot `slot` refilled with batch `batch`, once the copy out of it (batch - 2) is done.
  void refill(int slot, int batch) {
    CUDA_CHECK(cudaEventSynchronize(copied[slot].get()));
    std::memcpy(staging[slot].data(), source(batch), c.bytes);
  }
  void copy_staged_and_step(int slot, int batch) {
    copy_up(slot, staging[slot].data());
    copied[slot].record(stream.get());
    step(slot, batch);
  }
};

// One call of a batch idiom: kBatchesPerCall batches, then the stream drained.
void run_batches(BatchResources& r) {
  const auto idiom = r.c.idiom;
  if (idiom == TorchIdiom::pin_thread_pipeline) {
    StagedPipelineOps ops;
    ops.fill = [&r](int slot, int batch) {
      CUDA_CHECK(cudaSetDevice(
          r.c.device));  // the pin thread's device, as DataLoader's pin thread sets it
      r.refill(slot, batch);
    };
    ops.enqueue = [&r](int slot, int batch) { r.copy_staged_and_step(slot, batch); };
    ops.drain = [&r] { r.stream.synchronize(); };
    run_staged_pipeline(kBatchesPerCall, ops);
    return;
  }
  for (int batch = 0; batch < kBatchesPerCall; ++batch) {
    const int slot = batch % 2;
    switch (idiom) {
      case TorchIdiom::to_from_pageable:  // non_blocking=False: the copy, then a stream synchronize
        r.copy_up(slot, r.source(batch));
        r.stream.synchronize();
        r.step(slot, batch);
        break;
      case TorchIdiom::pin_memory_fresh: {
        FreshPinnedBlock block(r.c.bytes);
        std::memcpy(block.data, r.source(batch), r.c.bytes);
        r.copy_up(slot, block.data);
        r.copied[slot].record(r.stream.get());
        r.step(slot, batch);
        // The block may go only when the copy out of it is done (cudaFreeHost would wait for it
        // too).
        CUDA_CHECK(cudaEventSynchronize(r.copied[slot].get()));
        break;
      }
      case TorchIdiom::pin_memory_cached:
      case TorchIdiom::pin_memory_cached_item:
        r.refill(slot, batch);
        r.copy_staged_and_step(slot, batch);
        if (idiom == TorchIdiom::pin_memory_cached_item) {
          std::uint32_t loss = 0;  // .item(): a 4-byte copy into pageable memory and a synchronize
          CUDA_CHECK(cudaMemcpyAsync(&loss, r.sums.as<std::uint64_t>() + batch, sizeof(loss),
                                     cudaMemcpyDeviceToHost, r.stream.get()));
          r.stream.synchronize();
          benchmark::DoNotOptimize(loss);
        }
        break;
      case TorchIdiom::already_pinned:
        r.copy_up(slot, r.source(batch));
        r.step(slot, batch);
        break;
      default:
        throw std::logic_error("run_batches: not a batch idiom");
    }
  }
  r.stream.synchronize();
}

std::string verify_batches(BatchResources& r) {
  CUDA_CHECK(cudaMemset(r.sums.data(), 0, r.sums.bytes()));
  for (auto& d : r.device) CUDA_CHECK(cudaMemset(d.data(), 0xA5, d.bytes()));
  for (auto& s : r.staging)
    if (s.data()) std::memset(s.data(), 0xA5, s.bytes());
  CUDA_CHECK(cudaDeviceSynchronize());  // the memsets ran on the legacy stream; the case's stream
                                        // is non-blocking
  run_batches(r);
  std::vector<std::uint64_t> got(kBatchesPerCall);
  CUDA_CHECK(cudaMemcpy(got.data(), r.sums.data(), r.sums.bytes(), cudaMemcpyDeviceToHost));
  for (int batch = 0; batch < kBatchesPerCall; ++batch)
    if (got[batch] != r.expected[batch % kSourceBatches])
      return fmt::format(
          "batch {} reached the GPU step with the wrong bytes (sum {:#x}, expected {:#x})", batch,
          got[batch], r.expected[batch % kSourceBatches]);
  return "";
}

MeasuredCase setup_batch_idiom(const TorchIdiomCase& c) {
  if (auto problem = gpu_problem(c.device, 2 * c.bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  if (auto problem = host_fit_problem((kSourceBatches + 2) * c.bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  auto r = std::make_shared<BatchResources>();
  r->c = c;
  const auto source_kind =
      c.idiom == TorchIdiom::already_pinned ? HostMemoryKind::pinned : HostMemoryKind::pageable;
  for (int k = 0; k < kSourceBatches; ++k) {
    r->sources.emplace_back(c.bytes, source_kind);
    fill_seeded_bytes(r->sources.back().data(), c.bytes, kIdiomSeed + k);
    std::uint64_t sum = 0;
    sum_words(&sum, r->sources.back().as<const std::uint32_t>(), r->words());  // the CPU twin
    r->expected.push_back(sum);
  }
  const bool staged = c.idiom == TorchIdiom::pin_memory_cached ||
                      c.idiom == TorchIdiom::pin_memory_cached_item ||
                      c.idiom == TorchIdiom::pin_thread_pipeline;
  for (int slot = 0; slot < 2; ++slot) {
    if (staged) r->staging[slot] = HostBuffer(c.bytes, HostMemoryKind::pinned);
    r->device[slot] = DeviceBuffer(c.bytes);
  }
  if (c.gpu_step_s > 0) preload_injected_delay();
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [r] { run_batches(*r); };
  m.verify = [r] { return verify_batches(*r); };
  m.calls_per_batch = 1;  // a call is kBatchesPerCall batches and steps: milliseconds at least
  m.work.bytes = static_cast<double>(c.bytes) * kBatchesPerCall;
  m.work.items = kBatchesPerCall;
  m.work.items_rate = "batches_per_second";
  m.bytes_ceiling = link_ceiling(c.device);
  m.report = [](benchmark::State& state, const Totals& totals) {
    if (totals.calls > 0)
      state.counters["batch_time_s"] = totals.seconds / totals.calls / kBatchesPerCall;
  };
  return made;
}

// result_to_pageable, result_to_pinned and item: a D2H copy of `bytes` and a stream synchronize.
MeasuredCase setup_result_idiom(const TorchIdiomCase& c) {
  if (auto problem = gpu_problem(c.device, c.bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  if (auto problem = host_fit_problem(2 * c.bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  struct Result {
    HostBuffer host;
    DeviceBuffer device;
    CudaStream stream;
  };
  const auto kind =
      c.idiom == TorchIdiom::result_to_pinned ? HostMemoryKind::pinned : HostMemoryKind::pageable;
  auto r = std::make_shared<Result>(
      Result{HostBuffer(c.bytes, kind), DeviceBuffer(c.bytes), CudaStream()});
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [c, r] {
    CUDA_CHECK(cudaMemcpyAsync(r->host.data(), r->device.data(), c.bytes, cudaMemcpyDeviceToHost,
                               r->stream.get()));
    r->stream.synchronize();
  };
  m.verify = [c, r, call = m.call]() -> std::string {
    std::vector<unsigned char> pattern(c.bytes);
    fill_seeded_bytes(pattern.data(), c.bytes, kIdiomSeed + kSourceBatches);
    CUDA_CHECK(cudaMemcpy(r->device.data(), pattern.data(), c.bytes, cudaMemcpyHostToDevice));
    std::memset(r->host.data(), 0xA5, c.bytes);
    CUDA_CHECK(cudaDeviceSynchronize());
    call();
    const auto at = first_unseeded_byte(r->host.data(), c.bytes, kIdiomSeed + kSourceBatches);
    return at == c.bytes ? "" : fmt::format("byte {} of the result is wrong after one copy", at);
  };
  m.work.bytes = static_cast<double>(c.bytes);
  m.work.latency_steps = 1;  // a round trip's worth of waiting: the row's latency_ns
  m.bytes_ceiling = link_ceiling(c.device);
  return made;
}

}  // namespace

MeasuredCase setup_torch_idiom(const TorchIdiomCase& c) {
  if (auto reason = gpu_unavailable_reason(c.device); !reason.empty())
    return MeasuredCase::skip(reason);
  return torch_idiom_info(c.idiom).batch ? setup_batch_idiom(c) : setup_result_idiom(c);
}

}  // namespace offloadbench
