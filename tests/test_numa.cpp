// NUMA placement: the node choice from a fake sysfs tree, and the binding checked by the kernel's
// own answer (move_pages, get_mempolicy, getcpu) on the node(s) of the machine the tests run on.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "harness/numa.h"

namespace offloadbench {

namespace {
std::vector<int> thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}
}  // namespace

TEST(Numa, ParsesCpuLists) {
  EXPECT_EQ(parse_cpulist("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpulist("5"), (std::vector<int>{5}));
  EXPECT_TRUE(parse_cpulist("").empty());
  EXPECT_THROW(parse_cpulist("3-1"), std::invalid_argument);
  EXPECT_THROW(parse_cpulist("a-b"), std::invalid_argument);
  EXPECT_THROW(parse_cpulist("1,,2"), std::invalid_argument);
}

// A two-socket machine: node 0 has CPUs 0-3, node 1 CPUs 4-7; the GPU at 0000:41:00.0 sits on
// node 1.
class FakeNumaSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root = std::filesystem::temp_directory_path() / ("ob_numa_" + std::to_string(::getpid()));
    const auto nodes = root / "devices/system/node";
    std::filesystem::create_directories(nodes / "node0");
    std::filesystem::create_directories(nodes / "node1");
    write(nodes / "online", "0-1");
    write(nodes / "has_memory", "0-1");
    write(nodes / "node0/cpulist", "0-3");
    write(nodes / "node1/cpulist", "4-7");
    const auto gpu = root / "bus/pci/devices/0000:41:00.0";
    std::filesystem::create_directories(gpu);
    write(gpu / "numa_node", "1");
    write(gpu / "local_cpulist", "4-7");
  }
  void TearDown() override { std::filesystem::remove_all(root); }
  static void write(const std::filesystem::path& p, const char* text) {
    std::ofstream(p) << text << "\n";
  }
  std::string pci_root() const { return (root / "bus/pci/devices").string(); }
  std::filesystem::path root;
};

TEST_F(FakeNumaSysfs, ReadsTheNodesAndTheGpusLocalCpus) {
  const auto t = read_numa_topology(root.string());
  EXPECT_EQ(t.nodes_with_memory, (std::vector<int>{0, 1}));
  EXPECT_EQ(t.cpus.at(1), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(read_sysfs_local_cpus("00000000:41:00.0", pci_root()), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_TRUE(read_sysfs_local_cpus("0000:42:00.0", pci_root()).empty());
}

TEST_F(FakeNumaSysfs, ChoosesTheNodeEachOptionAsksFor) {
  const auto t = read_numa_topology(root.string());
  const auto local = host_placements(parse_host_numa("local", t), 1, t);
  ASSERT_EQ(local.size(), 1u);
  EXPECT_EQ(local[0].node, 1);
  EXPECT_EQ(local[0].name_suffix(),
            "");  // the default keeps the names of a run without --host-numa
  const auto remote = host_placements(parse_host_numa("remote", t), 1, t);
  ASSERT_EQ(remote.size(), 1u);
  EXPECT_EQ(remote[0].node, 0);
  EXPECT_EQ(remote[0].name_suffix(), "/numa:remote");
  EXPECT_TRUE(remote[0].problem.empty());
  const auto all = host_placements(parse_host_numa("all", t), 1, t);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].node, 0);
  EXPECT_EQ(all[1].node, 1);
  EXPECT_EQ(all[1].label, "node:1");
  const auto chosen = host_placements(parse_host_numa("0", t), 1, t);
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_EQ(chosen[0].node, 0);
}

TEST(HostPlacements, OneNodeBindsNothingAndOnlyAnAskedPlacementSkipsOnAFailedBind) {
  NumaTopology one;
  one.nodes_with_memory = {0};
  one.cpus[0] = {0, 1, 2, 3};
  const auto local = host_placements({HostNumaKind::local, -1}, 0, one);  // the GPU reports node 0
  ASSERT_EQ(local.size(), 1u);
  EXPECT_EQ(local[0].node, -1);
  EXPECT_EQ(local[0].note, "one NUMA node: nothing to bind");
  EXPECT_EQ(local_bind_node(0, one), -1);
  NumaTopology two = one;
  two.nodes_with_memory = {0, 1};
  two.cpus[1] = {4, 5, 6, 7};
  EXPECT_EQ(local_bind_node(1, two), 1);
  EXPECT_EQ(local_bind_node(-1, two), -1);
  EXPECT_FALSE(binding_failure_skips(host_placements({HostNumaKind::local, -1}, 1, two)[0]));
  EXPECT_TRUE(binding_failure_skips(host_placements({HostNumaKind::remote, -1}, 1, two)[0]));
  EXPECT_TRUE(binding_failure_skips(host_placements({HostNumaKind::node, 0}, 1, two)[0]));
}

