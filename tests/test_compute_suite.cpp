// The compute suite end to end on the CPU: its rows carry the fields the results schema promises,
// count bytes and FLOPs as documented, validate, and its GPU rows say why they cannot run here.
#include <memory>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "benchmarks/compute/compute_cases.h"
#include "harness/gpu_info.h"
#include "harness/system_info.h"
#include "kernels/elementwise.h"
#include "tests/test_support.h"

namespace offloadbench {
namespace {

double seconds_per_iteration(const nlohmann::json& row) {
  return row["real_time"].get<double>() * 1e-6;
}

TEST(ComputeSuite, CpuElementwiseRowsValidateAndCountBabelStreamBytes) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {};
  config.sizes = std::vector<std::uint64_t>{7, 4096};
  register_compute_suite(config);
  const auto doc = testing::run_registered("compute/[a-z_]+/fp(32|64)/");
  const auto rows = testing::rows_where(doc, "device", "cpu");
  const std::size_t views = query_host_info().omp_threads > 1 ? 2 : 1;
  ASSERT_EQ(rows.size(), (kElementwiseOpInfos.size() + 2) * 2 *
                             views);  // every op in fp32, add and triad in fp64; 2 sizes
  std::set<std::string> groups;
  for (const auto& row : rows) {
    SCOPED_TRACE(row["name"].get<std::string>());
    EXPECT_EQ(row["family"], "compute");
    EXPECT_EQ(row["validated"], true) << row.value("invalid_reason", "");
    EXPECT_EQ(row["sweep"], "elements");
    EXPECT_EQ(row["series"], "");
    EXPECT_EQ(row["compare_group"], "compute/" + row["op"].get<std::string>() + "/" +
                                        row["precision"].get<std::string>());
    EXPECT_TRUE(row["view"] == "cpu_1t" || row["view"] == "cpu_all");
    EXPECT_EQ(row["cpu_threads"], row["view"] == "cpu_1t" ? 1 : query_host_info().omp_threads);
    const double element_bytes = row["precision"] == "fp32" ? 4 : 8;
    const double bytes =
        row["arrays_moved"].get<double>() * row["elements"].get<double>() * element_bytes;
    EXPECT_EQ(row["bytes"].get<double>(), bytes);
    EXPECT_NEAR(row["bytes_per_second"].get<double>() * seconds_per_iteration(row) / bytes, 1.0,
                0.02);
    EXPECT_GT(row["host_time_s"].get<double>(), 0);
    groups.insert(row["compare_group"].get<std::string>());
  }
  EXPECT_EQ(groups.count("compute/triad/fp64"), 1u);
  for (const auto& info : kElementwiseOpInfos)
    EXPECT_EQ(groups.count(fmt::format("compute/{}/fp32", info.name)), 1u);
  EXPECT_EQ(testing::rows_where(doc, "headline", "triad fp32 cpu_1t").size(), 2u);
}

TEST(ComputeSuite, CpuMatmulRowsCountTwoMnkAndQuickModeSkipsTheLargest) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {};
  register_compute_suite(config);
  const auto doc = testing::run_registered(
      "compute/sgemm/(square/openblas/cpu_1t/(64|4096)|mlp_128x10/openblas/)");
  const auto rows = testing::rows_where(doc, "op", "sgemm");
  ASSERT_GE(rows.size(), 4u);
  bool saw_skip = false;
  for (const auto& row : rows) {
    SCOPED_TRACE(row["name"].get<std::string>());
    EXPECT_EQ(row["device"], "cpu");
    EXPECT_EQ(row["precision"], "fp32");
    EXPECT_EQ(row["library"], "OpenBLAS");
    if (row["n"] == 4096) {
      EXPECT_EQ(row["skipped"], true);
      EXPECT_NE(row["skip_reason"].get<std::string>().find("quick mode"), std::string::npos);
      saw_skip = true;
      continue;
    }
    EXPECT_EQ(row["validated"], true) << row.value("invalid_reason", "");
    const double flops =
        2.0 * row["m"].get<double>() * row["n"].get<double>() * row["k"].get<double>();
    EXPECT_EQ(row["flops"].get<double>(), flops);
    EXPECT_NEAR(row["flop_per_second"].get<double>() * seconds_per_iteration(row) / flops, 1.0,
                0.02);
    if (row["compare_group"] == "compute/sgemm/mlp_128x10") {
      EXPECT_EQ(row["sweep"], "batch");
      EXPECT_EQ(row["batch"], row["m"]);
      EXPECT_EQ(row["k"], 128);
      EXPECT_EQ(row["n"], 10);
    } else {
      EXPECT_EQ(row["sweep"], "n");
      EXPECT_EQ(row["headline"], "sgemm cpu_1t");
    }
  }
  EXPECT_TRUE(saw_skip);
}

