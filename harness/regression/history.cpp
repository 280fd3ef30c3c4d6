#include "harness/regression/history.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <system_error>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "harness/analysis/stats.h"
#include "harness/regression/compare.h"
#include "harness/results/results.h"

namespace offloadbench {

namespace {

double median_of_range(const std::vector<double>& x, std::size_t lo, std::size_t hi) {
  return median(std::vector<double>(x.begin() + static_cast<std::ptrdiff_t>(lo),
                                    x.begin() + static_cast<std::ptrdiff_t>(hi)));
}

// Run-to-run noise of a series: median |x[i+1] − x[i]| / 0.9539 estimates the standard deviation of
// independent normal noise (the median of |N(0, 2σ²)| is 0.9539σ), and a step changes one
// difference only.
double successive_difference_sigma(const std::vector<double>& x) {
  std::vector<double> differences;
  for (std::size_t i = 1; i < x.size(); ++i) differences.push_back(std::fabs(x[i] - x[i - 1]));
  return differences.empty() ? 0.0 : median(differences) / 0.9539;
}

// The strongest split of one segment by the energy statistic of E-divisive means (exponent 1):
// for X = [0, τ) and Y = [τ, κ), Q(τ, κ) = nx·ny/(nx+ny) · (2·mean|X−Y| − mean|X−X'| − mean|Y−Y'|),
// maximised over τ and κ (κ lets a bump in the middle stand out), with at least m values in X and
// Y. Pairwise distance sums come from the 2-D prefix sum S[a][b] = Σ_{i<a, j<b} |xᵢ − xⱼ|, so one
// search is O(n²) time. S is symmetric, and every Q(·, κ) reads only row κ and the diagonal, so the
// search walks κ upwards keeping a few rows: O(n) memory instead of n² doubles (200 MB at n = 5000,
// per shuffle). Each S cell and each Q is computed by the same floating-point expression, in the
// same order of operations, as the full-matrix form (S[0][·] = 0 terms dropped: x − 0 and x + 0 are
// exact), so the values, and hence the change points, are bit-identical to it.
struct BestSplit {
  std::size_t at = 0;  // τ: index within the segment of the first value after the change
  double q = -1;
};

struct SplitWorkspace {  // reused across searches: no allocation per shuffle
  std::vector<double> rows, diagonal, within_x, within_x_scaled, inverse_pairs;
};

// Q(τ, κ) as the full-matrix search computed it, from row κ of S and the diagonal.
inline double split_q(const double* row, const SplitWorkspace& w, std::size_t tau,
                      std::size_t kappa) {
  const double nx = static_cast<double>(tau), ny = static_cast<double>(kappa - tau);
  const double cross = (row[tau] - w.diagonal[tau]) / (nx * ny);
  const double within_y = (row[kappa] - row[tau] - row[tau] + w.diagonal[tau]) / (ny * (ny - 1));
  return nx * ny / (nx + ny) * (2 * cross - w.within_x[tau] - within_y);
}

// Walks κ = 1..n computing row κ of S, and calls on_row(κ, row) for each κ ≥ 2m (the rows that end
// a split) until it returns true. Rows are made kRows at a time, their cells interleaved: each cell
// waits on its left neighbour (three dependent additions), so one row at a time runs at the adders'
// latency; four independent chains keep them busy. Cell values do not depend on this order.
template <class OnRow>
void scan_rows(const double* x, std::size_t n, std::size_t m, SplitWorkspace& w,
               ChangePointWork* work, OnRow&& on_row) {
  if (m == 0 || n < 2 * m) return;
  if (work) ++work->searches;
  constexpr std::size_t kRows = 4;
  w.rows.assign((kRows + 1) * (n + 1), 0.0);
  w.diagonal.assign(n + 1, 0.0);
  w.within_x.assign(n + 1, 0.0);
  w.within_x_scaled.assign(n + 1, 0.0);
  double* r[kRows + 1];  // r[0]: S[κ−1]; r[i]: S[κ−1+i]
  for (std::size_t i = 0; i <= kRows; ++i) r[i] = w.rows.data() + i * (n + 1);
  for (std::size_t kappa = 1; kappa <= n; kappa += kRows) {
    const std::size_t count = std::min(kRows, n + 1 - kappa);
    for (std::size_t i = 1; i <= count; ++i) r[i][0] = 0;
    if (count == kRows) {
      for (std::size_t j = 0; j + 1 < kappa;
           ++j)  // columns every row of the block has from its upper row
        for (std::size_t i = 1; i <= kRows; ++i)
          r[i][j + 1] =
              r[i - 1][j + 1] + r[i][j] - r[i - 1][j] + std::fabs(x[kappa + i - 2] - x[j]);
    } else {
      for (std::size_t i = 1; i <= count; ++i)
        for (std::size_t j = 0; j + 1 < kappa; ++j)
          r[i][j + 1] =
              r[i - 1][j + 1] + r[i][j] - r[i - 1][j] + std::fabs(x[kappa + i - 2] - x[j]);
    }
    for (std::size_t i = 1; i <= count; ++i) {  // the rest of row ρ = κ−1+i: S[ρ−1][ρ] is S[ρ][ρ−1]
      const std::size_t rho = kappa - 1 + i;
      for (std::size_t j = kappa - 1; j < rho; ++j) {
        const double up = j + 1 < rho ? r[i - 1][j + 1] : r[i][j];
        r[i][j + 1] = up + r[i][j] - r[i - 1][j] + std::fabs(x[rho - 1] - x[j]);
      }
      w.diagonal[rho] = r[i][rho];
      const double nk = static_cast<double>(rho);
      w.within_x[rho] = r[i][rho] / (nk * (nk - 1));  // mean over ordered pairs
      w.within_x_scaled[rho] = r[i][rho] / (nk - 1);  // τ · within_x, for reaches' quick bound
    }
    for (std::size_t i = 1; i <= count; ++i) {
      const std::size_t rho = kappa - 1 + i;
      if (rho < 2 * m) continue;
      if (work) work->splits += rho - 2 * m + 1;
      if (on_row(rho, static_cast<const double*>(r[i]))) return;
    }
    std::swap(r[0], r[count]);
  }
}

// The maximum, and the first (τ, κ) in τ-major order that reaches it (the order the search used to
// scan in, so ties resolve as before). q stays −1 when no split beats −1.
BestSplit best_split(const double* x, std::size_t n, std::size_t m, SplitWorkspace& w,
                     ChangePointWork* work) {
  BestSplit best;
  std::size_t best_kappa = 0;
  scan_rows(x, n, m, w, work, [&](std::size_t kappa, const double* row) {
    for (std::size_t tau = m; tau + m <= kappa; ++tau) {
      const double q = split_q(row, w, tau, kappa);
      if (q > best.q ||
          (q == best.q && best_kappa != 0 && tau < best.at)) {  // same τ: the earlier κ came first
        best = {tau, q};
        best_kappa = kappa;
      }
    }
    return false;
  });
  return best;
}

// Whether any split reaches `threshold`. Most splits of a shuffle are far below it, so each is
// first bounded without divisions: κ·Q = 2·cross_sum − ny·τ·within_x − τ·within_y_sum/(ny−1), from
// the same S values; its rounding differs from split_q's by ~1e-15 of the terms' sizes, so a split
// clearly below (by 1e-9 of them) is below, and any other is decided by split_q itself (NaN
// included).
bool reaches(const double* x, std::size_t n, std::size_t m, double threshold, SplitWorkspace& w,
             ChangePointWork* work) {
  // inverse_pairs[n − ny] = 1/(ny − 1): ascending in τ for a fixed κ, so blocks of τ read it in
  // order.
  w.inverse_pairs.resize(n + 1);
  for (std::size_t ny = 1; ny <= n; ++ny)
    w.inverse_pairs[n - ny] = 1.0 / (static_cast<double>(ny) - 1);
  bool reached = false;
  scan_rows(x, n, m, w, work, [&](std::size_t kappa, const double* row) {
    const double scaled_threshold = static_cast<double>(kappa) * threshold;
    const double limit = scaled_threshold - 1e-9 * std::fabs(scaled_threshold);
    const double total = row[kappa], kd = static_cast<double>(kappa);
    const double* diagonal = w.diagonal.data();
    const double* scaled = w.within_x_scaled.data();
    const double* inverse = w.inverse_pairs.data() + (n - kappa);
    // 0 when the split is certainly below the threshold, else 1 (NaN included).
    const auto maybe = [&](std::size_t tau) -> int {
      const double nx = static_cast<double>(tau), ny = kd - nx;
      const double a = 2 * (row[tau] - diagonal[tau]), b = ny * scaled[tau];
      const double c = nx * (total - row[tau] - row[tau] + diagonal[tau]) * inverse[tau];
      return !(a - b - c + 1e-9 * (std::fabs(a) + std::fabs(b) + std::fabs(c)) < limit);
    };
    const auto exact = [&](std::size_t tau) { return split_q(row, w, tau, kappa) >= threshold; };
    constexpr std::size_t kBlock = 8;  // one well-predicted branch per eight splits, not per split
    std::size_t tau = m;
    for (; tau + kBlock - 1 + m <= kappa; tau += kBlock) {
      int any = 0;
      for (std::size_t k = 0; k < kBlock; ++k) any |= maybe(tau + k);
      if (!any) continue;
      for (std::size_t k = 0; k < kBlock; ++k)
        if (maybe(tau + k) && exact(tau + k)) {
          reached = true;
          return true;
        }
    }
    for (; tau + m <= kappa; ++tau)
      if (maybe(tau) && exact(tau)) {
        reached = true;
        return true;
      }
    return false;
  });
  return reached;
}

// Whether the segment, shuffled P times, gives a split at least as strong as the observed one in
// fewer than significance·(P+1) − 1 shuffles. A test that has already seen that many stops: the
// answer cannot change, and the random stream is not read again after a failed test (the search
// ends). One that can no longer fail still shuffles, so a later test reads the stream where it did.
bool passes_permutation_test(std::vector<double> segment, double observed_q, std::size_t m,
                             const ChangePointOptions& o, std::mt19937_64& rng, SplitWorkspace& w,
                             ChangePointWork* work) {
  const double threshold = observed_q - 1e-12 * std::fabs(observed_q);
  const double denominator = o.permutations + 1.0;
  const auto fails = [&](int as_strong) {
    return (as_strong + 1.0) / denominator >= o.significance;
  };
  int as_strong = 0;
  // Fewest shuffles as strong that make the test fail (p is monotone in the count).
  int enough = 0;
  while (enough <= o.permutations && !fails(enough)) ++enough;
  if (fails(as_strong)) return false;
  for (int i = 0; i < o.permutations; ++i) {
    std::shuffle(segment.begin(), segment.end(), rng);
    if (as_strong + (o.permutations - i) < enough) continue;  // it passes whatever the rest show
    if (work) ++work->shuffles_searched;
    const bool reached = reaches(segment.data(), segment.size(), m, threshold, w, work);
    as_strong += reached;
    if (fails(as_strong)) return false;
  }
  return !fails(as_strong);
}

std::string context_string(const nlohmann::json& doc, const char* key) {
  const auto& ob = doc["context"]["offloadbench"];
  return ob.contains(key) && ob[key].is_string() ? ob[key].get<std::string>() : "";
}

// Why `path` cannot be opened for reading (no permission, gone since it was listed), or "" when it
// can.
std::string unreadable(const std::string& path) {
  const int fd =
      open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // O_NONBLOCK: a FIFO must not wait
  if (fd < 0) return std::strerror(errno);
  close(fd);
  return "";
}

struct LoadedRun {
  HistoryRun run;
  std::vector<BenchmarkSamples> samples;
};

// The benchmarks' searches spread over the cores: they are independent (each seeds its
// own generator), so the answers are the same for any number of threads, and a whole suite's
// history (hundreds of benchmarks) uses every core of the machine.
std::vector<std::vector<Step>> search_every_benchmark(std::vector<BenchmarkHistory>& benchmarks,
                                                      const ChangePointOptions& options) {
  std::vector<std::vector<Step>> steps(benchmarks.size());
  std::atomic<std::size_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  const auto work = [&] {
    try {
      for (std::size_t i; (i = next++) < benchmarks.size();) {
        std::vector<double> medians;
        for (const auto& p : benchmarks[i].points) medians.push_back(p.median);
        steps[i] = detect_change_points(medians, options);
        benchmarks[i].more_runs_needed = steps[i].empty() ? more_runs_needed(medians, options) : 0;
      }
    } catch (...) {  // bad_alloc: rethrown on the calling thread, not std::terminate
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = benchmarks.size();
    }
  };
  const std::size_t threads =
      std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()),
                            std::max<std::size_t>(benchmarks.size(), 1));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (
        const std::system_error&) {  // no more threads: the ones started (and this one) do the rest
      break;
    }
  }
  work();
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
  return steps;
}

}  // namespace

