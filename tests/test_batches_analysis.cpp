// The batches family's analysis on hand-made rows with a known answer: the batch from which the GPU
// normalize wins over a CPU normalize + fp32 copy, its range from the repetitions' spread, the
// speedup at the largest batch, the no-crossover cases, and the one-line headline `summary` prints.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "benchmarks/batches/batches_analysis.h"
#include "benchmarks/family_analyses.h"
#include "harness/analysis/analysis.h"
#include "harness/analysis/analysis_detail.h"

namespace offloadbench {
namespace {

// Model: (a) costs 1 ms + 0.5 ms per image; (b) 2.25 ms + 0.1 ms per image: equal at batch 3.125.
double cpu_side(int batch) { return 1e-3 + 0.5e-3 * batch; }
double gpu_side(int batch) { return 2.25e-3 + 0.1e-3 * batch; }

nlohmann::json row(const std::string& placement, const std::string& memory, int batch,
                   double seconds, int rep) {
  return {
      {"name", "batches/224x224x3/" + placement + "/" + memory + "/batch:" + std::to_string(batch)},
      {"run_type", "iteration"},
      {"repetition_index", rep},
      {"real_time", seconds * 1e3},
      {"time_unit", "ms"},
      {"iterations", 10},
      {"skipped", false},
      {"validated", true},
      {"family", "batches"},
      {"op", "batch_to_gpu"},
      {"placement", placement},
      {"host_memory", memory},
      {"image", "224x224x3"},
      {"batch", batch},
      {"device", 0},
      {"sweep", "batch"}};
}

// Three repetitions at ±spread around the model.
nlohmann::json document(double spread, double (*gpu)(int) = gpu_side) {
  nlohmann::json rows = nlohmann::json::array();
  for (int batch : {1, 2, 4, 8, 16, 32})
    for (int rep = 0; rep < 3; ++rep) {
      const double jitter = 1 + spread * (rep - 1);
      rows.push_back(row("cpu_normalize_fp32", "pinned", batch, cpu_side(batch) * jitter, rep));
      rows.push_back(row("gpu_normalize_fp32", "pinned", batch, gpu(batch) * jitter, rep));
      rows.push_back(row("gpu_normalize_bf16", "pinned", batch, gpu(batch) * 0.9 * jitter, rep));
    }
  return {{"context", {{"offloadbench", {{"schema_version", 1}}}}}, {"benchmarks", rows}};
}

const nlohmann::json& entry(const nlohmann::json& analysis, const std::string& placement) {
  for (const auto& e : analysis["batches"])
    if (e["placement"] == placement) return e;
  throw std::runtime_error("no entry for " + placement);
}

TEST(BatchesAnalysis, FindsTheBatchFromWhichTheGpuNormalizeWins) {
  const auto analysis = analyze(document(0.0), family_analyses());
  ASSERT_EQ(analysis["batches"].size(), 2u);  // fp32 and bf16 against (a), pinned
  const auto& fp32 = entry(analysis, "gpu_normalize_fp32");
  EXPECT_EQ(fp32["kind"], "crossover");
  EXPECT_EQ(fp32["first_winning_batch"], 4);
  EXPECT_GT(fp32["batch"].get<double>(), 2);  // interpolated on log batch between 2 and 4, near 3.1
  EXPECT_LT(fp32["batch"].get<double>(), 4);
  EXPECT_NEAR(fp32["speedup_at_largest"].get<double>(), cpu_side(32) / gpu_side(32), 1e-9);
  EXPECT_EQ(fp32["points"].size(), 6u);
  // bf16 is 10% faster: its crossing comes no later.
  EXPECT_LE(entry(analysis, "gpu_normalize_bf16")["batch"].get<double>(),
            fp32["batch"].get<double>());
}

TEST(BatchesAnalysis, SpreadWidensTheRangeAroundTheCrossing) {
  const auto analysis = analyze(document(0.2), family_analyses());
  const auto& fp32 = entry(analysis, "gpu_normalize_fp32");
  ASSERT_EQ(fp32["kind"], "crossover");
  ASSERT_TRUE(fp32["low"].is_number());
  ASSERT_TRUE(fp32["high"].is_number());
  EXPECT_LT(fp32["low"].get<double>(), fp32["batch"].get<double>());
  EXPECT_GT(fp32["high"].get<double>(), fp32["batch"].get<double>());
  EXPECT_LT(fp32["speedup_low_at_largest"].get<double>(), fp32["speedup_at_largest"].get<double>());
  EXPECT_GT(fp32["speedup_high_at_largest"].get<double>(),
            fp32["speedup_at_largest"].get<double>());
}

TEST(BatchesAnalysis, HeadlineNamesTheImageTheMemoryAndTheBatch) {
  const auto doc = document(0.0);
  const auto analysis = analyze(doc, family_analyses());
  std::vector<std::string> lines;
  for (const auto& l : analysis["headlines"]) lines.push_back(l.get<std::string>());
  const auto found = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.rfind(
               "224x224x3 batches from pinned memory: send uint8 and normalize on the GPU from "
               "batch 4",
               0) == 0;
  });
  ASSERT_NE(found, lines.end()) << ::testing::PrintToString(lines);
  EXPECT_NE(found->find("at batch 32"), std::string::npos) << *found;
  // One line per fp32 crossover: bf16 has none of its own.
  EXPECT_EQ(std::count_if(
                lines.begin(), lines.end(),
                [](const std::string& l) { return l.find(" batches from ") != std::string::npos; }),
            1);
}

TEST(BatchesAnalysis, SaysSoWhenTheGpuWinsEverywhereOrNowhere) {
  auto everywhere =
      analyze(document(0.0, [](int batch) { return 0.25 * cpu_side(batch); }), family_analyses());
  const auto& all = entry(everywhere, "gpu_normalize_fp32");
  EXPECT_EQ(all["kind"], "gpu_wins_all");
  EXPECT_TRUE(all["batch"].is_null());
  EXPECT_NE(detail::batches_line(all, false).find("at every batch measured (1–32)"),
            std::string::npos);
  auto nowhere =
      analyze(document(0.0, [](int batch) { return 2 * cpu_side(batch); }), family_analyses());
  const auto& none = entry(nowhere, "gpu_normalize_fp32");
  EXPECT_EQ(none["kind"], "cpu_wins_at_largest");
  EXPECT_TRUE(none["first_winning_batch"].is_null());
  EXPECT_NE(detail::batches_line(none, false).find("as fast or faster up to batch 32"),
            std::string::npos);
}

TEST(BatchesAnalysis, NoBaselineOrSkippedRowsGiveNoEntry) {
  auto doc = document(0.0);
  for (auto& r : doc["benchmarks"])
    if (r["placement"] == "cpu_normalize_fp32") r["skipped"] = true;
  EXPECT_TRUE(analyze(doc, family_analyses())["batches"].empty());
}

}  // namespace
}  // namespace offloadbench
