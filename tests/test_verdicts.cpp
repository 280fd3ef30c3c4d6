// Verdicts on synthetic files: each cause a run can record is shown by a file that records it, and
// a healthy file says healthy; impossible rows say why; references match by GPU model and link.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "harness/analysis/analysis.h"
#include "harness/analysis/family_analysis.h"
#include "harness/analysis/summary.h"
#include "harness/analysis/verdicts.h"
#include "tests/test_support.h"

namespace offloadbench {
namespace {

constexpr double kLink = 63e9;  // Gen5 x16 per direction, near enough

nlohmann::json context(const std::string& gpu_name = "Test GPU", int max_generation = 5,
                       int max_width = 16) {
  return {{"host_name", "box"},
          {"num_cpus", 2},
          {"load_avg", {3.1, 2.0, 1.0}},
          {"offloadbench", {{"schema_version", 1}, {"start_time_utc", "2026-01-01T00:00:00Z"}}},
          {"host",
           {{"cpu_model", "Test CPU"},
            {"blas", {{"library", "OpenBLAS 0.3.21 DYNAMIC_ARCH Haswell (OpenMP)"}}}}},
          {"cuda",
           {{"gpus",
             {{{"index", 0},
               {"name", gpu_name},
               {"numa_node", 0},
               {"pcie_link",
                {{"current_generation", max_generation},
                 {"current_width", max_width},
                 {"max_generation", max_generation},
                 {"max_width", max_width},
                 {"theoretical_bytes_per_second", kLink},
                 {"ceiling_bytes_per_second", kLink}}}}}}}}};
}

// One case, three repetitions at `rates` (bytes/s unless the fields say flop), `fields` on each
// row.
void add_case(nlohmann::json& doc, const std::string& name, std::vector<double> rates,
              nlohmann::json fields) {
  const auto rate_field = fields.value("rate_field", std::string("bytes_per_second"));
  fields.erase("rate_field");
  for (std::size_t i = 0; i < rates.size(); ++i) {
    nlohmann::json r = {{"name", name},          {"run_type", "iteration"},
                        {"repetition_index", i}, {"real_time", 1e9 / rates[i]},
                        {"time_unit", "ns"},     {"iterations", 10},
                        {"skipped", false},      {"validated", true},
                        {"headline", name},      {"bytes", 1 << 30}};
    r[rate_field] = rates[i];
    r.update(fields);
    doc["benchmarks"].push_back(r);
  }
}

nlohmann::json copy_fields() {
  return {{"family", "transfer"},
          {"op", "device_copy"},
          {"device", 0},
          {"host_memory", "pinned"},
          {"ceiling_bytes_per_second", kLink}};
}

nlohmann::json document(nlohmann::json ctx = context()) {
  return {{"context", std::move(ctx)}, {"benchmarks", nlohmann::json::array()}};
}

// The verdict of the only headline of `doc`, analysed first (the self-checks run).
nlohmann::json judge(nlohmann::json doc, const std::vector<ReferenceRun>& references = {}) {
  doc["analysis"] = analyze(doc, {});
  const auto verdicts = judge_headlines(doc, references);
  EXPECT_EQ(verdicts.size(), 1u) << verdicts.dump(1);
  return verdicts.empty() ? nlohmann::json::object() : verdicts[0];
}

std::string causes(const nlohmann::json& v) { return v["causes"].dump(); }

TEST(Verdicts, ACopyNearItsCeilingWithNothingRecordedIsHealthy) {
  auto doc = document();
  add_case(doc, "h2d pinned", {55e9, 55.2e9, 55.1e9}, copy_fields());
  const auto v = judge(doc);
  EXPECT_EQ(v["verdict"], "healthy") << v.dump();
  EXPECT_TRUE(v["causes"].empty());
  EXPECT_NE(v["evidence"].get<std::string>().find("87% of its ceiling"), std::string::npos)
      << v["evidence"];
  EXPECT_TRUE(v["reference"].is_null());
}

TEST(Verdicts, LinkTrainedBelowItsMaximumUnderLoad) {
  auto doc = document();
  auto fields = copy_fields();
  fields.update({{"link_below_max_under_load", true},
                 {"link_generation_under_load", 4},
                 {"link_width_under_load", 8},
                 {"link_max_generation", 5},
                 {"link_max_width", 16}});
  add_case(doc, "h2d pinned", {14e9, 14e9, 14e9}, fields);
  const auto v = judge(doc);
  EXPECT_EQ(v["verdict"], "below expectation");
  EXPECT_NE(causes(v).find("Gen4 x8 in a Gen5 x16 slot under load: check the slot or riser"),
            std::string::npos)
      << causes(v);
}

TEST(Verdicts, HostMemoryOnTheFarNumaNode) {
  auto doc = document();
  auto fields = copy_fields();
  fields.update({{"host_memory_numa_node", 1}, {"thread_numa_node", 1}});
  add_case(doc, "h2d pinned", {40e9, 40e9, 40e9}, fields);
  const auto v = judge(doc);
  EXPECT_EQ(v["verdict"], "below expectation");
  EXPECT_NE(causes(v).find("host memory on NUMA node 1, the GPU on node 0 (far node)"),
            std::string::npos)
      << causes(v);
}

TEST(Verdicts, ClocksThrottledAndWhy) {
  auto doc = document();
  auto fields = copy_fields();
  fields.erase("ceiling_bytes_per_second");
  fields.update({{"clock_throttled", true},
                 {"sm_clock_mhz", 1200},
                 {"sm_clock_max_mhz", 1980},
                 {"clock_reasons", {"hw thermal"}}});
  add_case(doc, "triad gpu", {2e12, 2e12, 2e12}, fields);
  const auto v = judge(doc);
  EXPECT_EQ(v["verdict"], "below expectation");
  EXPECT_NE(causes(v).find("SM clock throttled at 1200 of 1980 MHz (hw thermal)"),
            std::string::npos)
      << causes(v);
}

TEST(Verdicts, AnotherProcessOnTheGpu) {
  auto ctx = context();
  ctx["cuda"]["gpus"][0]["other_compute_processes"] = 1;
  auto doc = document(ctx);
  add_case(doc, "h2d pinned", {55e9, 55e9, 55e9}, copy_fields());
  const auto v = judge(doc);
  EXPECT_EQ(v["verdict"], "below expectation");
  EXPECT_NE(causes(v).find("1 other process(es) on the GPU"), std::string::npos) << causes(v);
}

// Persistence off costs start-up, not a steady rate: named when the figure is short, not on its
// own.
TEST(Verdicts, PersistenceOffIsNamedWhenTheFigureIsShort) {
  auto ctx = context();
  ctx["cuda"]["gpus"][0]["persistence_mode"] = "off";
  auto fields = copy_fields();
  fields["expected_share_of_ceiling"] = 0.7;
  auto fine = document(ctx);
  add_case(fine, "h2d pinned", {55e9, 55e9, 55e9}, fields);
  EXPECT_EQ(judge(fine)["verdict"], "healthy");
  auto slow = document(ctx);
  add_case(slow, "h2d pinned", {20e9, 20e9, 20e9}, fields);
  const auto v = judge(slow);
  EXPECT_EQ(v["verdict"], "below expectation");
  EXPECT_NE(causes(v).find("persistence mode off"), std::string::npos) << causes(v);
  EXPECT_NE(v["evidence"].get<std::string>().find("below the 70% of its ceiling expected"),
            std::string::npos);
}

TEST(Verdicts, ThpOffForPinningAtScale) {
  auto doc = document();
  auto fields = copy_fields();
  fields.update({{"thp_enabled", "never"}, {"expected_share_of_ceiling", 0.7}});
  add_case(doc, "pin 4 GiB", {10e9, 10e9, 10e9}, fields);
  const auto v = judge(doc);
  EXPECT_EQ(v["verdict"], "below expectation");
  EXPECT_NE(causes(v).find("THP off"), std::string::npos) << causes(v);
}

nlohmann::json cpu_fields(const std::string& view, const std::string& library = "") {
  nlohmann::json f = {{"family", "compute"},
                      {"device", "cpu"},
                      {"compare_group", "compute/sgemm/square"},
                      {"view", view},
                      {"series", ""},
                      {"sweep", "n"},
                      {"n", 1024},
                      {"rate_field", "flop_per_second"}};
  if (!library.empty()) f["library"] = library;
  return f;
}

TEST(Verdicts, PowersaveGovernorForCpuRowsShortOfTheirReference) {
  auto ctx = context();
  ctx["host"]["cpu_governor"] = "powersave";
  auto doc = document(ctx);
  add_case(doc, "sgemm cpu_1t", {50e9, 50e9, 50e9}, cpu_fields("cpu_1t"));
  auto reference_doc = document(context());
  reference_doc["context"]["offloadbench"]["start_time_utc"] = "2025-06-01T00:00:00Z";
  add_case(reference_doc, "sgemm cpu_1t", {100e9, 95e9, 105e9}, cpu_fields("cpu_1t"));
  const auto v = judge(doc, {{"ref.json", reference_doc}});
  EXPECT_EQ(v["verdict"], "below expectation");
  EXPECT_NE(causes(v).find("governor powersave"), std::string::npos) << causes(v);
  EXPECT_EQ(v["reference"]["file"], "ref.json");
  EXPECT_NE(v["evidence"].get<std::string>().find("below the reference's slowest repetition"),
            std::string::npos);
}

TEST(Verdicts, CpuBlasOnAFallbackCoreType) {
  auto ctx = context();
  ctx["host"]["blas"]["library"] =
      "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY USE_OPENMP Prescott MAX_THREADS=64";
  auto doc = document(ctx);
  add_case(doc, "sgemm cpu_1t", {23.7e9, 23.7e9, 23.7e9}, cpu_fields("cpu_1t", "OpenBLAS"));
  const auto v = judge(doc);
  EXPECT_EQ(v["verdict"], "below expectation");
  EXPECT_NE(causes(v).find("fallback core type (OpenBLAS Prescott)"), std::string::npos)
      << causes(v);
  // oneDNN's row on the same machine is not OpenBLAS's: no such cause.
  auto onednn = document(ctx);
  add_case(onednn, "sgemm oneDNN cpu_1t", {154e9, 154e9, 154e9}, cpu_fields("cpu_1t", "oneDNN"));
  EXPECT_EQ(judge(onednn)["verdict"], "healthy");
}

TEST(Verdicts, AllThreadsSlowerThanOne) {
  auto doc = document();
  add_case(doc, "sgemm cpu_all", {48.8e9, 48.8e9, 48.8e9}, cpu_fields("cpu_all"));
  auto one = cpu_fields("cpu_1t");
  add_case(doc, "sgemm cpu_1t", {95.3e9, 95.3e9, 95.3e9}, one);
  for (auto& r : doc["benchmarks"])
    if (r["name"] == "sgemm cpu_1t") r.erase("headline");
  const auto v = judge(doc);
  EXPECT_EQ(v["label"], "sgemm cpu_all");
  EXPECT_EQ(v["verdict"], "below expectation");
  EXPECT_NE(causes(v).find("threads slower than one (48.80 GFLOP/s vs 95.30 GFLOP/s)"),
            std::string::npos)
      << causes(v);
  EXPECT_NE(causes(v).find("load average 3.1 on 2 CPUs"), std::string::npos) << causes(v);
}

TEST(Verdicts, ASpreadTooWideToTrust) {
  auto doc = document();
  add_case(doc, "h2d pinned", {55e9, 20e9, 55e9}, copy_fields());
  const auto v = judge(doc);
  EXPECT_EQ(v["verdict"], "below expectation");
  EXPECT_NE(causes(v).find("spread too wide to trust (unsteady: cv"), std::string::npos)
      << causes(v);
}

TEST(Verdicts, AboveTheCeilingIsImpossible) {
  auto doc = document();
  add_case(doc, "h2d pinned", {90e9, 90e9, 90e9}, copy_fields());
  const auto v = judge(doc);
  EXPECT_EQ(v["verdict"], "impossible");
  EXPECT_NE(causes(v).find("above its ceiling"), std::string::npos) << causes(v);
}

// A pipeline past its own bound (the streams line that read 4.09× over serial, bound 1.95×).
TEST(Verdicts, PastItsOwnBoundIsImpossibleWithTheRule) {
  auto doc = document();
  auto fields = copy_fields();
  fields.update({{"family", "streams"}, {"overlap_efficiency", 2.1}});
  add_case(doc, "streams best pipeline", {50e9, 50e9, 50e9}, fields);
  const auto v = judge(doc);
  EXPECT_EQ(v["verdict"], "impossible");
  EXPECT_NE(causes(v).find("within_bound: "), std::string::npos) << causes(v);
  EXPECT_NE(causes(v).find("overlap_efficiency 2.10"), std::string::npos) << causes(v);
}

TEST(Verdicts, AnInvalidRowIsImpossibleWithItsReason) {
  auto doc = document();
  add_case(doc, "h2d pinned", {50e9, 50e9, 50e9}, copy_fields());
  doc["benchmarks"][1]["validated"] = false;
  doc["benchmarks"][1]["invalid_reason"] = "byte 7 differs";
  const auto v = judge(doc);
  EXPECT_EQ(v["verdict"], "impossible");
  EXPECT_NE(causes(v).find("byte 7 differs"), std::string::npos) << causes(v);
}

TEST(Verdicts, ShortOfTheReferenceWithNoRecordedCauseSaysSo) {
  auto doc = document();
  add_case(doc, "h2d pinned", {40e9, 40e9, 40e9}, copy_fields());
  auto reference_doc = document();
  reference_doc["context"]["host_name"] = "other";
  add_case(reference_doc, "h2d pinned", {55e9, 54e9, 56e9}, copy_fields());
  const auto v = judge(doc, {{"ref.json", reference_doc}});
  EXPECT_EQ(v["verdict"], "below expectation");
  EXPECT_EQ(v["causes"], nlohmann::json({"cause not recorded by this run"}));
  EXPECT_NE(v["evidence"].get<std::string>().find(
                "26% below the reference's slowest repetition 54.00 GB/s"),
            std::string::npos)
      << v["evidence"];
}

TEST(Verdicts, ReferencesMatchByGpuModelAndLinkAndNeverTheFileItself) {
  const auto doc = document();
  auto same = document();
  same["context"]["host_name"] = "other";
  const auto other_model = document(context("Other GPU"));
  const auto other_link = document(context("Test GPU", 4, 16));
  EXPECT_EQ(matching_reference(doc, 0, {{"model", other_model}, {"link", other_link}}), nullptr);
  const std::vector<ReferenceRun> refs = {{"itself", doc}, {"link", other_link}, {"same", same}};
  const auto* found = matching_reference(doc, 0, refs);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->file, "same");
}

TEST(Verdicts, ReferenceFolderLoadsResultsFilesOnly) {
  const auto dir = std::filesystem::path(testing::temp_path("ob_refs"));
  std::filesystem::create_directories(dir);
  auto doc = document();
  add_case(doc, "h2d pinned", {55e9}, copy_fields());
  std::ofstream(dir / "a.json") << doc.dump();
  std::ofstream(dir / "a-info.json") << "{}";
  std::ofstream(dir / "b.json") << "not json";
  const auto runs = load_reference_runs(dir.string());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].file, "a.json");
  EXPECT_TRUE(load_reference_runs((dir / "missing").string()).empty());
  std::filesystem::remove_all(dir);
}

