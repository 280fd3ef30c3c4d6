// The memset suite's table of cases: one byte value written over a buffer, by size, in three views
// — cpu_1t, cpu_all (host memory) and gpu_kernel (device memory, L2 flushed before each sample).
// Bytes counted = bytes written (one array, write only: BabelStream weight 1). Rows pair through
// compare_group memset/bytes, so the generic analysis gives GPU-over-CPU speedups and crossovers.
#include "benchmarks/memset/memset_cases.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/benchmark_case.h"
#include "harness/gpu_runner.h"
#include "harness/results/sizes.h"
#include "harness/system_info.h"

namespace offloadbench {

const char* to_string(MemsetView view) {
  switch (view) {
    case MemsetView::cpu_1t:
      return "cpu_1t";
    case MemsetView::cpu_all:
      return "cpu_all";
    case MemsetView::gpu_kernel:
      return "gpu_kernel";
  }
  return "unknown";
}

std::vector<std::uint64_t> memset_sizes(const RunConfig& config) {
  std::vector<std::uint64_t> sizes =
      config.sizes   ? *config.sizes
      : config.quick ? std::vector<std::uint64_t>{4ull << 10, 64ull << 10, 1ull << 20, 16ull << 20,
                                                  256ull << 20}
                     : powers_of_two(4ull << 10, 1ull << 30);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()),
              sizes.end());  // "--sizes 1Ki,1024" is one size
  return sizes;
}

namespace {

// A cold GPU sample costs an L2 flush, a gate and a synchronize (~50 µs of wall time) around a
// memset that may take 2 µs, and Google Benchmark counts only the timed part towards
// --benchmark_min_time: GPU cases ask for a tenth of the mode's default instead (as the compute
// suite's kernel view does).
double gpu_min_time(const RunConfig& config) { return config.quick ? 0.002 : 0.01; }

void register_view(const RunConfig& config, const std::vector<std::uint64_t>& sizes,
                   MemsetView view, int device, int threads) {
  const bool gpu = is_gpu_view(view);
  const std::string suffix = gpu ? config.gpu_suffix(device) : "";
  for (auto bytes : sizes) {
    const MemsetCase c{bytes, view, device, threads};
    nlohmann::json fields = {
        {"op", "memset"},
        {"bytes", bytes},
        {"bytes_counted", "write"},
        {"view", to_string(view)},
        {"compare_group", "memset/bytes"},
        {"series", ""},
        {"sweep", "bytes"},
        {"fill_value", "1..255, another value every call"},
        // Every row of a view carries the label; the summary shows the largest size measured.
        {"headline", fmt::format("memset {}{}", to_string(view), suffix)}};
    if (gpu) {
      fields.update({{"device", device}, {"api", "cudaMemsetAsync"}, {"l2", "flushed"}});
    } else {
      fields.update(
          {{"device", "cpu"},
           {"cpu_threads", threads},
           {"api", "std::memset"},
           {"threading", threads == 1 ? std::string("one thread")
                                      : fmt::format("OpenMP (libgomp): {} contiguous chunks, one "
                                                    "std::memset each, at every size",
                                                    threads)}});
    }
    auto spec = measured_case(
        fmt::format("memset/{}/{}{}", to_string(view), format_size(bytes), suffix), "memset",
        fields, gpu ? Clock::device_events : Clock::host_wall, [c, gpu] {
          return gpu ? OFFLOADBENCH_GPU_RUNNER(setup_memset_gpu)(c) : setup_memset_cpu(c);
        });
    spec.min_time_s = gpu ? gpu_min_time(config) : 0.0;
    register_case(std::move(spec));
  }
}

}  // namespace

void register_memset_suite(const RunConfig& config) {
  const auto sizes = memset_sizes(config);
  for (int device : config.gpu_devices)
    register_view(config, sizes, MemsetView::gpu_kernel, device, 0);
  register_view(config, sizes, MemsetView::cpu_1t, -1, 1);
  const int all_threads = query_host_info().omp_threads;
  if (all_threads > 1) register_view(config, sizes, MemsetView::cpu_all, -1, all_threads);
}

Suite memset_suite() {
  return {"memset",
          "filling a buffer with a byte value: host std::memset (1 and all threads) vs device "
          "cudaMemsetAsync, by size",
          register_memset_suite, "bytes per fill", ""};
}

}  // namespace offloadbench
