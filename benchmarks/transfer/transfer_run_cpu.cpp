// Host-side transfer baselines: memcpy between touched buffers (the bandwidth through which the
// driver stages every pageable copy), memcpy into fresh pages, and first touch itself. No GPU
// needed.
#include <sys/mman.h>

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include <fmt/format.h>

#include "benchmarks/transfer/transfer_cases.h"
#include "benchmarks/transfer/transfer_extra_cases.h"
#include "harness/benchmark_case.h"
#include "harness/host_blocks.h"
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

// Page-aligned bytes. Two buffers malloc'd one after the other often lie 16 bytes apart modulo 4
// KiB (the allocator's chunk header), and on an AMD EPYC of family 25 glibc's `rep movsb` memcpy is
// then 20 times slower (64 KiB: 34 us instead of 1.7 us): where the buffers landed decided a
// process's figure. Page-aligned buffers, as pinned and large allocations are, measure the copy
// itself.
class PageAlignedBytes {
 public:
  explicit PageAlignedBytes(std::uint64_t bytes)
      : data_(static_cast<char*>(std::aligned_alloc(kPage, rounded_up(bytes))), &std::free),
        size_(bytes) {
    if (!data_) throw std::bad_alloc();
    std::memset(data_.get(), 0, bytes);  // touched: the pretouched cases measure no page faults
  }
  char* data() const { return data_.get(); }
  std::uint64_t size() const { return size_; }

 private:
  static constexpr std::uint64_t kPage = 4096;
  static std::uint64_t rounded_up(std::uint64_t bytes) {
    return (std::max<std::uint64_t>(bytes, 1) + kPage - 1) / kPage * kPage;
  }
  std::unique_ptr<char, decltype(&std::free)> data_;
  std::uint64_t size_;
};

// Every byte of dst equals src: checked once, outside the timed region.
bool same_bytes(const PageAlignedBytes& src, const char* dst) {
  return std::memcmp(src.data(), dst, src.size()) == 0;
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

// The source and destination of one size's memcpy cases, filled and touched once: the cases of a
// size (one thread, all threads, into fresh pages) run one after another, and each used to pay its
// own.
struct CopyArrays {
  PageAlignedBytes src, dst;
};
std::shared_ptr<CopyArrays> copy_arrays(std::uint64_t bytes) {
  auto arrays = std::static_pointer_cast<CopyArrays>(kept_for_family("transfer/host_memcpy"));
  if (arrays && arrays->src.size() == bytes) return arrays;
  keep_for_family("transfer/host_memcpy", nullptr);  // another size's go first
  arrays =
      std::make_shared<CopyArrays>(CopyArrays{PageAlignedBytes(bytes), PageAlignedBytes(bytes)});
  fill_seeded_bytes(arrays->src.data(), bytes,
                    7);  // seeded: a copy from the wrong offset differs too
  keep_for_family("transfer/host_memcpy", arrays);
  return arrays;
}

}  // namespace

MeasuredCase setup_host_memcpy(std::uint64_t bytes, int threads) {
  if (auto problem = host_fit_problem(2 * bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  auto arrays = copy_arrays(bytes);
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [arrays, bytes, threads] {
    parallel_memcpy(arrays->dst.data(), arrays->src.data(), bytes, threads);
    benchmark::DoNotOptimize(arrays->dst.data());
    benchmark::ClobberMemory();
  };
  m.verify = [arrays, call = m.call]() -> std::string {
    call();
    return same_bytes(arrays->src, arrays->dst.data()) ? ""
                                                       : "memcpy output differs from its input";
  };
  m.verify_warms_up = true;
  m.verify_only_checks = true;  // both buffers were touched at set-up
  m.work.bytes = 2.0 * bytes;   // read + write
  return made;
}

MeasuredCase setup_host_memcpy_first_touch(std::uint64_t bytes) {
  if (auto problem = host_fit_problem(3 * bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  const auto arrays = copy_arrays(bytes);
  const std::shared_ptr<const PageAlignedBytes> src(arrays, &arrays->src);
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [src, bytes] {
    FreshPages dst(bytes);  // mapping is cheap; the faults happen inside memcpy
    std::memcpy(dst.data(), src->data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  };
  m.verify = [src, bytes]() -> std::string {
    FreshPages check(bytes);
    std::memcpy(check.data(), src->data(), bytes);
    return same_bytes(*src, check.data()) ? "" : "memcpy output differs from its input";
  };
  m.verify_warms_up =
      true;  // fresh pages each call: a warm-up only warms the source, as verify did
  m.work.bytes = 2.0 * bytes;  // read + write
  return made;
}

MeasuredCase setup_first_touch(std::uint64_t bytes) {
  if (auto problem = host_fit_problem(bytes); !problem.empty()) return MeasuredCase::skip(problem);
  MeasuredCase made;
  Measurement& m = made.measurement;
  const auto touch = [bytes](const FreshPages& pages) { std::memset(pages.data(), 1, bytes); };
  m.call = [bytes, touch] {
    FreshPages pages(bytes);
    touch(pages);
    benchmark::DoNotOptimize(pages.data());
    benchmark::ClobberMemory();
  };
  // Outside the clock, once: the call's work on fresh pages, every byte read back. Its run is the
  // warm-up too (fresh pages each call: a warm-up only warms the code, as this does).
  m.verify = [bytes, touch]() -> std::string {
    const FreshPages pages(bytes);
    touch(pages);
    const char* first = pages.data();
    const char* end = first + bytes;
    const char* wrong = std::find_if(first, end, [](char byte) { return byte != 1; });
    return wrong == end
               ? ""
               : fmt::format("byte {} of the fresh pages is not what was written", wrong - first);
  };
  m.verify_warms_up = true;
  m.work.bytes = static_cast<double>(bytes);
  return made;
}

}  // namespace offloadbench
