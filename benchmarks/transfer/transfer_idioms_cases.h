// The transfer family's cases for the questions people who train models ask: PyTorch's
// copy idioms as the CUDA runtime does them (`op: torch_idiom`, each row naming the idiom it
// models), and pinning at scale, 1-16 GiB, with and without transparent huge pages (`op:
// pin_at_scale` on a GPU, `op: first_touch_at_scale` for the host half that needs none).
// transfer_idioms_cases.cpp registers them; transfer_idioms_run_gpu.cpp and
// transfer_pinning_scale_run_{gpu,cpu}.cpp set them up (the GPU ones are built with CUDA only:
// harness/gpu_runner.h).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/measure.h"
#include "harness/suite.h"

namespace offloadbench {

// ---- PyTorch's idioms ----
// A batch idiom's call moves kBatchesPerCall batches host -> device, each followed by the same
// fixed GPU step (a sum of the batch, checked against its CPU twin, then a wait of gpu_step_s); the
// call ends when the last step has finished. A result idiom's call is one device -> host copy and
// the synchronize the host needs before it can read the result.
enum class TorchIdiom {
  to_from_pageable,  // x.to(device): cudaMemcpyAsync from pageable + cudaStreamSynchronize
  pin_memory_fresh,  // x.pin_memory().to(device, non_blocking=True), a new cudaHostAlloc each batch
  pin_memory_cached,  // the same with PyTorch's caching host allocator: the pinned block is reused
  pin_memory_cached_item,  // pin_memory_cached plus loss.item() after every step
  pin_thread_pipeline,     // DataLoader(pin_memory=True): a pin thread refills pinned staging ahead
  already_pinned,          // the batch already lives in pinned memory: the lower bound
  result_to_pageable,      // y.cpu(): D2H into pageable memory
  result_to_pinned,        // y.to("cpu", non_blocking=True) into pinned memory, then synchronize
  item,                    // loss.item(): a 4-byte D2H and the stream synchronize it forces
};
struct TorchIdiomInfo {
  TorchIdiom idiom;
  const char* name;    // in case names and the rows' `method`
  const char* models;  // the rows' `idiom`: the PyTorch code it stands for
  bool batch;          // a batch idiom (H2D + step); else a result idiom (D2H)
};
const TorchIdiomInfo& torch_idiom_info(TorchIdiom idiom);
const std::vector<TorchIdiom>& all_torch_idioms();

inline constexpr int kBatchesPerCall = 8;
// The pageable batches a batch idiom cycles through: not 2, so a batch copied from the slot of
// the wrong one of two staging buffers is caught by the check.
inline constexpr int kSourceBatches = 3;
inline constexpr std::uint64_t kImageBytes = 224ull * 224 * 3 * 4;  // one 224×224×3 float32 image

struct TorchIdiomCase {
  TorchIdiom idiom = TorchIdiom::to_from_pageable;
  std::uint64_t bytes = 0;  // per batch (batch idioms) or per result (result idioms)
  double gpu_step_s = 0;    // batch idioms: the fixed GPU step after each batch (0: none)
  int device = 0;
};
MeasuredCase setup_torch_idiom(const TorchIdiomCase& c);

// The DataLoader pin thread's schedule, without CUDA (the GPU runner passes its operations in, the
// tests fakes). Two pinned staging slots; batch b uses slot b % 2. The pin thread fills batch b + 1
// (after waiting for the copy out of its slot, batch b - 1, to finish) while the main thread
// enqueues batch b's copy and step; the main thread waits only for the fill of the batch it
// enqueues next.
struct StagedPipelineOps {
  std::function<void(int slot, int batch)>
      fill;  // pin thread: wait for `slot` to be free, refill it
  std::function<void(int slot, int batch)>
      enqueue;                  // main thread: copy out of `slot`, then the step
  std::function<void()> drain;  // main thread: wait for the last step
};
// Runs `batches` batches through the schedule on a pin thread of its own, started and joined here.
void run_staged_pipeline(int batches, const StagedPipelineOps& ops);

// ---- pinning at scale ----
enum class HugePages {
  none,
  madvise
};  // madvise: a 2 MiB-aligned mmap with madvise(MADV_HUGEPAGE)
const char* to_string(HugePages huge_pages);

enum class PinScaleMethod {
  host_alloc,        // cudaHostAlloc: the driver allocates and pins (no huge-page choice)
  register_fresh,    // mmap, cudaHostRegister of untouched pages (the driver faults them in)
  register_touched,  // mmap, one write per 4 KiB page (timed apart), then cudaHostRegister
  register_chunks,   // as register_touched, in cudaHostRegister calls of kRegisterChunkBytes each
};
struct PinScaleMethodInfo {
  PinScaleMethod method;
  const char* name;
  const char* api_calls;  // the rows' pin_operation
  bool mmap;              // its memory is an mmap we make (so huge pages can be asked for)
  bool pretouch;
  bool chunked;
};
const PinScaleMethodInfo& pin_scale_method_info(PinScaleMethod method);
inline constexpr std::uint64_t kRegisterChunkBytes = 256ull << 20;

struct PinScaleCase {
  PinScaleMethod method = PinScaleMethod::host_alloc;
  HugePages huge_pages = HugePages::none;
  std::uint64_t bytes = 0;
  int device = 0;
};
MeasuredCase setup_pin_at_scale(const PinScaleCase& c);  // GPU

// The host half: mmap + one write per 4 KiB page (+ munmap), with or without huge pages. CPU rows.
MeasuredCase setup_first_touch_at_scale(std::uint64_t bytes, HugePages huge_pages);

// Registers every case above (called by register_transfer_suite).
void register_transfer_idioms_cases(const RunConfig& config);

// The sweeps. Batches of 224×224×3 float32 images; result sizes; sizes of pinning at scale (the
// host half stays at 256 MiB in quick mode, a few seconds of CPU; --full goes to 16 GiB where the
// memory available allows, and skips the rest with the reason).
std::vector<std::uint64_t> idiom_batch_images(bool quick);
std::vector<std::uint64_t> idiom_result_bytes(bool quick);
std::vector<std::uint64_t> pin_scale_sizes(bool quick);
std::vector<std::uint64_t> first_touch_scale_sizes(bool quick);
inline constexpr double kIdiomGpuStepSeconds = 2e-3;

}  // namespace offloadbench
