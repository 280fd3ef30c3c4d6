#include "harness/regression/floor_history.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/analysis/stats.h"
#include "harness/regression/compare.h"
#include "harness/regression/history.h"
#include "harness/results/results.h"

namespace offloadbench {

std::map<std::string, double> floor_step_spread(
    const std::vector<std::map<std::string, double>>& runs) {
  std::map<std::string, std::vector<double>> series;  // per benchmark, its floors in run order
  for (const auto& run : runs)
    for (const auto& [name, value] : run) series[name].push_back(value);
  std::map<std::string, double> level;
  for (const auto& [name, values] : series) level[name] = median(values);
  std::vector<double> offsets;
  for (const auto& run : runs) {
    std::vector<double> moved;
    for (const auto& [name, value] : run) moved.push_back(value - level[name]);
    offsets.push_back(moved.empty() ? 0.0 : median(moved));
  }
  std::map<std::string, std::vector<double>> steps;
  std::map<std::string, double> previous;
  for (std::size_t r = 0; r < runs.size(); ++r)
    for (const auto& [name, value] : runs[r]) {
      const double here = value - offsets[r];
      if (const auto it = previous.find(name); it != previous.end())
        steps[name].push_back(std::fabs(here - it->second));
      previous[name] = here;
    }
  std::map<std::string, double> spread;
  for (const auto& [name, s] : steps)
    if (s.size() >= 2) spread[name] = 1.4826 * median(s) / std::sqrt(2.0);
  return spread;
}

FloorHistory load_floor_history(const std::string& directory, const std::string& metric,
                                const nlohmann::json& fingerprint) {
  FloorHistory h;
  h.directory = directory;
  struct Run {
    std::string start;
    std::map<std::string, double> floors;
  };
  std::vector<Run> runs;
  const bool rate = higher_is_better(metric);
  for (const auto& path : history_files(directory, &h.ignored)) {
    nlohmann::json doc;
    try {
      doc = load_for_comparison(path);
    } catch (const ResultsError& e) {
      h.ignored.push_back(e.what());
      continue;
    }
    const auto& context = doc["context"];
    const auto ob = context.value("offloadbench", nlohmann::json::object());
    const auto differences = fingerprint_differences(fingerprint, context["machine_fingerprint"]);
    std::string why;
    if (!differences.empty())
      why = "another machine: " + differences.front();
    else if (ob.value("incomplete", false))
      why = "unfinished run";
    else if (processes_of(doc) < 2)
      why = "repetitions from one process (not run --processes)";
    else if (!ob.contains("start_time_utc") || !ob["start_time_utc"].is_string())
      why = "no start_time_utc";
    if (!why.empty()) {
      h.ignored.push_back(fmt::format("{}: {}", path, why));
      continue;
    }
    Run run{ob["start_time_utc"].get<std::string>(), {}};
    for (const auto& s : benchmark_samples(doc, metric, path)) {
      if (s.values.empty() ||
          std::any_of(s.values.begin(), s.values.end(), [](double v) { return !(v > 0); }))
        continue;  // a repetition of 0 has no logarithm (compare leaves such a row untested too)
      double floor = log_slowness(s.values.front(), rate);
      for (double v : s.values) floor = std::min(floor, log_slowness(v, rate));
      run.floors[s.name] = floor;
    }
    runs.push_back(std::move(run));
  }
  if (runs.size() < 3)
    throw ResultsError(
        fmt::format("{}: {} results file(s) of this machine measured with run --processes; "
                    "--history needs at least 3{}",
                    directory, runs.size(),
                    h.ignored.empty() ? "" : fmt::format(" (left out: {})", h.ignored.front())));
  std::stable_sort(runs.begin(), runs.end(),
                   [](const Run& a, const Run& b) { return a.start < b.start; });
  std::vector<std::map<std::string, double>> floors;
  for (const auto& run : runs) floors.push_back(run.floors);
  h.runs = runs.size();
  h.spread = floor_step_spread(floors);
  return h;
}

}  // namespace offloadbench
