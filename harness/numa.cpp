// NUMA facts from sysfs, the choice of node per case, and the binding: libnuma (dlopen, its C ABI
// declared here, so no numa.h is needed to build) sets the policy; plain syscalls read it back and
// restore it, so what a row records is the kernel's answer, not ours.
#include "harness/numa.h"
#include "harness/pcie.h"

#include <dlfcn.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace offloadbench {

namespace {
constexpr int kMpolFNode = 1 << 0;  // <linux/mempolicy.h>
constexpr int kMpolFAddr = 1 << 1;
constexpr unsigned long kMaxNodeBits =
    4096;  // ≥ any kernel's MAX_NUMNODES, as get_mempolicy requires

int parse_number(const std::string& text, const std::string& what) {
  if (text.empty() || text.size() > 6 ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
    throw std::invalid_argument(fmt::format("'{}' in {} is not a number", text, what));
  return std::stoi(text);
}
}  // namespace

std::vector<int> parse_cpulist(const std::string& text) {
  std::vector<int> cpus;
  std::string list = text;
  list.erase(std::remove_if(list.begin(), list.end(),
                            [](unsigned char c) { return std::isspace(c) != 0; }),
             list.end());
  if (list.empty()) return cpus;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    const auto item =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto dash = item.find('-');
    const int first = parse_number(item.substr(0, dash), "a CPU list");
    const int last =
        dash == std::string::npos ? first : parse_number(item.substr(dash + 1), "a CPU list");
    if (last < first)
      throw std::invalid_argument(fmt::format("range '{}' in a CPU list runs backwards", item));
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cpus;
}

bool NumaTopology::has_node(int node) const {
  return std::find(nodes_with_memory.begin(), nodes_with_memory.end(), node) !=
         nodes_with_memory.end();
}

NumaTopology read_numa_topology(const std::string& sys_root) {
  NumaTopology t;
  const std::string dir = sys_root + "/devices/system/node";
  auto with_memory = read_first_line(dir + "/has_memory");
  if (with_memory.empty()) with_memory = read_first_line(dir + "/online");
  try {
    t.nodes_with_memory = parse_cpulist(with_memory);  // node lists use the same syntax
    for (int node : t.nodes_with_memory)
      t.cpus[node] = parse_cpulist(read_first_line(fmt::format("{}/node{}/cpulist", dir, node)));
  } catch (const std::invalid_argument&) {
    return {};  // an unreadable tree is an unknown one
  }
  return t;
}

std::vector<int> read_sysfs_local_cpus(const std::string& pci_bus_id,
                                       const std::string& sysfs_root) {
  try {
    return parse_cpulist(
        read_first_line(sysfs_pci_device_dir(pci_bus_id, sysfs_root) + "/local_cpulist"));
  } catch (const std::invalid_argument&) { return {}; }
}

HostNumaOption parse_host_numa(const std::string& text, const NumaTopology& topology) {
  if (text == "local") return {HostNumaKind::local, -1};
  if (text == "remote") return {HostNumaKind::remote, -1};
  if (text == "all") return {HostNumaKind::all, -1};
  int node = -1;
  try {
    node = parse_number(text, "--host-numa");
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(
        fmt::format("--host-numa '{}' is not local, remote, all or a NUMA node number", text));
  }
  if (!topology.has_node(node))
    throw std::invalid_argument(
        fmt::format("--host-numa {}: no NUMA node {} with memory on this machine (nodes: {})", text,
                    node, fmt::join(topology.nodes_with_memory, ",")));
  return {HostNumaKind::node, node};
}

std::string HostPlacement::name_suffix() const { return label == "local" ? "" : "/numa:" + label; }

int local_bind_node(int gpu_node, const NumaTopology& topology) {
  return gpu_node >= 0 && topology.has_node(gpu_node) && topology.nodes_with_memory.size() > 1
             ? gpu_node
             : -1;
}

bool binding_failure_skips(const HostPlacement& placement) { return placement.label != "local"; }

std::vector<HostPlacement> host_placements(const HostNumaOption& option, int gpu_node,
                                           const NumaTopology& topology) {
  const bool gpu_node_known = gpu_node >= 0 && topology.has_node(gpu_node);
  switch (option.kind) {
    case HostNumaKind::local: {
      // One node with memory: every page lands there anyway, and a bind could only fail.
      HostPlacement p{"local", local_bind_node(gpu_node, topology), "", ""};
      if (!gpu_node_known || p.node < 0)
        p.note = topology.nodes_with_memory.size() <= 1
                     ? "one NUMA node: nothing to bind"
                     : fmt::format(
                           "the GPU's NUMA node is unknown (sysfs numa_node {}): host memory left "
                           "unbound",
                           gpu_node);
      return {p};
    }
    case HostNumaKind::remote: {
      HostPlacement p{"remote", -1, "", ""};
      if (!gpu_node_known)
        p.problem =
            "--host-numa remote: the GPU's NUMA node is unknown, so no node is known to be remote";
      for (int node : topology.nodes_with_memory)
        if (gpu_node_known && node != gpu_node && p.node < 0) p.node = node;
      if (gpu_node_known && p.node < 0)
        p.problem = fmt::format(
            "--host-numa remote: this machine has no NUMA node with memory besides the GPU's "
            "node {}",
            gpu_node);
      return {p};
    }
    case HostNumaKind::node:
      return {{fmt::format("node:{}", option.node), option.node, "", ""}};
    case HostNumaKind::all: {
      std::vector<HostPlacement> all;
      for (int node : topology.nodes_with_memory)
        all.push_back({fmt::format("node:{}", node), node, "", ""});
      if (all.empty())
        all.push_back({"node:unknown", -1, "", "--host-numa all: sysfs lists no NUMA node"});
      return all;
    }
  }
  return {};
}

std::string default_placement_warning(int gpu_index, int gpu_node, const NumaTopology& topology,
                                      bool libnuma_available, const std::string& libnuma_reason) {
  if (topology.nodes_with_memory.size() <= 1) return "";
  if (gpu_node < 0 || !topology.has_node(gpu_node))
    return fmt::format(
        "GPU {}'s NUMA node is unknown (sysfs numa_node {}) on a machine with {} nodes: transfer "
        "cases cannot put host memory beside it; use --host-numa N or all",
        gpu_index, gpu_node, topology.nodes_with_memory.size());
  if (!libnuma_available)
    return fmt::format(
        "{}: host memory of transfer cases cannot be bound to GPU {}'s node {} (install libnuma1)",
        libnuma_reason, gpu_index, gpu_node);
  return "";
}

// ---- libnuma ----
namespace {
using available_fn = int (*)();
using run_on_node_fn = int (*)(int);
using parse_nodestring_fn = void* (*)(const char*);  // struct bitmask*
using set_membind_fn = void (*)(void*);
using bitmask_free_fn = void (*)(void*);

template <typename Fn>
Fn symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}
}  // namespace

