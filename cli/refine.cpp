#include "cli/refine.h"

#include <cstdio>
#include <filesystem>
#include <random>
#include <set>

#include <fmt/format.h>

#include "benchmarks/family_analyses.h"
#include "cli/run_processes.h"
#include "harness/analysis/analysis.h"
#include "harness/results/results.h"

namespace offloadbench::cli {

nlohmann::json refine_crossovers(nlohmann::json doc, int rounds,
                                 const std::map<std::string, std::string>& refinable,
                                 const MeasureRound& measure) {
  for (int round = 1; round <= rounds; ++round) {
    doc["analysis"] = analyze(doc, family_analyses());
    const auto sizes = refinement_sizes(doc, refinable);
    if (sizes.empty()) break;
    std::size_t cases = 0;
    for (const auto& [group, values] : sizes) cases += values.size();
    fmt::print(stderr,
               "offloadbench: locating crossovers, round {} of at most {}: {} size(s) in {} "
               "group(s) inside "
               "their brackets\n",
               round, rounds, cases, sizes.size());
    const auto more = measure(sizes, round);
    if (!more || !more->contains("benchmarks") || !(*more)["benchmarks"].is_array()) break;
    for (auto row : (*more)["benchmarks"]) {
      if (!row.is_object() || row.value("run_type", "iteration") != "iteration") continue;
      row["refinement_round"] = round;
      doc["benchmarks"].push_back(std::move(row));
    }
  }
  return doc;
}

MeasureRound child_round(const RefinePlan& plan) {
  return [plan](const RefinementSizes& sizes, int round) -> std::optional<nlohmann::json> {
    try {
      const ProcessFolder folder(plan.out);
      auto child = plan.child;
      std::set<std::string>
          families;  // a group's family is its name's first part ("compute/add/fp32")
      for (const auto& [group, values] : sizes) families.insert(group.substr(0, group.find('/')));
      child.suites = fmt::format("{}", fmt::join(families, ","));
      child.sizes.clear();
      child.refine = format_refinement(sizes);
      child.repetitions = plan.repetitions;
      child.measure_only = true;
      child.out = (folder.path() / fmt::format("refine-{}.json", round)).string();
      const auto log = (folder.path() / fmt::format("refine-{}.log", round)).string();
      std::mt19937_64 rng(std::random_device{}());
      const auto end = start_child_run(own_executable(), child, log, 0, nullptr, rng);
      if ((end.status != 0 && end.status != 1) || !std::filesystem::exists(child.out)) {
        fmt::print(stderr,
                   "offloadbench: locating crossovers stopped (status {}: {}); the sizes measured "
                   "so far stay\n",
                   end.status, last_log_line(log));
        return std::nullopt;
      }
      return load_results(child.out);
    } catch (const std::exception& e) {
      fmt::print(stderr,
                 "offloadbench: locating crossovers stopped ({}); the sizes measured so far stay\n",
                 e.what());
      return std::nullopt;
    }
  };
}

}  // namespace offloadbench::cli
