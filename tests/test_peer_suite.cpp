// The peer family without a GPU: the table against nvbandwidth's names, the copy plans (who copies
// what, in whose context), byte counting, ceilings per link type, pair enumeration and skip
// reasons.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "benchmarks/peer/peer_analysis.h"
#include "benchmarks/peer/peer_cases.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_runner.h"

namespace offloadbench {

namespace {
const PeerTestcase& testcase(const std::string& nvbandwidth) {
  for (const auto& t : peer_testcases())
    if (t.nvbandwidth == nvbandwidth) return t;
  throw std::logic_error("no testcase " + nvbandwidth);
}

PeerCase make(const std::string& nvbandwidth, int gpu, int peer, std::vector<int> gpus,
              std::uint64_t bytes = 1000) {
  return {testcase(nvbandwidth), gpu, peer, std::move(gpus), bytes, ""};
}

void expect_copy(const PeerCopy& copy, int from, int to, int context, std::uint64_t bytes,
                 bool timed = true) {
  EXPECT_EQ(copy.from, from);
  EXPECT_EQ(copy.to, to);
  EXPECT_EQ(copy.context, context);
  EXPECT_EQ(copy.bytes, bytes);
  EXPECT_EQ(copy.timed, timed);
}
}  // namespace

TEST(PeerSuite, EveryNvbandwidthTestcaseOfTheIssueHasOneRow) {
  const std::set<std::string> wanted = {"device_to_device_memcpy_read_ce",
                                        "device_to_device_memcpy_write_ce",
                                        "device_to_device_bidirectional_memcpy_read_ce",
                                        "device_to_device_bidirectional_memcpy_write_ce",
                                        "device_to_device_memcpy_read_sm",
                                        "device_to_device_memcpy_write_sm",
                                        "device_to_device_bidirectional_memcpy_read_sm",
                                        "device_to_device_bidirectional_memcpy_write_sm",
                                        "all_to_one_read_ce",
                                        "all_to_one_write_ce",
                                        "one_to_all_read_ce",
                                        "one_to_all_write_ce",
                                        "all_to_one_read_sm",
                                        "all_to_one_write_sm",
                                        "one_to_all_read_sm",
                                        "one_to_all_write_sm",
                                        "all_to_host_memcpy_ce",
                                        "host_to_all_memcpy_ce",
                                        "all_to_host_memcpy_sm",
                                        "host_to_all_memcpy_sm",
                                        "device_to_device_latency_sm"};
  std::set<std::string> got;
  for (const auto& t : peer_testcases())
    EXPECT_TRUE(got.insert(t.nvbandwidth).second) << t.nvbandwidth;
  EXPECT_EQ(got, wanted);
  for (const auto& t : peer_testcases()) {  // the name says the initiator and the access
    const std::string name = t.nvbandwidth;
    EXPECT_EQ(name.substr(name.size() - 3), t.initiator == CopyInitiator::sm ? "_sm" : "_ce")
        << name;
    if (t.access != PeerAccess::none) {
      EXPECT_NE(name.find(to_string(t.access)), std::string::npos) << name;
    }
  }
}

TEST(PeerSuite, ReadPullsInTheReceiversContextAndWritePushes) {
  // Row 0, column 1: a read copies 1 -> 0 run by GPU 0; a write copies 0 -> 1 run by GPU 0.
  auto read = peer_copies(make("device_to_device_memcpy_read_ce", 0, 1, {0, 1}));
  ASSERT_EQ(read.size(), 1u);
  expect_copy(read[0], 1, 0, 0, 1000);
  auto write = peer_copies(make("device_to_device_memcpy_write_sm", 0, 1, {0, 1}));
  ASSERT_EQ(write.size(), 1u);
  expect_copy(write[0], 0, 1, 0, 1000);
  // Bidirectional: both GPUs pull (read) or both push (write), one copy each way.
  auto bidir_read =
      peer_copies(make("device_to_device_bidirectional_memcpy_read_ce", 0, 1, {0, 1}));
  ASSERT_EQ(bidir_read.size(), 2u);
  expect_copy(bidir_read[0], 1, 0, 0, 1000);
  expect_copy(bidir_read[1], 0, 1, 1, 1000);
  auto bidir_write =
      peer_copies(make("device_to_device_bidirectional_memcpy_write_ce", 0, 1, {0, 1}));
  expect_copy(bidir_write[0], 1, 0, 1, 1000);
  expect_copy(bidir_write[1], 0, 1, 0, 1000);
}

TEST(PeerSuite, AllToOneAndOneToAllFollowNvbandwidthsHelpers) {
  const std::vector<int> four = {0, 1, 2, 3};
  // all_to_one_write: every other GPU pushes into GPU 2; all_to_one_read: every other GPU pulls
  // from it.
  const auto a2o_write = peer_copies(make("all_to_one_write_ce", 2, -1, four));
  ASSERT_EQ(a2o_write.size(), 3u);
  for (const auto& copy : a2o_write) {
    EXPECT_EQ(copy.to, 2);
    EXPECT_EQ(copy.context, copy.from);
  }
  const auto a2o_read = peer_copies(make("all_to_one_read_sm", 2, -1, four));
  for (const auto& copy : a2o_read) {
    EXPECT_EQ(copy.from, 2);
    EXPECT_EQ(copy.context, copy.to);
  }
  // one_to_all: GPU 2 runs every copy, pushing (write) or pulling (read).
  for (const auto& copy : peer_copies(make("one_to_all_write_ce", 2, -1, four))) {
    EXPECT_EQ(copy.from, 2);
    EXPECT_EQ(copy.context, 2);
  }
  for (const auto& copy : peer_copies(make("one_to_all_read_ce", 2, -1, four))) {
    EXPECT_EQ(copy.to, 2);
    EXPECT_EQ(copy.context, 2);
  }
  // TOTAL_BW: every copy counts.
  EXPECT_EQ(peer_counted_bytes(make("all_to_one_write_ce", 2, -1, four)), 3000.0);
}

TEST(PeerSuite, HostPatternsCountTheMeasuredGpuAloneBesideDoubleSizedInterference) {
  const auto copies = peer_copies(make("all_to_host_memcpy_ce", 1, -1, {0, 1, 2}));
  ASSERT_EQ(copies.size(), 3u);
  expect_copy(copies[0], 1, kHost, 1, 1000);
  expect_copy(copies[1], 0, kHost, 0, 2000, false);
  expect_copy(copies[2], 2, kHost, 2, 2000, false);
  EXPECT_EQ(peer_counted_bytes(make("all_to_host_memcpy_ce", 1, -1, {0, 1, 2})), 1000.0);
  const auto h2a = peer_copies(make("host_to_all_memcpy_sm", 0, -1, {0, 1}));
  expect_copy(h2a[0], kHost, 0, 0, 1000);
  expect_copy(h2a[1], kHost, 1, 1, 2000, false);
  EXPECT_EQ(
      peer_counted_bytes(make("device_to_device_bidirectional_memcpy_write_sm", 0, 1, {0, 1})),
      2000.0);
  EXPECT_EQ(peer_counted_bytes(make("device_to_device_latency_sm", 0, 1, {0, 1})), 0.0);
}

TEST(PeerSuite, CeilingsFollowTheLinkType) {
  PeerLink nvlink{PeerLinkKind::nvlink, "nvlink", 4, false, 25e9, 31.5e9};
  PeerLink pcie{PeerLinkKind::pcie, "host_bridge", 0, false, 0, 31.5e9};
  PeerLink unknown;
  EXPECT_DOUBLE_EQ(peer_link_ceiling(nvlink), 100e9);  // 4 links x 25 GB/s per direction
  EXPECT_DOUBLE_EQ(peer_link_ceiling(pcie), 31.5e9);
  EXPECT_DOUBLE_EQ(peer_link_ceiling(unknown), 0.0);
  const auto pcie_of = [](int) { return 31.5e9; };
  const auto all_nvlink = [&](int, int) { return nvlink; };
  const auto all_pcie = [&](int, int) { return pcie; };
  EXPECT_DOUBLE_EQ(
      peer_ceiling(make("device_to_device_memcpy_read_ce", 0, 1, {0, 1}), all_nvlink, pcie_of),
      100e9);
  EXPECT_DOUBLE_EQ(peer_ceiling(make("device_to_device_bidirectional_memcpy_read_ce", 0, 1, {0, 1}),
                                all_nvlink, pcie_of),
                   200e9);
  // Three NVLink peers into one GPU: three links' worth; over PCIe all share the one GPU's link.
  EXPECT_DOUBLE_EQ(
      peer_ceiling(make("all_to_one_write_ce", 0, -1, {0, 1, 2, 3}), all_nvlink, pcie_of), 300e9);
  EXPECT_DOUBLE_EQ(
      peer_ceiling(make("all_to_one_write_ce", 0, -1, {0, 1, 2, 3}), all_pcie, pcie_of), 31.5e9);
  EXPECT_DOUBLE_EQ(
      peer_ceiling(make("all_to_host_memcpy_ce", 0, -1, {0, 1, 2, 3}), all_nvlink, pcie_of),
      31.5e9);
  EXPECT_DOUBLE_EQ(peer_ceiling(
                       make("device_to_device_memcpy_write_ce", 0, 1, {0, 1}),
                       [&](int, int) { return unknown; }, pcie_of),
                   0.0);  // unknown: no ceiling, never a guessed one
}

TEST(PeerSuite, NvlinkRatesPerNvmlVersion) {
  EXPECT_EQ(nvlink_bytes_per_second_per_link(1), 20e9);
  EXPECT_EQ(nvlink_bytes_per_second_per_link(4),
            25e9);  // NVLink 3 (A100) as the enum, or 4 (H100) as a major
  EXPECT_EQ(nvlink_bytes_per_second_per_link(6), 25e9);  // 4.0
  EXPECT_EQ(nvlink_bytes_per_second_per_link(7), 50e9);  // 5.0
  EXPECT_EQ(nvlink_bytes_per_second_per_link(5), 50e9);  // 3.1 or a bare 5: the higher
  EXPECT_EQ(nvlink_bytes_per_second_per_link(0), 0.0);
}

TEST(PeerSuite, PairsAreEveryOrderedPairInMatrixOrder) {
  const auto pairs = ordered_pairs({0, 2, 3});
  const std::vector<std::pair<int, int>> expected = {{0, 2}, {0, 3}, {2, 0},
                                                     {2, 3}, {3, 0}, {3, 2}};
  EXPECT_EQ(pairs, expected);
  EXPECT_TRUE(ordered_pairs({1}).empty());
}

TEST(PeerSuite, SkipReasonsSayWhy) {
  EXPECT_EQ(peer_access_problem(0, 1, true, 0), "");
  const auto topology = peer_access_problem(0, 1, false, 3);
  EXPECT_NE(topology.find("no peer-to-peer access from GPU 0 to GPU 1"), std::string::npos);
  EXPECT_NE(topology.find("PCIe topology"), std::string::npos);
  EXPECT_NE(topology.find("waived"), std::string::npos);
  EXPECT_NE(peer_access_problem(2, 3, false, 4).find("disabled by a driver setting"),
            std::string::npos);
  EXPECT_EQ(peer_access_problem(2, 3, false, -1).find("NVML"),
            std::string::npos);  // no NVML: no guess
  EXPECT_NE(too_few_gpus_problem(testcase("all_to_host_memcpy_ce"), 1).find("transfer suite"),
            std::string::npos);
  EXPECT_NE(too_few_gpus_problem(testcase("device_to_device_memcpy_read_ce"), 1)
                .find("needs at least 2 GPUs"),
            std::string::npos);
  EXPECT_EQ(too_few_gpus_problem(testcase("device_to_device_memcpy_read_ce"), 2), "");
}

TEST(PeerSuite, OneGpuRegistersEachTestcaseOnceSkippedWithItsReason) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  register_peer_suite(config);
  ASSERT_EQ(registered_cases().size(), peer_testcases().size());
  std::set<std::string> names;
  for (const auto& c : registered_cases()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_EQ(c.family, "peer");
    EXPECT_FALSE(c.fields.value("nvbandwidth", "").empty()) << c.name;
  }
  EXPECT_TRUE(names.count("peer/read/ce"));
  EXPECT_TRUE(names.count("peer/latency/sm"));
  PeerCase one = make("device_to_device_memcpy_read_ce", 0, -1, {0});
  one.problem = too_few_gpus_problem(one.testcase, 1);
  EXPECT_EQ(OFFLOADBENCH_GPU_RUNNER(setup_peer)(one).skip_reason,
            one.problem);  // as a table calls it
  clear_registered_cases();
}

