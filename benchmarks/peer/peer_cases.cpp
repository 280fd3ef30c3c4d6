// The peer family's table. Byte counting and ceilings, as nvbandwidth counts them:
//   one_way                 bytes / t                         ceiling = the pair's link, one
//   direction bidirectional           2·bytes / t (both copies, joined)  ceiling = the pair's link,
//   both directions all_to_one, one_to_all  (GPUs − 1)·bytes / t, t from the first copy's start to
//   the last copy's end
//                           (nvbandwidth's TOTAL_BW)           ceiling = Σ pair links (over PCIe:
//                           the one GPU's link)
//   all_to_host, host_to_all  bytes / t of the measured GPU's copy alone while every other GPU
//   copies
//                           2·bytes beside it (nvbandwidth's USE_FIRST_BW)  ceiling = its PCIe link
//   latency                 latency_ns per dependent 8-byte load from the peer's memory; no
//   bandwidth
#include "benchmarks/peer/peer_cases.h"

#include <fmt/format.h>

#include "benchmarks/property_table.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"
#include "harness/gpu_runner.h"
#include "harness/nvml.h"
#include "harness/results/sizes.h"

namespace offloadbench {

namespace {
constexpr auto kCe = CopyInitiator::copy_engine;
constexpr auto kSm = CopyInitiator::sm;

const char* initiator_short(CopyInitiator i) {
  return i == CopyInitiator::copy_engine ? "ce" : "sm";
}
}  // namespace

const std::vector<PeerTestcase>& peer_testcases() {
  static const std::vector<PeerTestcase> table = {
      // name                 pattern                     access              initiator  nvbandwidth
      {"read", PeerPattern::one_way, PeerAccess::read, kCe, "device_to_device_memcpy_read_ce"},
      {"write", PeerPattern::one_way, PeerAccess::write, kCe, "device_to_device_memcpy_write_ce"},
      {"bidirectional_read", PeerPattern::bidirectional, PeerAccess::read, kCe,
       "device_to_device_bidirectional_memcpy_read_ce"},
      {"bidirectional_write", PeerPattern::bidirectional, PeerAccess::write, kCe,
       "device_to_device_bidirectional_memcpy_write_ce"},
      {"all_to_one_read", PeerPattern::all_to_one, PeerAccess::read, kCe, "all_to_one_read_ce"},
      {"all_to_one_write", PeerPattern::all_to_one, PeerAccess::write, kCe, "all_to_one_write_ce"},
      {"one_to_all_read", PeerPattern::one_to_all, PeerAccess::read, kCe, "one_to_all_read_ce"},
      {"one_to_all_write", PeerPattern::one_to_all, PeerAccess::write, kCe, "one_to_all_write_ce"},
      {"all_to_host", PeerPattern::all_to_host, PeerAccess::none, kCe, "all_to_host_memcpy_ce"},
      {"host_to_all", PeerPattern::host_to_all, PeerAccess::none, kCe, "host_to_all_memcpy_ce"},
      {"read", PeerPattern::one_way, PeerAccess::read, kSm, "device_to_device_memcpy_read_sm"},
      {"write", PeerPattern::one_way, PeerAccess::write, kSm, "device_to_device_memcpy_write_sm"},
      {"bidirectional_read", PeerPattern::bidirectional, PeerAccess::read, kSm,
       "device_to_device_bidirectional_memcpy_read_sm"},
      {"bidirectional_write", PeerPattern::bidirectional, PeerAccess::write, kSm,
       "device_to_device_bidirectional_memcpy_write_sm"},
      {"all_to_one_read", PeerPattern::all_to_one, PeerAccess::read, kSm, "all_to_one_read_sm"},
      {"all_to_one_write", PeerPattern::all_to_one, PeerAccess::write, kSm, "all_to_one_write_sm"},
      {"one_to_all_read", PeerPattern::one_to_all, PeerAccess::read, kSm, "one_to_all_read_sm"},
      {"one_to_all_write", PeerPattern::one_to_all, PeerAccess::write, kSm, "one_to_all_write_sm"},
      {"all_to_host", PeerPattern::all_to_host, PeerAccess::none, kSm, "all_to_host_memcpy_sm"},
      {"host_to_all", PeerPattern::host_to_all, PeerAccess::none, kSm, "host_to_all_memcpy_sm"},
      {"latency", PeerPattern::latency, PeerAccess::none, kSm, "device_to_device_latency_sm"},
  };
  return table;
}

const char* to_string(PeerPattern pattern) {
  switch (pattern) {
    case PeerPattern::one_way:
      return "one_way";
    case PeerPattern::bidirectional:
      return "bidirectional";
    case PeerPattern::all_to_one:
      return "all_to_one";
    case PeerPattern::one_to_all:
      return "one_to_all";
    case PeerPattern::all_to_host:
      return "all_to_host";
    case PeerPattern::host_to_all:
      return "host_to_all";
    case PeerPattern::latency:
      return "latency";
  }
  return "unknown";
}

const char* to_string(PeerAccess access) {
  switch (access) {
    case PeerAccess::read:
      return "read";
    case PeerAccess::write:
      return "write";
    case PeerAccess::none:
      return "none";
  }
  return "unknown";
}

const char* to_string(PeerLinkKind kind) {
  switch (kind) {
    case PeerLinkKind::nvlink:
      return "nvlink";
    case PeerLinkKind::pcie:
      return "pcie";
    case PeerLinkKind::unknown:
      return "unknown";
  }
  return "unknown";
}

double nvlink_bytes_per_second_per_link(unsigned v) {
  // nvmlNvlinkVersion_t: 1 = 1.0 (20 GB/s), 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0 (25 GB/s),
  // 7 = 5.0 (50 GB/s). Older drivers return the major version (1-4: the same rates), and a bare 5
  // would be NVLink 5: the higher reading wins, a ceiling must never be too low.
  if (v == 1) return 20e9;
  if (v >= 2 && v <= 4) return 25e9;
  if (v == 5 || v == 7) return 50e9;
  if (v == 6) return 25e9;
  return 0;
}

double peer_link_ceiling(const PeerLink& link) {
  if (link.kind == PeerLinkKind::nvlink)
    return link.nvlinks * link.nvlink_bytes_per_second_per_link;
  if (link.kind == PeerLinkKind::pcie) return link.pcie_bytes_per_second;
  return 0;
}

std::vector<PeerCopy> peer_copies(const PeerCase& c) {
  const auto& t = c.testcase;
  const bool read = t.access == PeerAccess::read;
  const std::uint64_t n = c.bytes;
  std::vector<int> others;
  for (int g : c.gpus)
    if (g != c.gpu) others.push_back(g);
  std::vector<PeerCopy> copies;
  switch (t.pattern) {
    case PeerPattern::one_way:  // read: the row pulls from the column; write: it pushes to it
      copies.push_back(read ? PeerCopy{c.peer, c.gpu, c.gpu, n}
                            : PeerCopy{c.gpu, c.peer, c.gpu, n});
      break;
    case PeerPattern::bidirectional:  // both GPUs pull (read) or both push (write), at once
      copies.push_back({c.peer, c.gpu, read ? c.gpu : c.peer, n});
      copies.push_back({c.gpu, c.peer, read ? c.peer : c.gpu, n});
      break;
    case PeerPattern::all_to_one:  // every other GPU writes into the one, or reads from it
      for (int o : others)
        copies.push_back(read ? PeerCopy{c.gpu, o, o, n} : PeerCopy{o, c.gpu, o, n});
      break;
    case PeerPattern::one_to_all:  // the one writes into every other GPU, or reads from each
      for (int o : others)
        copies.push_back(read ? PeerCopy{o, c.gpu, c.gpu, n} : PeerCopy{c.gpu, o, c.gpu, n});
      break;
    case PeerPattern::all_to_host:
    case PeerPattern::host_to_all: {
      const bool to_host = t.pattern == PeerPattern::all_to_host;
      copies.push_back(to_host ? PeerCopy{c.gpu, kHost, c.gpu, n}
                               : PeerCopy{kHost, c.gpu, c.gpu, n});
      // Twice the size, so the interference outlasts the measured copy (nvbandwidth's choice).
      for (int o : others)
        copies.push_back(to_host ? PeerCopy{o, kHost, o, 2 * n, false}
                                 : PeerCopy{kHost, o, o, 2 * n, false});
      break;
    }
    case PeerPattern::latency:  // the row's SMs chase through the column's memory
      copies.push_back({c.peer, c.gpu, c.gpu, n});
      break;
  }
  return copies;
}

double peer_counted_bytes(const PeerCase& c) {
  if (c.testcase.pattern == PeerPattern::latency) return 0;
  double bytes = 0;
  for (const auto& copy : peer_copies(c))
    if (copy.timed) bytes += static_cast<double>(copy.bytes);
  return bytes;
}

std::vector<std::pair<int, int>> ordered_pairs(const std::vector<int>& gpus) {
  std::vector<std::pair<int, int>> pairs;
  for (int a : gpus)
    for (int b : gpus)
      if (a != b) pairs.emplace_back(a, b);
  return pairs;
}

std::string peer_access_problem(int gpu, int peer, bool can_access, int nvml_p2p_status) {
  if (can_access) return "";
  static const char* const kWhy[] = {
      "",
      ": the chipset does not support peer-to-peer between them",
      ": the GPU does not support peer-to-peer (most GeForce and some workstation cards)",
      ": the PCIe topology does not allow it (the GPUs sit under different root complexes, often "
      "different "
      "sockets)",
      ": peer-to-peer is disabled by a driver setting",
      ": not supported between these GPUs",
      ": NVML does not know why",
  };
  const std::string why = nvml_p2p_status > 0 && nvml_p2p_status <= 6 ? kWhy[nvml_p2p_status] : "";
  return fmt::format(
      "no peer-to-peer access from GPU {} to GPU {} (cudaDeviceCanAccessPeer = 0{}); nvbandwidth "
      "leaves such a pair out as \"waived\", and copies between them would go through host memory",
      gpu, peer, why.empty() ? "" : ", NVML P2P status " + std::to_string(nvml_p2p_status) + why);
}

std::string too_few_gpus_problem(const PeerTestcase& t, std::size_t gpus) {
  if (gpus >= 2) return "";
  const bool host = t.pattern == PeerPattern::all_to_host || t.pattern == PeerPattern::host_to_all;
  return fmt::format(
      "{} needs at least 2 GPUs and this run has {} (run with --device all, or a list such as "
      "--device 0,1){}",
      t.nvbandwidth, gpus,
      host ? ": with one GPU it is a plain host<->device copy, which the transfer suite measures"
           : "");
}

std::string nvbandwidth_testcase(const nlohmann::json& fields) {
  const auto text = [&](const char* key) {
    return fields.contains(key) && fields[key].is_string() ? fields[key].get<std::string>() : "";
  };
  if (!text("nvbandwidth").empty()) return text("nvbandwidth");
  const auto op = text("op");
  if (op == "device_local_copy" && text("initiator") == "copy_engine") return "device_local_copy";
  if (op == "device_copy" && text("host_memory") == "pinned" &&
      (text("host_numa").empty() || text("host_numa") == "local")) {
    if (text("direction") == "h2d") return "host_to_device_memcpy_ce";
    if (text("direction") == "d2h") return "device_to_host_memcpy_ce";
  }
  if (op == "sm_copy")
    return text("direction") == "h2d" ? "host_to_device_memcpy_sm" : "device_to_host_memcpy_sm";
  if (op == "latency" && text("probe") == "pointer_chase_mapped_host")
    return "host_device_latency_sm";
  return "";
}

namespace {

// What NVML says lies between GPUs a and b, with their PCIe ceilings.
PeerLink link_between(int a, int b) {
  const auto& gpus = gpu_inventory().gpus;
  PeerLink link;
  const auto n = static_cast<int>(gpus.size());
  if (a < 0 || b < 0 || a >= n || b >= n) return link;
  const auto& ga = gpus[static_cast<std::size_t>(a)];
  const auto& gb = gpus[static_cast<std::size_t>(b)];
  link.pcie_bytes_per_second =
      std::min(ga.link.ceiling_bytes_per_second(), gb.link.ceiling_bytes_per_second());
  const auto nvml = Nvml::instance().peer_link(ga.pci_bus_id, gb.pci_bus_id);
  if (!nvml) return link;
  static const std::pair<int, const char*> kLevels[] = {
      {0, "same_board"},   {10, "single_switch"}, {20, "multiple_switches"},
      {30, "host_bridge"}, {40, "numa_node"},     {50, "system"}};
  for (const auto& [level, name] : kLevels)
    if (nvml->common_ancestor == level) link.path = name;
  if (nvml->p2p_nvlink_status == 0 && nvml->active_nvlinks > 0) {
    link.kind = PeerLinkKind::nvlink;
    link.through_nvswitch =
        nvml->direct_nvlinks == 0;  // every link ends at a switch, not at the peer
    link.nvlinks = link.through_nvswitch ? nvml->active_nvlinks : nvml->direct_nvlinks;
    link.nvlink_bytes_per_second_per_link = nvlink_bytes_per_second_per_link(nvml->nvlink_version);
    if (link.path.empty() || link.through_nvswitch)
      link.path = link.through_nvswitch ? "nvswitch" : "nvlink";
  } else if (nvml->common_ancestor >= 0) {
    link.kind = PeerLinkKind::pcie;
  }
  return link;
}

std::vector<std::uint64_t> peer_sizes(const RunConfig& config) {
  if (config.sizes) return *config.sizes;
  return {512ull << 20};  // nvbandwidth's default buffer size, so figures compare one to one
}

// What a row's bytes_per_second counts (the table at the top of this file).
const char* bytes_counted_text(PeerPattern pattern) {
  switch (pattern) {
    case PeerPattern::one_way:
      return "one copy";
    case PeerPattern::bidirectional:
      return "both copies";
    case PeerPattern::all_to_one:
    case PeerPattern::one_to_all:
      return "every copy (total)";
    case PeerPattern::all_to_host:
    case PeerPattern::host_to_all:
      return "the measured GPU's copy";
    case PeerPattern::latency:
      return "none (latency)";
  }
  return "unknown";
}

void register_one(const PeerCase& c, const std::string& name) {
  const auto& t = c.testcase;
  nlohmann::json fields = {{"op", "peer"},
                           {"testcase", t.name},
                           {"nvbandwidth", t.nvbandwidth},
                           {"pattern", to_string(t.pattern)},
                           {"access", to_string(t.access)},
                           {"initiator", to_string(t.initiator)},
                           {"device", c.gpu},
                           {"gpus", c.gpus},
                           {"bytes_counted", bytes_counted_text(t.pattern)}};
  if (c.bytes > 0) fields["bytes"] = c.bytes;  // a case skipped below two GPUs has no size
  if (c.peer >= 0) {
    fields["peer"] = c.peer;
    const auto link = link_between(c.gpu, c.peer);
    fields["link"] = to_string(link.kind);
    fields["link_path"] = link.path;
    fields["nvlinks"] = link.nvlinks;
  }
  register_case(measured_case(name, "peer", std::move(fields), Clock::device_events,
                              [c] { return OFFLOADBENCH_GPU_RUNNER(setup_peer)(c); }));
}

}  // namespace

double peer_case_ceiling(const PeerCase& c) {
  return peer_ceiling(c, link_between, [](int g) {
    const auto& gpus = gpu_inventory().gpus;
    return g >= 0 && g < static_cast<int>(gpus.size())
               ? gpus[static_cast<std::size_t>(g)].link.ceiling_bytes_per_second()
               : 0.0;
  });
}

PeerLink peer_link_of(int gpu, int peer) { return link_between(gpu, peer); }

void register_peer_suite(const RunConfig& config) {
  const auto& gpus = config.gpu_devices;
  if (gpus.empty()) return;  // --device cpu: no GPU case, as in every family
  for (const auto& t : peer_testcases()) {
    const std::string base = fmt::format("peer/{}/{}", t.name, initiator_short(t.initiator));
    auto problem = too_few_gpus_problem(t, gpus.size());
    if (!problem.empty()) {
      // No usable GPU at all: that is the reason, not the count.
      if (!gpu_inventory().unavailable_reason.empty()) problem = gpu_inventory().unavailable_reason;
      PeerCase c{t, gpus.empty() ? 0 : gpus.front(), -1, gpus, 0, problem};
      register_one(c, base);  // one row per testcase, skipped with the reason
      continue;
    }
    const bool pair = t.pattern == PeerPattern::one_way ||
                      t.pattern == PeerPattern::bidirectional || t.pattern == PeerPattern::latency;
    const auto sizes = t.pattern == PeerPattern::latency ? std::vector<std::uint64_t>{256ull << 20}
                                                         : peer_sizes(config);
    for (auto bytes : sizes) {
      const std::string size = t.pattern == PeerPattern::latency ? "" : "/" + format_size(bytes);
      if (pair) {
        for (const auto& [gpu, peer] : ordered_pairs(gpus))
          register_one({t, gpu, peer, gpus, bytes, ""},
                       fmt::format("{}/gpu:{}/peer:{}{}", base, gpu, peer, size));
      } else {
        for (int gpu : gpus)
          register_one({t, gpu, -1, gpus, bytes, ""}, fmt::format("{}/gpu:{}{}", base, gpu, size));
      }
    }
  }
}

Suite peer_suite() {
  return {"peer",
          "GPU<->GPU copies (CE and SM, read and write, one-way, bidirectional, all-to-one, "
          "one-to-all), "
          "host-link contention and peer latency, under nvbandwidth's testcase names",
          register_peer_suite, "bytes per GPU<->GPU copy", ""};
}

}  // namespace offloadbench