Libnuma& Libnuma::instance() {
  static Libnuma numa("libnuma.so.1");
  return numa;
}

Libnuma::Libnuma(const std::string& library) {
  library_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    reason_ = fmt::format("{} not found (Debian: libnuma1)", library);
    return;
  }
  for (const char* name : {"numa_available", "numa_run_on_node", "numa_parse_nodestring",
                           "numa_set_membind", "numa_bitmask_free"})
    if (!dlsym(library_, name)) {
      reason_ = fmt::format("{} has no {}", library, name);
      return;
    }
  if (symbol<available_fn>(library_, "numa_available")() < 0) {
    reason_ = "the kernel has no NUMA support (numa_available() < 0)";
    return;
  }
  available_ = true;
}

std::string Libnuma::bind_thread(int node) const {
  if (!available_) return reason_;
  void* mask =
      symbol<parse_nodestring_fn>(library_, "numa_parse_nodestring")(std::to_string(node).c_str());
  if (!mask) return fmt::format("libnuma does not know NUMA node {}", node);
  symbol<set_membind_fn>(library_, "numa_set_membind")(mask);
  symbol<bitmask_free_fn>(library_, "numa_bitmask_free")(mask);
  if (symbol<run_on_node_fn>(library_, "numa_run_on_node")(node) != 0)
    return fmt::format("numa_run_on_node({}) failed: {}", node, std::strerror(errno));
  return "";
}

