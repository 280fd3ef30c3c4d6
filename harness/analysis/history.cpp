#include "harness/analysis/history.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>

#include <fmt/format.h>

#include "harness/analysis/compare.h"
#include "harness/results/results.h"
#include "harness/analysis/stats.h"

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

// The strongest split of one segment by the energy statistic of E-divisive means (exponent 1):
// for X = [0, τ) and Y = [τ, κ), Q(τ, κ) = nx·ny/(nx+ny) · (2·mean|X−Y| − mean|X−X'| − mean|Y−Y'|),
// maximised over τ and κ (κ lets a bump in the middle stand out), with at least m values in X and Y.
// Pairwise distance sums come from a 2-D prefix sum, so the whole search is O(n²).
struct BestSplit {
  std::size_t at = 0;  // τ: index within the segment of the first value after the change
  double q = -1;
};

BestSplit best_split(const std::vector<double>& x, std::size_t m) {
  const std::size_t n = x.size();
  BestSplit best;
  if (m == 0 || n < 2 * m) return best;
  // sums[a][b] = Σ_{i<a, j<b} |xᵢ − xⱼ|
  std::vector<std::vector<double>> sums(n + 1, std::vector<double>(n + 1, 0.0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      sums[i + 1][j + 1] = sums[i][j + 1] + sums[i + 1][j] - sums[i][j] + std::fabs(x[i] - x[j]);
  const auto block = [&](std::size_t r0, std::size_t r1, std::size_t c0, std::size_t c1) {
    return sums[r1][c1] - sums[r0][c1] - sums[r1][c0] + sums[r0][c0];
  };
  for (std::size_t tau = m; tau + m <= n; ++tau) {
    const double nx = static_cast<double>(tau);
    const double within_x = block(0, tau, 0, tau) / (nx * (nx - 1));  // mean over ordered pairs
    for (std::size_t kappa = tau + m; kappa <= n; ++kappa) {
      const double ny = static_cast<double>(kappa - tau);
      const double cross = block(0, tau, tau, kappa) / (nx * ny);
      const double within_y = block(tau, kappa, tau, kappa) / (ny * (ny - 1));
      const double q = nx * ny / (nx + ny) * (2 * cross - within_x - within_y);
      if (q > best.q) best = {tau, q};
    }
  }
  return best;
}

// The share of shuffles of the segment whose best split is at least as strong (with the observed one).
double permutation_p_value(std::vector<double> segment, double observed_q, std::size_t m, const ChangePointOptions& o,
                           std::mt19937_64& rng) {
  int as_strong = 0;
  for (int i = 0; i < o.permutations; ++i) {
    std::shuffle(segment.begin(), segment.end(), rng);
    as_strong += best_split(segment, m).q >= observed_q - 1e-12 * std::fabs(observed_q);
  }
  return (as_strong + 1.0) / (o.permutations + 1.0);
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
  std::vector<double> logs;
  for (double v : series) logs.push_back(std::log(std::max(v, 1e-300)));
  std::mt19937_64 rng(0x0ffb0ad);  // fixed: the same history gives the same answer
  std::vector<std::size_t> cuts = {0, series.size()};  // segment boundaries, sorted
  // Bisection: the strongest split over all current segments, kept while the permutation test passes.
  while (true) {
    BestSplit best;
    std::size_t segment_begin = 0, segment_end = 0;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
      const std::vector<double> segment(logs.begin() + static_cast<std::ptrdiff_t>(cuts[i]),
                                        logs.begin() + static_cast<std::ptrdiff_t>(cuts[i + 1]));
      const auto split = best_split(segment, m);
      if (split.q > best.q) {
        best = split;
        segment_begin = cuts[i];
        segment_end = cuts[i + 1];
      }
    }
    if (best.q <= 0) break;
    const std::vector<double> segment(logs.begin() + static_cast<std::ptrdiff_t>(segment_begin),
                                      logs.begin() + static_cast<std::ptrdiff_t>(segment_end));
    if (permutation_p_value(segment, best.q, m, options, rng) >= options.significance) break;
    cuts.insert(std::upper_bound(cuts.begin(), cuts.end(), segment_begin + best.at), segment_begin + best.at);
  }
  // Report the cuts whose levels differ by enough and by more than the noise. A cut that does not is
  // dropped, weakest first, and its neighbours' levels are read again over the merged segment: a slow
  // creep cut into small pieces adds up to one reportable step.
  const double sigma = successive_difference_sigma(series);
  std::vector<Step> found;
  while (true) {
    found.clear();
    std::size_t weakest = 0;
    double weakest_jump = -1;
    for (std::size_t i = 1; i + 1 < cuts.size(); ++i) {
      const std::size_t lo = cuts[i - 1], k = cuts[i], hi = cuts[i + 1];
      const Step step{k, median_of_range(series, lo, k), median_of_range(series, k, hi)};
      const double jump = std::fabs(step.after - step.before);
      // Standard error of a difference of two medians of normal samples: 1.2533·σ·√(1/n₁ + 1/n₂).
      const double standard_error =
          1.2533 * sigma * std::sqrt(1.0 / static_cast<double>(k - lo) + 1.0 / static_cast<double>(hi - k));
      // Persistence: at least m runs on each side sit nearer their own level than the other one (a
      // cut placed one run early, or a new level seen on fewer than m runs, is not a step yet).
      std::size_t near_before = 0, near_after = 0;
      for (std::size_t r = lo; r < hi; ++r) {
        const bool nearer_after = std::fabs(series[r] - step.after) < std::fabs(series[r] - step.before);
        near_before += r < k && !nearer_after;
        near_after += r >= k && nearer_after;
      }
      if (step.before > 0 && jump / step.before >= options.min_magnitude - 1e-12 &&
          jump > options.noise_factor * standard_error && near_before >= m && near_after >= m) {
        found.push_back(step);
      } else if (weakest_jump < 0 || jump < weakest_jump) {
        weakest = i;
        weakest_jump = jump;
      }
    }
    if (weakest_jump < 0) break;
    cuts.erase(cuts.begin() + static_cast<std::ptrdiff_t>(weakest));
  }
  return found;
}

std::vector<std::string> history_files(const std::string& directory) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(directory, error)) throw ResultsError(fmt::format("{}: not a directory", directory));
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(directory, error))
    if (entry.is_regular_file() && entry.path().extension() == ".json") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

History load_history(const std::string& directory, const std::string& metric, bool allow_different_machines,
                     const ChangePointOptions& options) {
  const auto paths = history_files(directory);
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
