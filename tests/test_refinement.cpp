// Crossovers found, not interpolated (harness/analysis/refinement.h, cli/refine.h): the sizes
// chosen bisect every unlocated bracket of a refinable sweep and nothing else; the rounds locate
// the crossovers of a modelled curve; a refinement registers only the listed groups at their sizes.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "benchmarks/compute/compute_cases.h"
#include "benchmarks/family_analyses.h"
#include "benchmarks/mlp/mlp_cases.h"
#include "cli/refine.h"
#include "harness/analysis/analysis.h"
#include "harness/analysis/refinement.h"
#include "harness/benchmark_case.h"

namespace offloadbench {
namespace {

const std::map<std::string, std::string> kRefinable = {{"compute", "elements"}, {"mlp", "batch"}};

nlohmann::json h100_quick() {
  std::ifstream in(std::string(OFFLOADBENCH_REFERENCE_DIR) +
                   "/nvidia-h100-80gb-hbm3-2026-11-26-quick.json");
  auto doc = nlohmann::json::parse(in);
  doc["analysis"] = analyze(doc, family_analyses());
  return doc;
}

bool refinable(const nlohmann::json& c) {
  const auto it = kRefinable.find(c.value("family", ""));
  return it != kRefinable.end() && c.value("sweep", "") == it->second;
}

// The cases of a group told apart by what is not their size.
std::string case_key(const nlohmann::json& row) {
  return nlohmann::json{row.value("view", ""), row.value("series", ""), row.value("kernel", ""),
                        row.contains("cpu_threads") ? row["cpu_threads"] : nlohmann::json()}
      .dump();
}

// A measurement from a modelled curve: each case's time at a new size is the log-log interpolation
// of its median times at the measured sizes either side, with a steady 0.1% between repetitions (a
// case too unsteady to pair in the sweep is steady when measured again, as remeasure finds).
cli::MeasureRound modelled(const nlohmann::json& measured, std::vector<std::uint64_t>* asked) {
  return [&measured, asked](const RefinementSizes& sizes, int) -> std::optional<nlohmann::json> {
    nlohmann::json out = {{"benchmarks", nlohmann::json::array()}};
    for (const auto& [group, values] : sizes)
      for (auto v : values) {
        asked->push_back(v);
        std::map<std::string, std::map<double, std::vector<const nlohmann::json*>>>
            cases;  // key -> size -> rows
        for (const auto& row : measured["benchmarks"])
          if (row.value("compare_group", "") == group && row.value("run_type", "") == "iteration" &&
              !row.value("skipped", false) && row.contains(row.value("sweep", "")))
            cases[case_key(row)][row[row.value("sweep", "")].get<double>()].push_back(&row);
        const auto median_time = [](const std::vector<const nlohmann::json*>& rows) {
          std::vector<double> t;
          for (const auto* r : rows) t.push_back(r->at("real_time").get<double>());
          std::sort(t.begin(), t.end());
          return t[t.size() / 2];
        };
        for (const auto& [key, by_size] : cases) {
          const auto hi = by_size.upper_bound(static_cast<double>(v));
          if (hi == by_size.begin() || hi == by_size.end()) continue;
          const auto lo = std::prev(hi);
          const double f = std::log(v / lo->first) / std::log(hi->first / lo->first);
          const double t = std::exp((1 - f) * std::log(median_time(lo->second)) +
                                    f * std::log(median_time(hi->second)));
          for (std::size_t r = 0; r < lo->second.size(); ++r) {
            auto row = *lo->second[r];
            row["real_time"] = t * (1 + 0.001 * static_cast<double>(r));
            row["name"] = row["name"].get<std::string>() + "/at:" + std::to_string(v);
            row[row.value("sweep", "")] = v;
            out["benchmarks"].push_back(row);
          }
        }
      }
    return out;
  };
}

}  // namespace

TEST(Refinement, BisectsEveryUnlocatedBracketOfARefinableSweepAndNothingElse) {
  const auto doc = h100_quick();
  const auto sizes = refinement_sizes(doc, kRefinable);
  int expected = 0;
  for (const auto& c : doc["analysis"]["crossovers"]) {
    if (c["kind"] != "crossover" || c["located"].get<bool>()) continue;
    const auto group = c["compare_group"].get<std::string>();
    if (!refinable(c)) {
      EXPECT_EQ(sizes.count(group), 0u) << group;  // sgemm orders and batches: not refined
      continue;
    }
    const double low = c["bracket_low"], high = c["bracket_high"];
    // The middle of the bracket, or where the sweep measured it (and it gave no point), both
    // halves'.
    const double middle = std::sqrt(low * high);
    ASSERT_TRUE(sizes.count(group)) << group;
    int inside = 0;
    for (auto v : sizes.at(group)) {
      const double at = static_cast<double>(v);
      inside += std::abs(at - middle) <= 0.5 || std::abs(at - std::sqrt(low * middle)) <= 0.5 ||
                std::abs(at - std::sqrt(middle * high)) <= 0.5;
    }
    EXPECT_GE(inside, 1) << group;
    ++expected;
  }
  EXPECT_GT(expected, 10);
  for (const auto& [group, values] : sizes) {
    EXPECT_TRUE(std::is_sorted(values.begin(), values.end())) << group;
    EXPECT_EQ(group.rfind("compute/sgemm", 0), std::string::npos) << group;
  }
}

TEST(Refinement, AdjacentBatchesOrALocatedBracketAskForNothing) {
  nlohmann::json doc = {{"benchmarks", nlohmann::json::array()},
                        {"analysis", {{"crossovers", nlohmann::json::array()}}}};
  const auto crossover = [](double low, double high) {
    return nlohmann::json{{"kind", "crossover"}, {"located", false},     {"family", "mlp"},
                          {"sweep", "batch"},    {"compare_group", "g"}, {"bracket_low", low},
                          {"bracket_high", high}};
  };
  doc["analysis"]["crossovers"] = {crossover(6, 7), crossover(1000, 1100)};
  EXPECT_TRUE(refinement_sizes(doc, kRefinable).empty());
  doc["analysis"]["crossovers"] = {crossover(1, 64)};
  EXPECT_EQ(refinement_sizes(doc, kRefinable).at("g"), std::vector<std::uint64_t>{8});
  // Measured already, yet no point (too unsteady to pair): the middles of both halves.
  doc["benchmarks"].push_back({{"compare_group", "g"}, {"sweep", "batch"}, {"batch", 8}});
  EXPECT_EQ(refinement_sizes(doc, kRefinable).at("g"), (std::vector<std::uint64_t>{3, 23}));
}

TEST(Refinement, TheTextOfARoundReadsBackAndBadTextIsNamed) {
  const RefinementSizes sizes = {{"compute/add/fp32", {3000, 8192}},
                                 {"mlp/784-128-10/inference", {8}}};
  EXPECT_EQ(format_refinement(sizes), "compute/add/fp32=3000,8192;mlp/784-128-10/inference=8");
  EXPECT_EQ(parse_refinement(format_refinement(sizes)), sizes);
  for (const char* bad : {"", "g", "=8", "g=", "g=8,", "g=-1", "g=0", "g=1.5", "g=8;"})
    EXPECT_THROW(parse_refinement(bad), std::invalid_argument) << bad;
}

TEST(Refinement, RoundsLocateTheCrossoversOfAModelledCurveInsideTheirBrackets) {
  const auto before = h100_quick();
  std::vector<std::uint64_t> asked;
  // The model interpolates the sweep's own rows: points it adds lie on the same curve, so it need
  // not see them.
  auto current = cli::refine_crossovers(before, kDefaultRefinementRounds, kRefinable,
                                        modelled(before, &asked));
  current["analysis"] = analyze(current, family_analyses());
  ASSERT_FALSE(asked.empty());
  int refined_rows = 0;
  for (const auto& row : current["benchmarks"]) refined_rows += row.contains("refinement_round");
  EXPECT_GT(refined_rows, 0);
  int crossovers = 0;
  for (const auto& c : current["analysis"]["crossovers"]) {
    if (c["kind"] != "crossover" || !refinable(c)) continue;
    ++crossovers;
    const double low = c["bracket_low"], high = c["bracket_high"];
    EXPECT_TRUE(crossover_located(low, high)) << c.dump();
    EXPECT_TRUE(low <= c["size"].get<double>() && c["size"].get<double>() <= high) << c.dump();
  }
  EXPECT_GT(crossovers, 10);
  // Bounded: at most one new size per crossover and round.
  EXPECT_LE(asked.size(), static_cast<std::size_t>(kDefaultRefinementRounds) *
                              before["analysis"]["crossovers"].size());
}

TEST(Refinement, ARoundRegistersOnlyItsGroupsAtTheirSizes) {
  RunConfig config;
  config.gpu_devices = {0};
  config.refine = RefinementSizes{{"compute/add/fp32", {3000}}, {"mlp/784-128-10/inference", {8}}};
  clear_registered_cases();
  compute_suite().register_cases(config);
  std::set<std::string> views;
  for (const auto& c : registered_cases()) {
    EXPECT_EQ(c.fields["compare_group"], "compute/add/fp32") << c.name;
    EXPECT_EQ(c.fields["elements"], 3000) << c.name;
    EXPECT_EQ(c.name.find("four_per_thread"), std::string::npos) << c.name;
    views.insert(c.fields["view"].get<std::string>());
  }
  EXPECT_EQ(views, (std::set<std::string>{"gpu_kernel", "gpu_pinned", "gpu_pageable", "cpu_1t",
                                          "cpu_all"}));
  clear_registered_cases();
  mlp_suite().register_cases(config);
  views.clear();
  for (const auto& c : registered_cases()) {
    EXPECT_EQ(c.fields["compare_group"], "mlp/784-128-10/inference") << c.name;
    EXPECT_EQ(c.fields["batch"], 8) << c.name;
    views.insert(c.fields["view"].get<std::string>());
  }
  EXPECT_TRUE(views.count("gpu_kernel") && views.count("gpu_pageable") && views.count("cpu_1t") &&
              views.count("cpu_all"));
  clear_registered_cases();
}

}  // namespace offloadbench
