#include "cli/remeasure.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>

#include "cli/run_processes.h"
#include "harness/analysis/analysis_detail.h"
#include "harness/analysis/invariants.h"
#include "harness/results/results.h"

namespace offloadbench::cli {

namespace {
std::map<std::string, double> unsteady_cvs(const nlohmann::json& doc) {
  std::map<std::string, double> cvs;
  for (const auto& c : detail::measured_cases(doc))
    if (const auto cv = unsteady_cv(c)) cvs[c.name] = *cv;
  return cvs;
}
}  // namespace

std::vector<std::string> unsteady_case_names(const nlohmann::json& doc, std::size_t max_cases) {
  const auto cvs = unsteady_cvs(doc);
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [name, cv] : cvs) ranked.push_back({cv, name});
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> names;
  for (std::size_t i = 0; i < ranked.size() && i < max_cases; ++i)
    names.push_back(ranked[i].second);
  return names;
}

nlohmann::json with_remeasured(nlohmann::json doc, const nlohmann::json& again,
                               const std::vector<std::string>& names) {
  const std::set<std::string> wanted(names.begin(), names.end());
  std::map<std::string, std::vector<nlohmann::json>> fresh;
  for (const auto* row : iteration_row_pointers(again)) {
    const auto name = row->value("name", std::string());
    if (wanted.count(name) && !row->value("skipped", false) && !row->value("error_occurred", false))
      fresh[name].push_back(*row);
  }
  const auto cvs = unsteady_cvs(doc);
  for (auto& row : doc["benchmarks"]) {
    // Its repetitions, and Google Benchmark's aggregates of them (named by run_name).
    const auto type = row.value("run_type", std::string());
    const auto name = row.value(type == "aggregate" ? "run_name" : "name", std::string());
    if ((type != "iteration" && type != "aggregate") || !fresh.count(name)) continue;
    row["run_type"] = "superseded";
    const auto cv = cvs.find(name);
    row["superseded_because"] =
        fmt::format("unsteady (cv {:.2f}): measured again in a fresh process",
                    cv == cvs.end() ? 0.0 : cv->second);
  }
  for (auto& [name, rows] : fresh)
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i]["repetition_index"] = i;
      rows[i]["repetitions"] = rows.size();
      rows[i]["remeasured"] = true;
      doc["benchmarks"].push_back(std::move(rows[i]));
    }
  return doc;
}

nlohmann::json remeasure_unsteady(const nlohmann::json& doc, const RemeasurePlan& plan) {
  if (plan.repetitions <= 0) return doc;
  const auto names = unsteady_case_names(doc, plan.max_cases);
  if (names.empty()) return doc;
  fmt::print(
      stderr,
      "offloadbench: {} case(s) spread by more than {:.0f}% over their repetitions: measuring them "
      "again in a fresh process ({} repetitions)\n",
      names.size(), 100 * invariant_limits::kUnsteadyCv, plan.repetitions);
  try {
    const ProcessFolder folder(plan.out);
    auto child = plan.child;
    child.repetitions = plan.repetitions;
    child.measure_only = true;
    child.out = (folder.path() / "remeasure.json").string();
    child.benchmark_flags.push_back("--benchmark_filter=" + exact_name_filter(names));
    const auto log = (folder.path() / "remeasure.log").string();
    std::mt19937_64 rng(std::random_device{}());
    const auto end = start_child_run(own_executable(), child, log, 0, nullptr, rng);
    if ((end.status != 0 && end.status != 1) || !std::filesystem::exists(child.out)) {
      fmt::print(
          stderr,
          "offloadbench: measuring again failed (status {}: {}); the first measurement stays\n",
          end.status, last_log_line(log));
      return doc;
    }
    return with_remeasured(doc, load_results(child.out), names);
  } catch (const std::exception& e) {
    fmt::print(stderr, "offloadbench: measuring again failed ({}); the first measurement stays\n",
               e.what());
    return doc;
  }
}

}  // namespace offloadbench::cli