std::vector<Step> steps_at_cuts(const std::vector<double>& series, std::vector<std::size_t> cuts,
                                const ChangePointOptions& options) {
  const auto m = static_cast<std::size_t>(std::max(options.min_segment, 1));
  // The cuts whose levels differ by enough and by more than the noise. A cut that does not is
  // dropped, weakest first, and its neighbours' levels are read again over the merged segment: a
  // slow creep cut into small pieces adds up to one reportable step.
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
          1.2533 * sigma *
          std::sqrt(1.0 / static_cast<double>(k - lo) + 1.0 / static_cast<double>(hi - k));
      // Persistence: at least m runs on each side sit nearer their own level than the other one (a
      // cut placed one run early, or a new level seen on fewer than m runs, is not a step yet).
      std::size_t near_before = 0, near_after = 0;
      for (std::size_t r = lo; r < hi; ++r) {
        const bool nearer_after =
            std::fabs(series[r] - step.after) < std::fabs(series[r] - step.before);
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

std::vector<Step> detect_change_points(const std::vector<double>& series,
                                       const ChangePointOptions& options, ChangePointWork* work) {
  const auto m = static_cast<std::size_t>(std::max(options.min_segment, 1));
  std::vector<double> logs;
  for (double v : series) logs.push_back(std::log(std::max(v, 1e-300)));
  std::mt19937_64 rng(0x0ffb0ad);  // fixed: the same history gives the same answer
  SplitWorkspace workspace;
  const auto search = [&](std::size_t begin, std::size_t end) {
    return best_split(logs.data() + begin, end - begin, m, workspace, work);
  };
  std::vector<std::size_t> cuts = {0, series.size()};          // segment boundaries, sorted
  std::vector<BestSplit> splits = {search(0, series.size())};  // splits[i]: of [cuts[i], cuts[i+1])
  // Bisection: the strongest split over all current segments, kept while the permutation test
  // passes. A segment's best split is searched once, when the segment is made, not again every
  // round.
  while (true) {
    std::size_t strongest = 0;
    for (std::size_t i = 1; i < splits.size(); ++i)
      if (splits[i].q > splits[strongest].q) strongest = i;  // the first of equals, as before
    const BestSplit best = splits[strongest];
    if (best.q <= 0) break;
    const std::size_t segment_begin = cuts[strongest], segment_end = cuts[strongest + 1];
    const std::vector<double> segment(logs.begin() + static_cast<std::ptrdiff_t>(segment_begin),
                                      logs.begin() + static_cast<std::ptrdiff_t>(segment_end));
    if (!passes_permutation_test(segment, best.q, m, options, rng, workspace, work)) break;
    const std::size_t cut = segment_begin + best.at;
    cuts.insert(cuts.begin() + static_cast<std::ptrdiff_t>(strongest) + 1, cut);
    splits[strongest] = search(segment_begin, cut);
    splits.insert(splits.begin() + static_cast<std::ptrdiff_t>(strongest) + 1,
                  search(cut, segment_end));
  }
  return steps_at_cuts(series, std::move(cuts), options);
}

int more_runs_needed(const std::vector<double>& series, const ChangePointOptions& options) {
  std::vector<double> positive;
  for (double v : series)
    if (v > 0 && std::isfinite(v)) positive.push_back(v);
  const double level = positive.empty() ? 1.0 : median(positive);
  // The noise as the search itself reads it (successive differences, relative to the level).
  const double sigma = positive.size() < 2 ? 0.0 : successive_difference_sigma(positive) / level;
  std::mt19937_64 rng(0x5eedULL);  // fixed: the same history gives the same answer
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> noise;
  const auto m = static_cast<std::size_t>(std::max(options.min_segment, 1));
  for (std::size_t n = std::max(series.size(), 2 * m); n <= series.size() + kMaxRunsAhead; ++n) {
    // The level after the step repeats the noise before it (and, for an odd count, adds its
    // median), so that the two medians differ by the step itself: a step of exactly the minimum,
    // not a coin flip around it.
    const std::size_t before = n / 2;
    while (noise.size() < before) noise.push_back(normal(rng));
    std::vector<double> first(noise.begin(), noise.begin() + static_cast<std::ptrdiff_t>(before));
    std::vector<double> trial;
    for (double z : first) trial.push_back(level * std::exp(sigma * z));
    for (double z : first)
      trial.push_back(level * (1.0 + options.min_magnitude) * (1 + 1e-9) * std::exp(sigma * z));
    if (n - before > before)
      trial.push_back(level * (1.0 + options.min_magnitude) * (1 + 1e-9) *
                      std::exp(sigma * median(first)));
    if (!detect_change_points(trial, options).empty()) return static_cast<int>(n - series.size());
  }
  return -1;
}

std::vector<std::string> history_files(const std::string& directory,
                                       std::vector<std::string>* problems) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(directory, error))
    throw ResultsError(fmt::format("{}: not a directory", directory));
  fs::directory_iterator it(directory, error);
  std::vector<std::string> paths, unusable;
  // Every call that can fail takes an error_code: one bad entry must not end the listing.
  for (const fs::directory_iterator end; !error && it != end; it.increment(error)) {
    const auto& path = it->path();
    if (path.extension() != ".json") continue;
    std::error_code status_error;
    const auto status =
        it->status(status_error);  // follows links: a loop or a dangling one fails here
    if (status_error)
      unusable.push_back(fmt::format("{}: cannot read: {}", path.string(), status_error.message()));
    else if (fs::is_regular_file(status))
      paths.push_back(path.string());
  }
  if (error)
    throw ResultsError(
        fmt::format("{}: cannot list this directory: {}", directory, error.message()));
  std::sort(paths.begin(), paths.end());
  std::sort(unusable.begin(), unusable.end());
  if (problems) problems->insert(problems->end(), unusable.begin(), unusable.end());
  return paths;
}