TEST(ComputeSuite, EveryGpuCaseHasThreeViewsThatSkipWithTheReasonWhenNoGpu) {
  if (gpu_unavailable_reason(0).empty())
    GTEST_SKIP() << "a GPU is present; tests/test_gpu_compute.cpp covers it";
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  config.sizes = std::vector<std::uint64_t>{1024};
  register_compute_suite(config);
  const auto doc =
      testing::run_registered("compute/(triad/fp32|sgemm/square/[a-z0-9_]+/[a-z_]+/64(/|$))");
  std::set<std::string> elementwise_views;
  std::set<std::string> matmul_series;
  int gpu_rows = 0;
  for (const auto& row : iteration_rows(doc)) {
    if (row["device"] == "cpu") continue;
    ++gpu_rows;
    EXPECT_EQ(row["skipped"], true) << row["name"];
    EXPECT_EQ(row["skip_reason"], gpu_unavailable_reason(0));
    EXPECT_EQ(row["device"], 0);
    if (row["op"] == "triad") {
      elementwise_views.insert(row["view"].get<std::string>());
      if (row["series"] == "four_per_thread") {
        EXPECT_EQ(row["view"], "gpu_kernel");
        EXPECT_EQ(row["kernel"], "four_per_thread");
        EXPECT_FALSE(row.contains("headline")) << "the headline is the default kernel's row";
      }
    } else
      matmul_series.insert(row["series"].get<std::string>() + " " + row["view"].get<std::string>());
  }
  EXPECT_EQ(elementwise_views, (std::set<std::string>{"gpu_kernel", "gpu_pinned", "gpu_pageable"}));
  EXPECT_EQ(matmul_series.size(), 6u * 3);  // tiled, vectorized + 4 cuBLAS precisions, 3 views each
  // Triad: 3 views, and the kernel alone a second time, four elements a thread.
  EXPECT_EQ(gpu_rows, 4 + 6 * 3);
}

}  // namespace
}  // namespace offloadbench

namespace offloadbench {
namespace {

struct Counted {
  explicit Counted(int& made) { ++made; }
};

TEST(ReusedArrays, SameKeyReusesAnotherKeyRemakesAndForgetsChecks) {
  int made = 0;
  ReusedArrays<Counted> reuse;
  const auto make = [&] { return std::make_unique<Counted>(made); };
  Counted* first = &reuse.get("fp32/1024", make);
  reuse.set_checked("triad");
  EXPECT_EQ(&reuse.get("fp32/1024", make), first);
  EXPECT_EQ(made, 1);
  EXPECT_TRUE(reuse.checked("triad"));
  EXPECT_FALSE(reuse.checked("dot"));
  reuse.get("fp64/1024", make);
  EXPECT_EQ(made, 2);
  EXPECT_FALSE(reuse.checked("triad")) << "a check holds only for the arrays it ran on";
}

TEST(ReusedArrays, AFailedMakeLeavesNothingBehind) {
  ReusedArrays<int> reuse;
  EXPECT_THROW(
      reuse.get("a", []() -> std::unique_ptr<int> { throw std::runtime_error("no memory"); }),
      std::runtime_error);
  int made = 0;
  reuse.get("a", [&] {
    ++made;
    return std::make_unique<int>(1);
  });
  EXPECT_EQ(made, 1) << "the key of a failed make must not count as present";
}

}  // namespace
}  // namespace offloadbench
