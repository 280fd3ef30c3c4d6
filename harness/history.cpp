#include "history.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "harness/compare.h"
#include "harness/results.h"
#include "harness/stats.h"

namespace offloadbench {

namespace {

double median_of_range(const std::vector<double>& x, std::size_t lo, std::size_t hi) {
  return median(std::vector<double>(x.begin() + static_cast<std::ptrdiff_t>(lo),
                                    x.begin() + static_cast<std::ptrdiff_t>(hi)));
}

// Run-to-run noise of a series: median |x[i+1] − x[i]| / 0.9539 estimates the standard deviation of
// independent normal noise (the median of |N(0, 2σ²)| is 0.9539σ), and a step changes one difference only.
double successive_difference_sigma(const std::vector<double>& x) {
  std::vector<double> differences;
  for (std::size_t i = 1; i < x.size(); ++i) differences.push_back(std::fabs(x[i] - x[i - 1]));
  return differences.empty() ? 0.0 : median(differences) / 0.9539;
}

// The levels on either side of run k, within [lo_bound, hi_bound) (steps already found bound the
// windows, so that a level is never read across another step), and whether they make a step at k.
bool step_at(const std::vector<double>& x, std::size_t k, std::size_t lo_bound, std::size_t hi_bound, double sigma,
             const ChangePointOptions& o, Step& step) {
  const auto w = static_cast<std::size_t>(std::max(o.window, o.min_segment));
  const std::size_t lo = std::max(lo_bound, k > w ? k - w : 0), hi = std::min(hi_bound, k + w);
  step = {k, median_of_range(x, lo, k), median_of_range(x, k, hi)};
  const double jump = std::fabs(step.after - step.before);
  // Standard error of a difference of two medians of normal samples: 1.2533·σ·√(1/n₁ + 1/n₂).
  const double standard_error =
      1.2533 * sigma * std::sqrt(1.0 / static_cast<double>(k - lo) + 1.0 / static_cast<double>(hi - k));
  const bool large = step.before > 0 && jump / step.before >= o.min_magnitude - 1e-12;
  const bool beyond_noise = jump > o.noise_factor * standard_error;
  const bool placed = std::fabs(x[k] - step.after) < std::fabs(x[k] - step.before) &&
                      std::fabs(x[k - 1] - step.before) < std::fabs(x[k - 1] - step.after);
  return large && beyond_noise && placed;
}

std::string context_string(const nlohmann::json& doc, const char* key) {
  const auto& ob = doc["context"]["offloadbench"];
  return ob.contains(key) && ob[key].is_string() ? ob[key].get<std::string>() : "";
}

struct LoadedRun {
  HistoryRun run;
  std::vector<BenchmarkSamples> samples;
};

}  // namespace

std::vector<Step> detect_change_points(const std::vector<double>& series, const ChangePointOptions& options) {
  const auto m = static_cast<std::size_t>(std::max(options.min_segment, 1));
  const double sigma = successive_difference_sigma(series);
  std::vector<Step> found;  // sorted by index
  // Greedy: the largest step first, then the largest one between the steps found so far, until none.
  while (true) {
    Step best;
    double best_magnitude = -1;
    for (std::size_t k = m; k + m <= series.size(); ++k) {
      std::size_t lo_bound = 0, hi_bound = series.size();
      for (const auto& s : found) {
        if (s.index <= k) lo_bound = s.index;
        if (s.index > k && hi_bound == series.size()) hi_bound = s.index;
      }
      if (k - lo_bound < m || hi_bound - k < m) continue;
      Step step;
      if (!step_at(series, k, lo_bound, hi_bound, sigma, options, step)) continue;
      const double magnitude = std::fabs(std::log(step.after / step.before));
      if (magnitude > best_magnitude) {
        best = step;
        best_magnitude = magnitude;
      }
    }
    if (best_magnitude < 0) break;
    found.insert(std::upper_bound(found.begin(), found.end(), best,
                                  [](const Step& a, const Step& b) { return a.index < b.index; }),
                 best);
  }
  return found;
}

History load_history(const std::string& directory, const std::string& metric, bool allow_different_machines,
                     const ChangePointOptions& options) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(directory, error)) throw ResultsError(fmt::format("{}: not a directory", directory));
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(directory, error))
    if (entry.is_regular_file() && entry.path().extension() == ".json") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());

  History h;
  h.directory = directory;
  h.metric = metric;
  h.options = options;
  std::vector<LoadedRun> loaded;
  nlohmann::json first_fingerprint;
  std::string first_path;
  for (const auto& path : paths) {
    const auto doc = load_for_comparison(path);
    const auto& ob = doc["context"]["offloadbench"];
    if (ob.contains("incomplete") && ob["incomplete"] == true) {
      h.ignored.push_back(fmt::format("{}: unfinished run (context.offloadbench.incomplete)", path));
      continue;
    }
    const auto& fingerprint = doc["context"]["machine_fingerprint"];
    if (first_path.empty()) {
      first_fingerprint = fingerprint;
      first_path = path;
    } else if (const auto diff = fingerprint_differences(first_fingerprint, fingerprint);
               !diff.empty() && !allow_different_machines) {
      throw ResultsError(fmt::format("{}: machine fingerprint differs from {}'s: {}; keep one machine per "
                                     "directory or pass --allow-different-machines", path, first_path, diff.front()));
    }
    LoadedRun run{{path, context_string(doc, "start_time_utc"), context_string(doc, "git_sha")},
                  benchmark_samples(doc, metric, path)};
    if (run.run.start_time.empty())
      throw ResultsError(fmt::format("{}: missing 'context.offloadbench.start_time_utc'", path));
    loaded.push_back(std::move(run));
  }
  if (loaded.empty())
    throw ResultsError(fmt::format("{}: no finished results files (*.json) in this directory", directory));
  // ISO 8601 UTC stamps of one format sort as text.
  std::stable_sort(loaded.begin(), loaded.end(),
                   [](const auto& a, const auto& b) { return a.run.start_time < b.run.start_time; });

  std::map<std::string, std::size_t> index;
  for (std::size_t r = 0; r < loaded.size(); ++r) {
    h.runs.push_back(loaded[r].run);
    for (const auto& s : loaded[r].samples) {
      if (s.values.empty()) continue;
      auto [it, inserted] = index.emplace(s.name, h.benchmarks.size());
      if (inserted) h.benchmarks.push_back({s.name, {}, {}});
      h.benchmarks[it->second].points.push_back({r, s.values.size(), median(s.values), quantile(s.values, 0.25),
                                                 quantile(s.values, 0.75),
                                                 *std::min_element(s.values.begin(), s.values.end()),
                                                 *std::max_element(s.values.begin(), s.values.end())});
    }
  }
  const bool rate = higher_is_better(metric);
  for (auto& b : h.benchmarks) {
    std::vector<double> medians;
    for (const auto& p : b.points) medians.push_back(p.median);
    for (const auto& step : detect_change_points(medians, options)) {
      ChangePoint cp;
      cp.point = step.index;
      cp.git_sha = h.runs[b.points[step.index].run].git_sha;
      cp.previous_git_sha = h.runs[b.points[step.index - 1].run].git_sha;
      cp.start_time = h.runs[b.points[step.index].run].start_time;
      cp.before = step.before;
      cp.after = step.after;
      cp.change = cp.after / cp.before - 1;
      cp.slower = rate ? cp.change < 0 : cp.change > 0;
      b.change_points.push_back(cp);
    }
  }
  return h;
}

