// The memset family: filling a buffer with one byte value where it lives — host memory (std::memset
// on one thread, or split over all OpenMP threads) and device memory (cudaMemsetAsync) — by size,
// to show how fast `torch.zeros` can go on each side. memset_cases.cpp is the table;
// memset_run_cpu.cpp and memset_run_gpu.cpp (built only with CUDA) run the views.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "harness/measure.h"
#include "harness/suite.h"

namespace offloadbench {

enum class MemsetView { cpu_1t, cpu_all, gpu_kernel };
const char* to_string(MemsetView view);
inline bool is_gpu_view(MemsetView view) { return view == MemsetView::gpu_kernel; }

struct MemsetCase {
  std::uint64_t bytes = 0;
  MemsetView view = MemsetView::cpu_1t;
  int device = 0;   // GPU view: the device
  int threads = 1;  // CPU views: OpenMP threads that share the fill
};

// The fill value of the call after one that wrote `previous`: 1, 2, …, 255, 1, … Never 0, which
// fresh pages already hold; each call writes another value than the last, so a call that writes
// nothing (or a stale value) leaves bytes the check rejects.
std::uint8_t next_fill_value(std::uint8_t previous);

// "" when every checked byte of the `bytes` at `data` equals `expected`, else the first wrong
// byte's offset and value. Checks every byte (8 at a time), or with `page_stride` > 1 every byte of
// every page_stride-th 4 KiB page and of the last page: a later process of a run checks a sample of
// what the first one checked in full (check_outputs_in_full).
std::string check_fill(const void* data, std::uint64_t bytes, std::uint8_t expected,
                       std::uint64_t page_stride = 1);
// A later process's stride: 1 page in 64.
inline constexpr std::uint64_t kSampledFillPageStride = 64;

// The host fill the CPU views time: std::memset on one thread, or `threads` contiguous chunks
// (64-byte aligned boundaries) of one std::memset each, in one OpenMP parallel region.
void host_memset(void* data, std::uint64_t bytes, std::uint8_t value, int threads);
using HostFill = void (*)(void* data, std::uint64_t bytes, std::uint8_t value, int threads);

// Setups for the measurement layer (harness/measure.h), run once per case.
// CPU (memset_run_cpu.cpp). `fill` is what the timed call runs; tests pass a broken one to see the
// check reject it.
MeasuredCase setup_memset_cpu(const MemsetCase& c, HostFill fill = host_memset);
// GPU (memset_run_gpu.cpp; in a build without CUDA the table's OFFLOADBENCH_GPU_RUNNER skips
// instead).
MeasuredCase setup_memset_gpu(const MemsetCase& c);

// The byte sizes of a run: --sizes as given (ascending, without repeats), else quick 4KiB, 64KiB,
// 1MiB, 16MiB, 256MiB, full 4KiB..1GiB in powers of two.
std::vector<std::uint64_t> memset_sizes(const RunConfig& config);

void register_memset_suite(const RunConfig& config);
// The suite: its name, what it measures, and the function above (benchmarks/suites.h lists it).
Suite memset_suite();

}  // namespace offloadbench