History load_history(const std::string& directory, const std::string& metric,
                     bool allow_different_machines, const ChangePointOptions& options) {
  History h;
  const auto paths = history_files(directory, &h.ignored);
  h.directory = directory;
  h.metric = metric;
  h.options = options;
  std::vector<LoadedRun> loaded;
  nlohmann::json first_fingerprint;
  std::string first_path;
  for (const auto& path : paths) {
    if (const auto why = unreadable(path);
        !why.empty()) {  // no permission: say so, read the others
      h.ignored.push_back(fmt::format("{}: cannot read: {}", path, why));
      continue;
    }
    const auto doc = load_for_comparison(path);
    const auto& ob = doc["context"]["offloadbench"];
    if (ob.contains("incomplete") && ob["incomplete"] == true) {
      h.ignored.push_back(
          fmt::format("{}: unfinished run (context.offloadbench.incomplete)", path));
      continue;
    }
    const auto& fingerprint = doc["context"]["machine_fingerprint"];
    if (first_path.empty()) {
      first_fingerprint = fingerprint;
      first_path = path;
      const auto& context = doc["context"];
      if (context.contains("host") && context["host"].is_object() &&
          context["host"].contains("hostname") && context["host"]["hostname"].is_string())
        h.hostname = context["host"]["hostname"].get<std::string>();
    } else if (const auto diff = fingerprint_differences(first_fingerprint, fingerprint);
               !diff.empty() && !allow_different_machines) {
      throw ResultsError(
          fmt::format("{}: machine fingerprint differs from {}'s: {}; keep one machine per "
                      "directory or pass --allow-different-machines",
                      path, first_path, diff.front()));
    }
    LoadedRun run{{path, context_string(doc, "start_time_utc"), context_string(doc, "git_sha")},
                  benchmark_samples(doc, metric, path)};
    if (run.run.start_time.empty())
      throw ResultsError(fmt::format("{}: missing 'context.offloadbench.start_time_utc'", path));
    loaded.push_back(std::move(run));
  }
  h.machine_fingerprint = first_fingerprint;
  if (loaded.empty()) {  // what was left out, when anything was, is the likelier story
    std::string left_out;
    if (!h.ignored.empty())
      left_out = fmt::format(
          " (left out: {}{})", h.ignored.front(),
          h.ignored.size() > 1 ? fmt::format("; and {} more", h.ignored.size() - 1) : "");
    throw ResultsError(fmt::format("{}: no finished results files (*.json) in this directory{}",
                                   directory, left_out));
  }
  // ISO 8601 UTC stamps of one format sort as text.
  std::stable_sort(loaded.begin(), loaded.end(), [](const auto& a, const auto& b) {
    return a.run.start_time < b.run.start_time;
  });

  std::map<std::string, std::size_t> index;
  for (std::size_t r = 0; r < loaded.size(); ++r) {
    h.runs.push_back(loaded[r].run);
    for (const auto& s : loaded[r].samples) {
      if (s.values.empty()) continue;
      auto [it, inserted] = index.emplace(s.name, h.benchmarks.size());
      if (inserted) h.benchmarks.push_back({s.name, {}, {}});
      h.benchmarks[it->second].points.push_back(
          {r, s.values.size(), median(s.values), quantile(s.values, 0.25), quantile(s.values, 0.75),
           *std::min_element(s.values.begin(), s.values.end()),
           *std::max_element(s.values.begin(), s.values.end())});
    }
  }
  const bool rate = higher_is_better(metric);
  const auto steps = search_every_benchmark(h.benchmarks, options);
  for (std::size_t i = 0; i < h.benchmarks.size(); ++i) {
    auto& b = h.benchmarks[i];
    for (const auto& step : steps[i]) {
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

namespace {

// "a 5% step needs 1 more run before it can be found", or that its noise hides one.
std::string blind_text(int more_runs, double min_magnitude) {
  if (more_runs < 0)
    return fmt::format("its run-to-run noise hides a {:.0f}% step even {} runs from now",
                       100 * min_magnitude, kMaxRunsAhead);
  return fmt::format("a {:.0f}% step needs {} more run{} before it can be found",
                     100 * min_magnitude, more_runs, more_runs == 1 ? "" : "s");
}

}  // namespace

std::string unseen_steps_note(const History& h) {
  int blind = 0, hidden = 0, most = 0;
  for (const auto& b : h.benchmarks) {
    blind += b.more_runs_needed != 0;
    hidden += b.more_runs_needed < 0;
    most = std::max(most, b.more_runs_needed);
  }
  if (blind == 0) return "";
  return fmt::format("{} of {} benchmarks could not have shown a {:.0f}% step yet{}{}", blind,
                     h.benchmarks.size(), 100 * h.options.min_magnitude,
                     blind > hidden ? fmt::format(" ({} need up to {} more run{})", blind - hidden,
                                                  most, most == 1 ? "" : "s")
                                    : "",
                     hidden > 0 ? fmt::format(" ({} hide it in their noise)", hidden) : "");
}

void print_history(std::FILE* out, const History& h, bool every_benchmark) {
  fmt::print(out, "history of {}: {} runs from {} to {}, {} benchmarks, metric {}\n", h.directory,
             h.runs.size(), h.runs.front().start_time, h.runs.back().start_time,
             h.benchmarks.size(), h.metric);
  for (const auto& why : h.ignored) fmt::print(out, "  ignored {}\n", why);
  int steps = 0, blind = 0;
  std::vector<const BenchmarkHistory*> unlisted_blind;
  for (const auto& b : h.benchmarks) {
    steps += static_cast<int>(b.change_points.size());
    blind += b.more_runs_needed != 0;
    if (b.change_points.empty() && !every_benchmark) {
      if (b.more_runs_needed != 0) unlisted_blind.push_back(&b);
      continue;
    }
    fmt::print(out, "{} ({} runs)\n", b.name, b.points.size());
    if (b.change_points.empty())
      fmt::print(out, "  no change point{}\n",
                 b.more_runs_needed == 0
                     ? ""
                     : "; " + blind_text(b.more_runs_needed, h.options.min_magnitude));
    for (const auto& cp : b.change_points)
      fmt::print(out, "  {:<6} {:+.1f}% at {} (git {}, after {}): median {} -> {}\n",
                 cp.slower ? "SLOWER" : "FASTER", 100 * cp.change, cp.start_time, cp.git_sha,
                 cp.previous_git_sha, format_metric(cp.before, h.metric),
                 format_metric(cp.after, h.metric));
  }
  // Benchmarks that cannot show a step yet are named even without --all: their "no change point" is
  // no news.
  for (const auto* b : unlisted_blind)
    fmt::print(out, "{} ({} runs): {}\n", b->name, b->points.size(),
               blind_text(b->more_runs_needed, h.options.min_magnitude));
  const std::string blind_note = blind > 0 ? "; " + unseen_steps_note(h) : "";
  const std::string found = steps == 0 && blind == static_cast<int>(h.benchmarks.size())
                                ? "no change point could be found yet"
                                : fmt::format("{} change point(s)", steps);
  fmt::print(out, "history: {} (min magnitude {:.0f}%, persisting {} runs){}\n", found,
             100 * h.options.min_magnitude, h.options.min_segment, blind_note);
}

nlohmann::json to_json(const History& h) {
  nlohmann::json runs = nlohmann::json::array(), benchmarks = nlohmann::json::array();
  for (const auto& r : h.runs)
    runs.push_back({{"path", r.path}, {"start_time_utc", r.start_time}, {"git_sha", r.git_sha}});
  for (const auto& b : h.benchmarks) {
    nlohmann::json points = nlohmann::json::array(), steps = nlohmann::json::array();
    for (const auto& p : b.points)
      points.push_back({{"run", p.run},
                        {"repetitions", p.repetitions},
                        {"median", p.median},
                        {"q1", p.q1},
                        {"q3", p.q3},
                        {"min", p.min},
                        {"max", p.max}});
    for (const auto& cp : b.change_points)
      steps.push_back({{"point", cp.point},
                       {"git_sha", cp.git_sha},
                       {"previous_git_sha", cp.previous_git_sha},
                       {"start_time_utc", cp.start_time},
                       {"before", cp.before},
                       {"after", cp.after},
                       {"change", cp.change},
                       {"verdict", cp.slower ? "SLOWER" : "FASTER"}});
    benchmarks.push_back(
        {{"name", b.name},
         {"points", points},
         {"change_points", steps},
         // before a step of min_magnitude could be found; null: its noise hides one
         {"more_runs_needed",
          b.more_runs_needed < 0 ? nlohmann::json() : nlohmann::json(b.more_runs_needed)}});
  }
  return without_non_finite({{"directory", h.directory},
                             {"metric", h.metric},
                             {"higher_is_better", higher_is_better(h.metric)},
                             {"min_magnitude", h.options.min_magnitude},
                             {"min_segment", h.options.min_segment},
                             {"hostname", h.hostname},
                             {"machine_fingerprint", h.machine_fingerprint},
                             {"runs", runs},
                             {"ignored", h.ignored},
                             {"benchmarks", benchmarks}});
}

}  // namespace offloadbench