void print_history(std::FILE* out, const History& h, bool every_benchmark) {
  fmt::print(out, "history of {}: {} runs from {} to {}, {} benchmarks, metric {}\n", h.directory, h.runs.size(),
             h.runs.front().start_time, h.runs.back().start_time, h.benchmarks.size(), h.metric);
  for (const auto& why : h.ignored) fmt::print(out, "  ignored {}\n", why);
  int steps = 0;
  for (const auto& b : h.benchmarks) {
    steps += static_cast<int>(b.change_points.size());
    if (b.change_points.empty() && !every_benchmark) continue;
    fmt::print(out, "{} ({} runs)\n", b.name, b.points.size());
    if (b.change_points.empty()) fmt::print(out, "  no change point\n");
    for (const auto& cp : b.change_points)
      fmt::print(out, "  {:<6} {:+.1f}% at {} (git {}, after {}): median {} -> {}\n",
                 cp.slower ? "SLOWER" : "FASTER", 100 * cp.change, cp.start_time, cp.git_sha,
                 cp.previous_git_sha, format_metric(cp.before, h.metric), format_metric(cp.after, h.metric));
  }
  fmt::print(out, "history: {} change point(s) (min magnitude {:.0f}%, persisting {} runs)\n", steps,
             100 * h.options.min_magnitude, h.options.min_segment);
}

nlohmann::json to_json(const History& h) {
  nlohmann::json runs = nlohmann::json::array(), benchmarks = nlohmann::json::array();
  for (const auto& r : h.runs) runs.push_back({{"path", r.path}, {"start_time_utc", r.start_time}, {"git_sha", r.git_sha}});
  for (const auto& b : h.benchmarks) {
    nlohmann::json points = nlohmann::json::array(), steps = nlohmann::json::array();
    for (const auto& p : b.points)
      points.push_back({{"run", p.run}, {"repetitions", p.repetitions}, {"median", p.median}, {"q1", p.q1},
                        {"q3", p.q3}, {"min", p.min}, {"max", p.max}});
    for (const auto& cp : b.change_points)
      steps.push_back({{"point", cp.point}, {"git_sha", cp.git_sha}, {"previous_git_sha", cp.previous_git_sha},
                       {"start_time_utc", cp.start_time}, {"before", cp.before}, {"after", cp.after},
                       {"change", cp.change}, {"verdict", cp.slower ? "SLOWER" : "FASTER"}});
    benchmarks.push_back({{"name", b.name}, {"points", points}, {"change_points", steps}});
  }
  return without_non_finite({{"directory", h.directory},
                             {"metric", h.metric},
                             {"higher_is_better", higher_is_better(h.metric)},
                             {"min_magnitude", h.options.min_magnitude},
                             {"min_segment", h.options.min_segment},
                             {"runs", runs},
                             {"ignored", h.ignored},
                             {"benchmarks", benchmarks}});
}

}  // namespace offloadbench