TEST(PeerSuite, FourGpusRegisterEveryCellOfEveryMatrix) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0, 1, 2, 3};
  register_peer_suite(config);
  // 8 pair testcases x 12 ordered pairs + latency x 12 + 12 per-GPU testcases x 4 GPUs.
  EXPECT_EQ(registered_cases().size(), 8u * 12 + 12 + 12u * 4);
  const auto fields = case_fields("peer/read/ce/gpu:2/peer:3/512MiB");
  ASSERT_FALSE(fields.is_null());
  EXPECT_EQ(fields["device"], 2);
  EXPECT_EQ(fields["peer"], 3);
  EXPECT_EQ(fields["nvbandwidth"], "device_to_device_memcpy_read_ce");
  EXPECT_EQ(fields["bytes"], 512u << 20);
  EXPECT_EQ(fields["bytes_counted"], "one copy");
  EXPECT_TRUE(fields.contains("link"));
  EXPECT_FALSE(case_fields("peer/all_to_one_write/sm/gpu:3/512MiB").is_null());
  EXPECT_FALSE(case_fields("peer/latency/sm/gpu:0/peer:1").is_null());
  // Without a usable GPU every one of them skips with the reason, never crashes.
  PeerCase c = make("device_to_device_memcpy_read_ce", 0, 1, {0, 1, 2, 3});
  EXPECT_FALSE(OFFLOADBENCH_GPU_RUNNER(setup_peer)(c).skip_reason.empty());
  clear_registered_cases();
}