nlohmann::json numa_context(const NumaTopology& topology) {
  nlohmann::json cpus = nlohmann::json::object();
  for (const auto& [node, list] : topology.cpus) cpus[std::to_string(node)] = list;
  const auto& numa = Libnuma::instance();
  return {{"nodes_with_memory", topology.nodes_with_memory},
          {"cpus", cpus},
          {"libnuma", numa.available() ? "available" : numa.unavailable_reason()}};
}

// ---- the binding of one case ----
HostNumaBinding::HostNumaBinding(int node, const Libnuma& numa) : node_(node) {
  if (node < 0) return;
  cpu_set_t affinity;
  CPU_ZERO(&affinity);
  saved_nodemask_.assign(kMaxNodeBits / (8 * sizeof(unsigned long)), 0);
  if (sched_getaffinity(0, sizeof affinity, &affinity) != 0 ||
      syscall(SYS_get_mempolicy, &saved_mode_, saved_nodemask_.data(), kMaxNodeBits, nullptr, 0) !=
          0) {
    problem_ = fmt::format("cannot read this thread's CPU affinity or memory policy: {}",
                           std::strerror(errno));
    return;
  }
  saved_affinity_.resize(sizeof affinity);
  std::memcpy(saved_affinity_.data(), &affinity, sizeof affinity);
  restore_ = true;
  problem_ = numa.bind_thread(node);
  if (!problem_.empty())
    problem_ = fmt::format("cannot bind host memory to NUMA node {}: {}", node, problem_);
}

HostNumaBinding::~HostNumaBinding() {
  if (!restore_) return;
  cpu_set_t affinity;
  std::memcpy(&affinity, saved_affinity_.data(), sizeof affinity);
  sched_setaffinity(0, sizeof affinity, &affinity);
  syscall(SYS_set_mempolicy, saved_mode_, saved_mode_ == 0 ? nullptr : saved_nodemask_.data(),
          saved_mode_ == 0 ? 0 : kMaxNodeBits);
}

// ---- the kernel's answers ----
int page_numa_node(const void* address) {
  int node = -1;
  if (syscall(SYS_get_mempolicy, &node, nullptr, 0, const_cast<void*>(address),
              kMpolFNode | kMpolFAddr) != 0)
    return kNumaNodeUnknown;
  return node;
}

int memory_numa_node(const void* data, std::uint64_t bytes) {
  if (!data || bytes == 0) return kNumaNodeUnknown;
  const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const std::uint64_t pages = (bytes + page - 1) / page;
  const std::uint64_t samples = std::min<std::uint64_t>(pages, 64);
  std::vector<void*> addresses;
  for (std::uint64_t i = 0; i < samples; ++i) {
    const std::uint64_t at = samples == 1 ? 0 : i * (pages - 1) / (samples - 1) * page;
    addresses.push_back(const_cast<char*>(static_cast<const char*>(data)) + at);
  }
  std::vector<int> status(addresses.size(), -1);
  if (syscall(SYS_move_pages, 0, addresses.size(), addresses.data(), nullptr, status.data(), 0) !=
      0)
    return kNumaNodeUnknown;
  int node = status.front();
  for (int s : status) {
    if (s < 0) return kNumaNodeUnknown;  // -EFAULT, -ENOENT: not a page the kernel can place
    if (s != node) return kNumaNodesMixed;
  }
  return node;
}

int thread_numa_node() {
  unsigned cpu = 0, node = 0;
  if (syscall(SYS_getcpu, &cpu, &node, nullptr) != 0) return -1;
  return static_cast<int>(node);
}

}  // namespace offloadbench