TEST_F(FakeNumaSysfs, AnUnknownGpuNodeLeavesLocalUnboundAndSkipsRemote) {
  const auto t = read_numa_topology(root.string());
  const auto local = host_placements({HostNumaKind::local, -1}, -1, t);
  EXPECT_EQ(local[0].node, -1);
  EXPECT_NE(local[0].note.find("unknown"), std::string::npos);
  EXPECT_NE(host_placements({HostNumaKind::remote, -1}, -1, t)[0].problem, "");
  EXPECT_NE(default_placement_warning(0, -1, t, true, "").find("NUMA node is unknown"),
            std::string::npos);
  EXPECT_NE(default_placement_warning(0, 1, t, false, "libnuma.so.1 not found")
                .find("libnuma.so.1 not found"),
            std::string::npos);
  EXPECT_EQ(default_placement_warning(0, 1, t, true, ""), "");
}

TEST(Numa, OneNodeHasNoRemoteAndNothingToWarnAbout) {
  NumaTopology one;
  one.nodes_with_memory = {0};
  one.cpus[0] = {0, 1};
  const auto remote = host_placements({HostNumaKind::remote, -1}, 0, one);
  EXPECT_NE(remote[0].problem.find("no NUMA node with memory besides"), std::string::npos);
  EXPECT_EQ(default_placement_warning(0, -1, one, false, "libnuma.so.1 not found"), "");
}

TEST(Numa, BadHostNumaValuesAreRejected) {
  NumaTopology one;
  one.nodes_with_memory = {0};
  for (const char* bad : {"", "near", "-1", "1", "0x1", "1000000"})
    EXPECT_THROW(parse_host_numa(bad, one), std::invalid_argument) << bad;
  EXPECT_EQ(parse_host_numa("0", one).node, 0);
}

// The kernel's own answer on this machine: memory allocated while bound lies on the node, the
// thread runs on the node's CPUs, and both come back as they were afterwards.
TEST(Numa, BindingIsConfirmedByTheKernel) {
  const auto topology = read_numa_topology();
  if (topology.nodes_with_memory.empty()) GTEST_SKIP() << "sysfs lists no NUMA node";
  if (!Libnuma::instance().available()) GTEST_SKIP() << Libnuma::instance().unavailable_reason();
  const int node = topology.nodes_with_memory.back();
  const auto before = thread_cpus();
  std::vector<char> untouched;
  {
    HostNumaBinding binding(node);
    ASSERT_EQ(binding.problem(), "");
    const std::size_t bytes = 8u << 20;
    std::vector<char> memory(bytes);
    std::memset(memory.data(), 1, bytes);  // first touch, under the binding
    EXPECT_EQ(memory_numa_node(memory.data(), bytes), node);
    EXPECT_EQ(page_numa_node(memory.data() + bytes / 2), node);
    EXPECT_EQ(thread_numa_node(), node);
    for (int cpu : thread_cpus()) {
      const auto& cpus = topology.cpus.at(node);
      EXPECT_NE(std::find(cpus.begin(), cpus.end(), cpu), cpus.end())
          << "CPU " << cpu << " is not on node " << node;
    }
  }
  EXPECT_EQ(thread_cpus(), before);
}

TEST(Numa, WithoutLibnumaTheBindingSaysWhyAndChangesNothing) {
  const Libnuma missing("libnuma-not-here.so.9");
  EXPECT_FALSE(missing.available());
  EXPECT_NE(missing.unavailable_reason().find("libnuma-not-here.so.9 not found"),
            std::string::npos);
  const auto before = thread_cpus();
  {
    HostNumaBinding binding(0, missing);
    EXPECT_NE(binding.problem().find("cannot bind host memory to NUMA node 0"), std::string::npos);
  }
  EXPECT_EQ(thread_cpus(), before);
  HostNumaBinding unbound(-1, missing);  // nothing asked: nothing to fail
  EXPECT_EQ(unbound.problem(), "");
}

TEST(Numa, UnplaceableMemoryIsUnknownNotAGuess) {
  EXPECT_EQ(memory_numa_node(nullptr, 4096), kNumaNodeUnknown);
  EXPECT_EQ(memory_numa_node(reinterpret_cast<void*>(4096), 4096), kNumaNodeUnknown);  // not mapped
}

}  // namespace offloadbench
