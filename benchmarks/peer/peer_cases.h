// The peer family: copies between GPUs, and many GPUs' copies at once, as nvbandwidth (v0.8)
// measures them and under its testcase names, so its users can check one against the other.
// A read runs the copy in the receiving GPU's context (it pulls); a write in the sending GPU's (it
// pushes). peer_cases.cpp holds the table, the copy plans, byte counting, ceilings and skip
// reasons (all CPU-tested); peer_run_gpu.cpp runs the plans (built with CUDA only:
// harness/gpu_runner.h).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/transfer/transfer_extra_cases.h"
#include "harness/gpu_info.h"
#include "harness/measure.h"
#include "harness/suite.h"

namespace offloadbench {

enum class PeerPattern {
  one_way,        // one GPU pair, one copy
  bidirectional,  // one GPU pair, a copy each way at once
  all_to_one,     // every other GPU acts on one GPU's memory at once
  one_to_all,     // one GPU acts on every other GPU's memory at once
  all_to_host,  // one GPU's D2H copy while every other GPU copies too (contention on the host link)
  host_to_all,  // the same for H2D
  latency,      // a pointer chase by one GPU through another GPU's memory
};
enum class PeerAccess { read, write, none };  // none: host patterns and latency

// One row per nvbandwidth testcase we match.
struct PeerTestcase {
  const char* name;  // ours: the case name's second part
  PeerPattern pattern;
  PeerAccess access;
  CopyInitiator initiator;
  const char* nvbandwidth;  // nvbandwidth's testcase name
};
const std::vector<PeerTestcase>& peer_testcases();
const char* to_string(PeerPattern pattern);
const char* to_string(PeerAccess access);

// What lies between two GPUs, from NVML (harness/nvml.h); unknown without NVML.
enum class PeerLinkKind { unknown, nvlink, pcie };
const char* to_string(PeerLinkKind kind);
struct PeerLink {
  PeerLinkKind kind = PeerLinkKind::unknown;
  std::string path;  // NVML's common ancestor: "single_switch", "host_bridge", "system", ...
  int nvlinks =
      0;  // NVLinks used between the two (direct, or all of the GPU's through an NVSwitch)
  bool through_nvswitch = false;
  double nvlink_bytes_per_second_per_link = 0;  // per direction
  double pcie_bytes_per_second = 0;  // the lower of the two GPUs' PCIe link ceilings, per direction
};
// Per-direction ceiling of one copy between the two; 0 when unknown (the row is then not checked).
double peer_link_ceiling(const PeerLink& link);
// NVLink's per-link, per-direction rate for NVML's version number (nvmlNvlinkVersion_t, or a bare
// major version from older drivers; where the two readings disagree, the higher rate); 0 if
// unknown.
double nvlink_bytes_per_second_per_link(unsigned nvml_version);

// A case: a testcase for one matrix cell. `gpu` is the row of nvbandwidth's matrix (the GPU whose
// context runs a pair's copy, the chasing GPU, the measured GPU of a host pattern); `peer` is the
// column of the pair patterns; for all_to_one / one_to_all `gpu` is the "one" (the column
// nvbandwidth prints it in). `gpus` are all the run's GPUs.
struct PeerCase {
  PeerTestcase testcase;
  int gpu = 0;
  int peer = -1;
  std::vector<int> gpus;
  std::uint64_t bytes = 0;  // per copy
  std::string problem;      // not empty: the case is skipped with it (fewer than two GPUs)
};

// One copy of one call: from/to a GPU index, or kHost.
inline constexpr int kHost = -1;
struct PeerCopy {
  int from = 0;
  int to = 0;
  int context = 0;  // the GPU whose stream (and, for SM copies, whose SMs) run it
  std::uint64_t bytes = 0;
  bool timed = true;  // false: interference only (host patterns), not counted nor waited for
};
// The copies one call makes, as nvbandwidth makes them; the first is the one the timer's stream
// carries.
std::vector<PeerCopy> peer_copies(const PeerCase& c);
// Bytes one call counts: every timed copy's (nvbandwidth's TOTAL_BW for all_to_one / one_to_all,
// the sum of both directions for bidirectional, the measured GPU's copy alone for host patterns).
double peer_counted_bytes(const PeerCase& c);
// The ceiling of the counted bytes per second, from the links of every timed copy; 0 when any is
// unknown. `link(a, b)` is the link between GPUs a and b; `pcie(g)` GPU g's PCIe ceiling per
// direction.
template <typename LinkOf, typename PcieOf>
double peer_ceiling(const PeerCase& c, const LinkOf& link, const PcieOf& pcie);
// Every ordered GPU pair (a, b), a != b, of `gpus`, in nvbandwidth's matrix order.
std::vector<std::pair<int, int>> ordered_pairs(const std::vector<int>& gpus);
// Why GPU `gpu` cannot reach GPU `peer`; `nvml_p2p_status` is nvmlGpuP2PStatus_t (-1: NVML absent).
std::string peer_access_problem(int gpu, int peer, bool can_access, int nvml_p2p_status);
// Why a peer case cannot run with this many GPUs ("" from two up).
std::string too_few_gpus_problem(const PeerTestcase& t, std::size_t gpus);

// The nvbandwidth testcase a row matches (its "nvbandwidth" field, or for the transfer family's
// host<->device cases the one they correspond to); "" when none.
std::string nvbandwidth_testcase(const nlohmann::json& fields);

// The ceiling and the link of a case on this machine (NVML and the GPUs' PCIe links).
double peer_case_ceiling(const PeerCase& c);
PeerLink peer_link_of(int gpu, int peer);

MeasuredCase setup_peer(const PeerCase& c);

// In a build without CUDA a peer case gives its plan's problem first, as setup_peer does
// (gpu_runner.h).
inline std::string gpu_skip_reason(const PeerCase& c) {
  return c.problem.empty() ? gpu_unavailable_reason(c.gpu) : c.problem;
}
void register_peer_suite(const RunConfig& config);
// The suite: its name, what it measures, and the function above (benchmarks/suites.h lists it).
Suite peer_suite();

template <typename LinkOf, typename PcieOf>
double peer_ceiling(const PeerCase& c, const LinkOf& link, const PcieOf& pcie) {
  double total = 0;
  bool all_pcie = true;
  for (const auto& copy : peer_copies(c)) {
    if (!copy.timed) continue;
    const bool host = copy.from == kHost || copy.to == kHost;
    const double one = copy.from == kHost ? pcie(copy.to)
                       : copy.to == kHost ? pcie(copy.from)
                                          : peer_link_ceiling(link(copy.from, copy.to));
    if (one <= 0) return 0;
    all_pcie &= host || link(copy.from, copy.to).kind == PeerLinkKind::pcie;
    total += one;
  }
  // Over PCIe every copy into (or out of) the "one" GPU crosses its one link, in one direction.
  const bool shared_link = c.testcase.pattern == PeerPattern::all_to_one ||
                           c.testcase.pattern == PeerPattern::one_to_all;
  if (shared_link && all_pcie && pcie(c.gpu) > 0) total = std::min(total, pcie(c.gpu));
  return total;
}

}  // namespace offloadbench
