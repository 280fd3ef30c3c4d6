// The memset family's CPU views, timed by the host wall clock: std::memset over a pre-touched
// buffer on one thread or split over all OpenMP threads (a 2 MiB or larger buffer is a kept host
// block, touched as harness/host_blocks.h says; a smaller one is first touched by the view's
// threads). Also the pieces both sides share: the per-call fill values and the every-byte check.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "benchmarks/memset/memset_cases.h"
#include "harness/benchmark_case.h"
#include "harness/host_blocks.h"
#include "harness/system_info.h"

namespace offloadbench {

std::uint8_t next_fill_value(std::uint8_t previous) {
  return static_cast<std::uint8_t>(previous % 255 + 1);
}

namespace {
std::string check_fill_range(const unsigned char* p, std::uint64_t begin, std::uint64_t end,
                             std::uint64_t bytes, std::uint8_t expected) {
  std::uint64_t pattern;
  std::memset(&pattern, expected, sizeof pattern);
  std::uint64_t i = begin;
  for (; i + 8 <= end;
       i += 8) {  // whole words; the first differing word is searched bytewise below
    std::uint64_t word;
    std::memcpy(&word, p + i, 8);
    if (word != pattern) break;
  }
  for (; i < end; ++i)
    if (p[i] != expected)
      return fmt::format("memset left byte {} of {} at 0x{:02x}, expected 0x{:02x}", i, bytes, p[i],
                         expected);
  return "";
}
}  // namespace

std::string check_fill(const void* data, std::uint64_t bytes, std::uint8_t expected,
                       std::uint64_t page_stride) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (page_stride <= 1 || bytes == 0) return check_fill_range(p, 0, bytes, bytes, expected);
  constexpr std::uint64_t kPage = 4096;
  const std::uint64_t last_page = (bytes - 1) / kPage;
  for (std::uint64_t page = 0; page <= last_page; page += page_stride)
    if (auto wrong =
            check_fill_range(p, page * kPage, std::min(bytes, (page + 1) * kPage), bytes, expected);
        !wrong.empty())
      return wrong;
  return last_page % page_stride == 0
             ? ""
             : check_fill_range(p, last_page * kPage, bytes, bytes, expected);
}

void host_memset(void* data, std::uint64_t bytes, std::uint8_t value, int threads) {
  auto* p = static_cast<char*>(data);
  if (threads <= 1) {
    std::memset(p, value, bytes);
    return;
  }
  // Chunk boundaries on cache lines, so no two threads write one line.
  const std::uint64_t chunk = ((bytes + threads - 1) / threads + 63) / 64 * 64;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const std::uint64_t begin = std::min<std::uint64_t>(bytes, t * chunk);
    const std::uint64_t end = std::min<std::uint64_t>(bytes, begin + chunk);
    if (end > begin) std::memset(p + begin, value, end - begin);
  }
}

MeasuredCase setup_memset_cpu(const MemsetCase& c, HostFill fill) {
  if (auto problem = host_fit_problem(c.bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  struct Buffer {
    // Page-aligned; 2 MiB and larger a kept host block (harness/host_blocks.h), as the compute
    // family's arrays are. Where blocks are not kept (several NUMA nodes) and below 2 MiB, the
    // verify's first write, by the view's own threads, places the pages.
    explicit Buffer(std::uint64_t bytes) : array(bytes, 4096) {}
    HostArray array;
    std::uint8_t value = 0;  // what the latest call wrote
  };
  auto buffer = std::make_shared<Buffer>(c.bytes);
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [buffer, fill, bytes = c.bytes, threads = c.threads] {
    buffer->value = next_fill_value(buffer->value);
    fill(buffer->array.data(), bytes, buffer->value, threads);
    benchmark::DoNotOptimize(buffer->array.data());
    benchmark::ClobberMemory();
  };
  // Outside the clock, twice (so a fill that ignores its value fails too): poison every byte with
  // the complement of the value the next call must write (the first time, this is the first touch,
  // by the view's own threads), run that call, check every byte. A later process of a run, whose
  // first process did all that, does it once and checks a sample of the pages.
  m.verify = [buffer, bytes = c.bytes, threads = c.threads, call = m.call] {
    const bool in_full = check_outputs_in_full();
    for (int round = 0; round < (in_full ? 2 : 1); ++round) {
      const std::uint8_t expected = next_fill_value(buffer->value);
      host_memset(buffer->array.data(), bytes, static_cast<std::uint8_t>(~expected), threads);
      call();
      if (auto wrong = check_fill(buffer->array.data(), bytes, expected,
                                  in_full ? 1 : kSampledFillPageStride);
          !wrong.empty())
        return wrong;
    }
    return std::string();
  };
  m.verify_warms_up = true;
  // Where the buffer's pages were not touched at set-up, verify's first pass places them.
  m.verify_only_checks = buffer->array.pages_touched();
  m.work.bytes = static_cast<double>(c.bytes);  // written once, nothing read: BabelStream weight 1
  return made;
}

}  // namespace offloadbench
