// The host half of pinning at scale, which needs no GPU: what first touching 1-16 GiB of fresh
// anonymous pages costs with 4 KiB pages and with transparent huge pages asked for by madvise.
// The row records the system's THP mode and how much of the buffer the kernel really backed with
// huge pages (AnonHugePages in /proc/self/smaps), so a user sees whether madvise took.
#include <memory>

#include <fmt/format.h>

#include "benchmarks/transfer/host_pages.h"
#include "benchmarks/transfer/transfer_idioms_cases.h"
#include "harness/system_info.h"

namespace offloadbench {

MeasuredCase setup_first_touch_at_scale(std::uint64_t bytes, HugePages huge_pages) {
  if (auto problem = host_fit_problem(bytes); !problem.empty()) return MeasuredCase::skip(problem);
  const bool huge = huge_pages == HugePages::madvise;
  struct Observed {
    std::uint64_t anon_huge_bytes = 0;  // of one touched buffer, read by verify
  };
  auto observed = std::make_shared<Observed>();
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [bytes, huge] {
    MappedPages pages(bytes, huge);
    pages.touch();
    benchmark::DoNotOptimize(pages.data());
    benchmark::ClobberMemory();
  };
  // Every page holds what touch() wrote, and the kernel's account of huge pages is read here, once,
  // outside the timed calls (reading smaps walks every mapping of the process).
  m.verify = [bytes, huge, observed]() -> std::string {
    MappedPages pages(bytes, huge);
    pages.touch();
    for (std::uint64_t at = 0; at < bytes; at += kBasePageBytes)
      if (pages.data()[at] != static_cast<unsigned char>(at / kBasePageBytes))
        return fmt::format("page at byte {} does not hold what was written", at);
    observed->anon_huge_bytes = anon_huge_bytes(pages.data(), bytes);
    return "";
  };
  m.verify_warms_up = true;  // fresh pages each call, as verify's
  m.calls_per_batch = 1;     // each call maps and touches the whole buffer: 0.1-5 s
  m.work.bytes = static_cast<double>(bytes);
  m.report = [bytes, observed](benchmark::State& state, const Totals& totals) {
    state.counters["anon_huge_pages_bytes"] = static_cast<double>(observed->anon_huge_bytes);
    state.counters["huge_page_fraction"] =
        static_cast<double>(observed->anon_huge_bytes) / static_cast<double>(bytes);
    if (totals.calls > 0 && totals.seconds > 0)
      state.counters["ms_per_gib"] = totals.seconds / static_cast<double>(totals.calls) * 1e3 /
                                     (static_cast<double>(bytes) / (1ull << 30));
  };
  return made;
}

}  // namespace offloadbench
