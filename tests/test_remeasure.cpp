// Measuring unsteady cases again (cli/remeasure.h): which cases are chosen, and how the second
// measurement replaces the first in the document without losing it.
#include <gtest/gtest.h>

#include "cli/remeasure.h"
#include "harness/analysis/analysis.h"
#include "benchmarks/family_analyses.h"

namespace offloadbench::cli {
namespace {

nlohmann::json row(const std::string& name, double ms, int repetition) {
  return {{"name", name},    {"run_type", "iteration"}, {"repetition_index", repetition},
          {"real_time", ms}, {"time_unit", "ms"},       {"iterations", 10},
          {"skipped", false}};
}

nlohmann::json document(const std::map<std::string, std::vector<double>>& cases) {
  nlohmann::json doc = {{"context", {{"offloadbench", {{"schema_version", 1}}}}},
                        {"benchmarks", nlohmann::json::array()}};
  for (const auto& [name, times] : cases) {
    for (std::size_t i = 0; i < times.size(); ++i)
      doc["benchmarks"].push_back(row(name, times[i], static_cast<int>(i)));
    doc["benchmarks"].push_back({{"name", name + "_median"},
                                 {"run_name", name},
                                 {"run_type", "aggregate"},
                                 {"aggregate_name", "median"},
                                 {"real_time", times[0]},
                                 {"time_unit", "ms"}});
  }
  return doc;
}

TEST(Remeasure, ChoosesTheUnsteadyCasesMostUnsteadyFirstAndBounded) {
  const auto doc = document({{"steady", {1.0, 1.05, 0.98}},
                             {"bimodal", {1.0, 1.0, 2.7}},  // cv 0.63
                             {"wobbly", {1.0, 1.5, 1.0}},   // cv 0.25
                             {"two_only", {1.0, 3.0}}});    // too few repetitions to judge
  EXPECT_EQ(unsteady_case_names(doc, 10), (std::vector<std::string>{"bimodal", "wobbly"}));
  EXPECT_EQ(unsteady_case_names(doc, 1), std::vector<std::string>{"bimodal"});
}

TEST(Remeasure, TheSecondMeasurementReplacesTheFirstWhichStaysSuperseded) {
  const auto doc = document({{"steady", {1.0, 1.05, 0.98}}, {"bimodal", {1.0, 1.0, 2.7}}});
  nlohmann::json again =
      document({{"bimodal", {1.0, 1.01, 0.99, 1.0, 1.02}}, {"steady", {9.0, 9.0, 9.0}}});
  const auto merged = with_remeasured(doc, again, {"bimodal"});
  int superseded = 0, remeasured = 0, steady = 0;
  for (const auto& r : merged["benchmarks"]) {
    if (r["run_type"] == "superseded") {
      ++superseded;
      EXPECT_NE(r["superseded_because"].get<std::string>().find("cv 0.63"), std::string::npos) << r;
    }
    if (r.value("remeasured", false)) {
      ++remeasured;
      EXPECT_EQ(r["name"], "bimodal");
      EXPECT_EQ(r["repetitions"], 5);
    }
    if (r["name"] == "steady" && r["run_type"] == "iteration") {
      ++steady;
      EXPECT_LT(r["real_time"].get<double>(), 2.0) << "a case not chosen keeps its own rows";
    }
  }
  EXPECT_EQ(superseded, 4);  // three repetitions and their aggregate
  EXPECT_EQ(remeasured, 5);
  EXPECT_EQ(steady, 3);
  // The analysis sees the second measurement only: every rule holds.
  const auto a = analyze(merged, family_analyses());
  EXPECT_TRUE(a["invariants"]["violations"].empty()) << a["invariants"].dump(1);
  EXPECT_FALSE(analyze(doc, family_analyses())["invariants"]["violations"].empty());
}

TEST(Remeasure, ACaseTheSecondRunDidNotMeasureKeepsItsRows) {
  const auto doc = document({{"bimodal", {1.0, 1.0, 2.7}}});
  const auto merged = with_remeasured(doc, document({}), {"bimodal"});
  EXPECT_EQ(merged, doc);
}

}  // namespace
}  // namespace offloadbench::cli