TEST(Verdicts, TheMachineHalfBeforeAnyRun) {
  auto ctx = context();
  auto& link = ctx["cuda"]["gpus"][0]["pcie_link"];
  link["current_generation"] = 4;
  link["current_width"] = 8;
  link["theoretical_bytes_per_second"] = 15.75e9;
  ctx["host"]["blas"]["library"] = "OpenBLAS 0.3.21 DYNAMIC_ARCH Prescott";
  std::string all;
  for (const auto& line : machine_limits(ctx)) all += line + "\n";
  EXPECT_NE(
      all.find("GPU 0: this link will cap copies at 15.8 GB/s: trained Gen4 x8 in a Gen5 x16 slot"),
      std::string::npos)
      << all;
  EXPECT_NE(all.find("CPU: CPU BLAS on a fallback core type (OpenBLAS Prescott)"),
            std::string::npos)
      << all;
  EXPECT_TRUE(machine_limits(context()).empty()) << "a machine with nothing recorded against it";
}

TEST(Summary, LinesAreCutToTheScreenWidthByCharacters) {
  EXPECT_EQ(fit_columns("short"), "short");
  const std::string wide(120, 'x');
  EXPECT_EQ(fit_columns(wide), std::string(99, 'x') + "…");
  const std::string exact = std::string(98, 'x') + "≈";  // 99 characters, 101 bytes
  EXPECT_EQ(fit_columns(exact), exact);
}

}  // namespace
}  // namespace offloadbench