TEST(PeerSuite, TransferRowsNameTheNvbandwidthTestcaseTheyMatch) {
  EXPECT_EQ(nvbandwidth_testcase({{"op", "device_copy"},
                                  {"direction", "h2d"},
                                  {"host_memory", "pinned"},
                                  {"host_numa", "local"}}),
            "host_to_device_memcpy_ce");
  EXPECT_EQ(nvbandwidth_testcase(
                {{"op", "device_copy"}, {"direction", "d2h"}, {"host_memory", "pageable"}}),
            "");
  EXPECT_EQ(nvbandwidth_testcase({{"op", "device_local_copy"}, {"initiator", "copy_engine"}}),
            "device_local_copy");
  EXPECT_EQ(nvbandwidth_testcase({{"op", "sm_copy"}, {"direction", "d2h"}}),
            "device_to_host_memcpy_sm");
  EXPECT_EQ(nvbandwidth_testcase({{"op", "latency"}, {"probe", "pointer_chase_mapped_host"}}),
            "host_device_latency_sm");
  EXPECT_EQ(nvbandwidth_testcase({{"op", "peer"}, {"nvbandwidth", "all_to_one_read_sm"}}),
            "all_to_one_read_sm");
}

// The matrix view from the SYNTHETIC 4-GPU fixture (tests/data/make_peer_fixture.py: made-up
// figures).
TEST(PeerMatrix, SummaryMatricesFromASyntheticFourGpuFile) {
  std::ifstream in(std::string(OFFLOADBENCH_TEST_DATA) + "/peer_4gpu_synthetic.json");
  const auto results = nlohmann::json::parse(in);
  const auto matrices = peer_matrices(results);
  ASSERT_EQ(matrices.size(), 5u);
  const auto& read = matrices[0];
  EXPECT_EQ(read.testcase, "device_to_device_memcpy_read_ce");
  EXPECT_EQ(read.gpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_DOUBLE_EQ(read.cells[0][1], 180.0);  // the median of 178.2, 180, 181.8
  EXPECT_DOUBLE_EQ(read.cells[1][2], 25.0);
  EXPECT_TRUE(std::isnan(read.cells[0][3]));  // no peer access: skipped, N/A
  for (int g = 0; g < 4; ++g) EXPECT_TRUE(std::isnan(read.cells[g][g]));
  EXPECT_DOUBLE_EQ(matrices[2].cells[2][3], 360.0);  // bidirectional: both directions counted
  const auto& all_to_one = matrices[3];
  EXPECT_TRUE(all_to_one.one_row);
  ASSERT_EQ(all_to_one.cells.size(), 1u);
  EXPECT_EQ(all_to_one.cells[0], (std::vector<double>{205.0, 230.0, 230.0, 205.0}));
  EXPECT_TRUE(matrices[4].latency);
  EXPECT_DOUBLE_EQ(matrices[4].cells[2][3], 800.0);

  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  print_peer_matrices(out, results);
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  EXPECT_NE(printed.find("device_to_device_memcpy_read_ce (GB/s"), std::string::npos);
  EXPECT_NE(printed.find("    0       N/A    180.00     25.00       N/A"), std::string::npos)
      << printed;
}

TEST(PeerMatrix, NoPeerRowsNoMatrix) {
  const nlohmann::json results = {
      {"benchmarks", nlohmann::json::array({{{"name", "transfer/h2d/pinned/4KiB"},
                                             {"run_type", "iteration"},
                                             {"bytes_per_second", 1e9}}})}};
  EXPECT_TRUE(peer_matrices(results).empty());
}

}  // namespace offloadbench
