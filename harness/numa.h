// Host memory on the right NUMA node. On a two-socket machine a pinned copy from the socket far
// from the GPU can run at a third of the speed (gearshifft PR #82), so transfer cases bind their
// host buffers to a chosen node (the GPU's own by default, as nvbandwidth does), pin the run thread
// beside them, and record what the kernel says the memory's node and the thread's node really were.
// libnuma (Debian's libnuma1) is loaded at run time: offloadbench starts without it.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench {

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; throws std::invalid_argument on anything else.
std::vector<int> parse_cpulist(const std::string& text);

// The machine's nodes as sysfs shows them (<sys_root>/devices/system/node).
struct NumaTopology {
  std::vector<int> nodes_with_memory;    // has_memory (online when absent)
  std::map<int, std::vector<int>> cpus;  // nodeN/cpulist
  bool has_node(int node) const;
};
NumaTopology read_numa_topology(const std::string& sys_root = "/sys");

// A GPU's PCI function's local_cpulist (the CPUs nearest it); empty when sysfs has none.
std::vector<int> read_sysfs_local_cpus(const std::string& pci_bus_id,
                                       const std::string& sysfs_root = "/sys/bus/pci/devices");

// --host-numa: which node the transfer cases' host buffers go to.
enum class HostNumaKind { local, remote, node, all };
struct HostNumaOption {
  HostNumaKind kind = HostNumaKind::local;
  int node = -1;  // HostNumaKind::node only
};
// "local", "remote", "all" or a node number; throws std::invalid_argument with a one-line reason.
// A node number must be one of `topology`'s nodes with memory.
HostNumaOption parse_host_numa(const std::string& text, const NumaTopology& topology);

// Where one case's host buffers go. node -1: left to the kernel's default (first touch).
struct HostPlacement {
  std::string label;  // "local", "remote", "node:1": the case's host_numa field
  int node = -1;
  std::string note;  // why a requested placement is not bound (local with the GPU's node unknown)
  std::string problem;  // not empty: the case cannot be measured so (skipped with this reason)
  std::string name_suffix()
      const;  // "" for local (the names of a run without --host-numa), else "/numa:<label>"
};
// The node the default placement binds host memory to for a GPU on `gpu_node`: -1 (bind nothing)
// when the node is unknown or the machine has at most one node with memory.
int local_bind_node(int gpu_node, const NumaTopology& topology);
// A binding that fails skips the case only when its placement was asked for (--host-numa remote or
// a node); the default placement then runs unbound, and the row says so (host_numa_bind_failed =
// 1).
bool binding_failure_skips(const HostPlacement& placement);
// The placements `option` asks for, for a GPU on `gpu_node` (-1: unknown).
std::vector<HostPlacement> host_placements(const HostNumaOption& option, int gpu_node,
                                           const NumaTopology& topology);

// A sentence when the default placement (host memory on the GPU's node) cannot be honoured on this
// machine, else "". One node: nothing to honour.
std::string default_placement_warning(int gpu_index, int gpu_node, const NumaTopology& topology,
                                      bool libnuma_available, const std::string& libnuma_reason);

// The machine's nodes, their CPUs and libnuma's state, for the results file's context and `info`.
nlohmann::json numa_context(const NumaTopology& topology);

// libnuma, through dlopen. `library` is the file to load (tests give a missing one).
class Libnuma {
 public:
  static Libnuma& instance();  // libnuma.so.1, loaded once
  explicit Libnuma(const std::string& library);
  bool available() const { return available_; }
  const std::string& unavailable_reason() const { return reason_; }
  // Strict binding of this thread's later allocations to `node`, and the thread run on its CPUs.
  // "" on success, else why not.
  std::string bind_thread(int node) const;

 private:
  void* library_ = nullptr;
  bool available_ = false;
  std::string reason_;
};

// For one case: binds this thread's memory and CPUs to a node (or leaves them), and puts back the
// thread's previous CPU affinity and memory policy when it goes.
class HostNumaBinding {
 public:
  HostNumaBinding(int node, const Libnuma& numa = Libnuma::instance());  // node -1: changes nothing
  ~HostNumaBinding();
  HostNumaBinding(const HostNumaBinding&) = delete;
  HostNumaBinding& operator=(const HostNumaBinding&) = delete;
  const std::string& problem() const { return problem_; }  // not empty: the binding failed, and why

 private:
  int node_ = -1;
  bool restore_ = false;
  std::vector<unsigned char> saved_affinity_;  // a cpu_set_t's bytes
  int saved_mode_ = 0;
  std::vector<unsigned long> saved_nodemask_;
  std::string problem_;
};

// The kernel's own answer: the node of the pages of [data, data + bytes), sampled at up to 64
// pages (move_pages with nodes = NULL). -1: unknown (the kernel could not say, e.g. driver-mapped
// memory), -2: the sampled pages lie on more than one node.
inline constexpr int kNumaNodeUnknown = -1;
inline constexpr int kNumaNodesMixed = -2;
int memory_numa_node(const void* data, std::uint64_t bytes);
// get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR): the node of the page holding `address`; -1 if unknown.
int page_numa_node(const void* address);
// The node of the CPU this thread runs on now (getcpu); -1 if unknown.
int thread_numa_node();

}  // namespace offloadbench
