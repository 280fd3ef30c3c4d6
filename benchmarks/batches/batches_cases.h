// The batches family: what to send over the bus. An image batch (uint8 HWC) reaches the GPU as a
// normalized CHW tensor either by (a) a CPU normalize to fp32 and an fp32 copy, or (b) a uint8 copy
// and one fused GPU kernel (convert, normalize, transpose), writing fp32 or (c) bf16/fp16; each
// from pageable and pinned host memory. Beside them, the CPU normalize alone on 1 and all threads.
// batches_cases.cpp is the table; batches_run_cpu.cpp and batches_run_gpu.cpp set the cases up
// (the GPU one is built with CUDA only: harness/gpu_runner.h). The kernels:
// kernels/normalize_image.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "harness/measure.h"
#include "harness/suite.h"
#include "kernels/cuda/host_memory.h"
#include "kernels/normalize_image.h"

namespace offloadbench {

struct ImageShape {
  int height = 0, width = 0, channels = 0;
  std::string label() const;  // "224x224x3" (height x width x channels)
  std::uint64_t pixels() const { return static_cast<std::uint64_t>(height) * width; }
  std::uint64_t elements() const { return pixels() * channels; }
};

// Where the normalize runs and what crosses the bus.
enum class Placement {
  cpu_normalize_fp32,  // (a) CPU normalize to fp32 (all threads), copy fp32
  gpu_normalize_fp32,  // (b) copy uint8, GPU kernel to fp32
  gpu_normalize_bf16,  // (c) copy uint8, GPU kernel to bf16
  gpu_normalize_fp16,  // (c) copy uint8, GPU kernel to fp16
};
struct PlacementInfo {
  Placement placement;
  const char* name;
  bool normalize_on_gpu;
  NormalizedType output;
};
const PlacementInfo& placement_info(Placement placement);
const char* to_string(Placement placement);
inline constexpr Placement kPlacements[] = {
    Placement::cpu_normalize_fp32, Placement::gpu_normalize_fp32, Placement::gpu_normalize_bf16,
    Placement::gpu_normalize_fp16};

// One batch from host uint8 to a normalized tensor on GPU `device`, synchronized, by the wall
// clock.
struct BatchToGpuCase {
  ImageShape image;
  int batch = 1;
  Placement placement = Placement::cpu_normalize_fp32;
  HostMemoryKind host_memory =
      HostMemoryKind::pageable;  // what the copy reads: fp32 for (a), uint8 else
  int cpu_threads = 1;           // the CPU normalize's, for (a)
  int device = 0;
};
// Bytes the case copies host -> device: the batch in uint8, or in fp32 for (a).
std::uint64_t bus_bytes(const BatchToGpuCase& c);

// The CPU normalize alone: uint8 HWC in host memory to fp32 CHW in host memory.
struct CpuNormalizeCase {
  ImageShape image;
  int batch = 1;
  int threads = 1;
};

inline constexpr std::uint64_t kBatchSeed =
    34;  // the uint8 pixels: fill_seeded_bytes(…, kBatchSeed)

// The image shapes and batch sizes swept; quick keeps fewer batches, and CPU-only rows whose uint8
// batch is at most kQuickCpuBatchBytes (the CPU normalize of larger ones takes long on a small
// CPU).
std::vector<ImageShape> batch_images();
std::vector<int> batch_sizes(bool quick);
inline constexpr std::uint64_t kQuickCpuBatchBytes = 16ull << 20;

// Setups for the measurement layer (harness/measure.h).
MeasuredCase setup_batch_to_gpu(const BatchToGpuCase& c);     // batches_run_gpu.cpp (CUDA only)
MeasuredCase setup_cpu_normalize(const CpuNormalizeCase& c);  // batches_run_cpu.cpp

void register_batches_suite(const RunConfig& config);
// The suite: its name, what it measures, and the function above (benchmarks/suites.h lists it).
Suite batches_suite();

}  // namespace offloadbench
