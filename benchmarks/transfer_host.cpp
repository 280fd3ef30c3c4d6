// Host-side transfer baselines: memcpy between touched buffers (the bandwidth through which the
// driver stages every pageable copy), memcpy into fresh pages, and first touch itself. No GPU needed.
#include <sys/mman.h>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/transfer.h"
#include "harness/benchmark_case.h"
#include "harness/current_case.h"
#include "harness/injected_slowdown.h"
#include "harness/sizes.h"
#include "harness/system_info.h"

namespace offloadbench {

namespace {

// Fresh anonymous pages: the kernel maps each one on first write, which is the cost being measured.
class FreshPages {
 public:
  explicit FreshPages(std::uint64_t bytes) : bytes_(bytes) {
    data_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data_ == MAP_FAILED) throw std::bad_alloc();
  }
  ~FreshPages() { munmap(data_, bytes_); }
  FreshPages(const FreshPages&) = delete;
  FreshPages& operator=(const FreshPages&) = delete;
  char* data() const { return static_cast<char*>(data_); }

 private:
  void* data_;
  std::uint64_t bytes_;
};

std::string host_fit_problem(std::uint64_t bytes_needed) {
  const auto available = host_memory_available_bytes();
  if (available != 0 && bytes_needed + (512ull << 20) > available)
    return fmt::format("needs {} of host memory, {} available", format_size(bytes_needed), format_size(available));
  return "";
}

// Every byte of dst equals src: checked once, outside the timed region.
bool same_bytes(const std::vector<char>& src, const char* dst) {
  return std::memcmp(src.data(), dst, src.size()) == 0;
}

void fill_pattern(std::vector<char>& data) {
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 131u + 7u) >> 3);
}

void parallel_memcpy(char* dst, const char* src, std::uint64_t bytes, int threads) {
  if (threads <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const std::uint64_t chunk = (bytes + threads - 1) / threads;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const std::uint64_t begin = std::min<std::uint64_t>(bytes, t * chunk);
    const std::uint64_t end = std::min<std::uint64_t>(bytes, begin + chunk);
    if (end > begin) std::memcpy(dst + begin, src + begin, end - begin);
  }
}

}  // namespace

void run_host_memcpy(benchmark::State& state, std::uint64_t bytes, int threads) {
  if (auto problem = host_fit_problem(2 * bytes); !problem.empty()) return skip_case(state, problem);
  std::vector<char> src(bytes), dst(bytes);
  fill_pattern(src);
  parallel_memcpy(dst.data(), src.data(), bytes, threads);
  if (!same_bytes(src, dst.data())) return invalidate_case(state, "memcpy output differs from its input");
  mark_validated(state);
  SlowdownInjector injected(injected_slowdown_fraction(current_case_name()));  // regression self-test hook
  for (auto _ : state) {
    const InjectedSlowdown slowed(injected);
    parallel_memcpy(dst.data(), src.data(), bytes, threads);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * bytes));
}

void run_host_memcpy_first_touch(benchmark::State& state, std::uint64_t bytes) {
  if (auto problem = host_fit_problem(2 * bytes); !problem.empty()) return skip_case(state, problem);
  std::vector<char> src(bytes);
  fill_pattern(src);
  {
    FreshPages check(bytes);
    std::memcpy(check.data(), src.data(), bytes);
    if (!same_bytes(src, check.data())) return invalidate_case(state, "memcpy output differs from its input");
  }
  mark_validated(state);
  for (auto _ : state) {
    FreshPages dst(bytes);  // mapping is cheap; the faults happen inside memcpy
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * bytes));
}

void run_first_touch(benchmark::State& state, std::uint64_t bytes) {
  if (auto problem = host_fit_problem(bytes); !problem.empty()) return skip_case(state, problem);
  for (auto _ : state) {
    FreshPages pages(bytes);
    std::memset(pages.data(), 1, bytes);
    benchmark::DoNotOptimize(pages.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

}  // namespace offloadbench
