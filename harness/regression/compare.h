// `offloadbench compare BASE NEW`: per benchmark, did NEW get slower, faster, stay the same, or can
// we not tell, from two existing results files? Per benchmark, one-sided tests on log times of
// "slower (faster) by more than δ", Holm-corrected across the benchmarks, relative to the shift
// every benchmark of the pair shares, with a verdict only where a second, plainer sign agrees.
// Which test:
// - both files' repetitions each ran in a process of their own (`run --processes N`): the floors'
//   test (floor_significance.h): the fastest process of each file, with an uncertainty from each
//   file's faster half, scaled by how far the pair's benchmarks moved apart; the verdict also needs
//   the floor to have passed the other file's slowest processes (floor_gate_rank).
// - otherwise (repetitions from one process): Welch's t on the log times; the repetitions cannot
// see
//   the drift of the machine between the two runs, so compare learns it from the file pair as a
//   whole (how much more than their own spread the benchmarks moved); the verdict also needs the
//   medians and the interquartile ranges to agree.
// `ab` measures side by side and controls drift itself.
#pragma once
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/regression/floor_significance.h"

namespace offloadbench {

enum class Verdict { slower, faster, same, inconclusive };
const char* verdict_name(Verdict verdict);  // "SLOWER", "FASTER", "SAME", "INCONCLUSIVE"

struct CompareOptions {
  // The row field compared. real_time (per iteration, normalised to seconds) covers every benchmark
  // and, since throughput = work / time, tells the same story as bytes_per_second for a fixed size.
  std::string metric = "real_time";
  // Smallest change that counts, as a fraction of the time (the same δ as `ab`): CPU rows, GPU
  // rows.
  double delta_cpu = 0.02, delta_gpu = 0.01;
  double alpha = 0.05;      // family-wise error rate over the benchmarks (Holm)
  int min_repetitions = 3;  // fewer per-repetition samples on either side → INCONCLUSIVE
  bool allow_different_machines = false;
  // compare --history DIR: per benchmark, how far its floor moved between earlier runs of the
  // machine (floor_history.h), added to the floors' test's uncertainty; and how many runs that came
  // from.
  std::map<std::string, double> floor_history;
  std::size_t floor_history_runs = 0;
};

// Times are better lower; rates (fields ending in "_per_second") are better higher.
bool higher_is_better(const std::string& metric);

// What the tests work on: log time, or −log rate, so that larger is slower and δ is a ratio either
// way.
double log_slowness(double value, bool rate);

// How many processes a results file's repetitions came from (context.offloadbench.processes; 1 when
// absent).
int processes_of(const nlohmann::json& doc);

// One benchmark's per-repetition values of the metric in one file.
struct BenchmarkSamples {
  std::string name;
  std::vector<double> values;  // metric per repetition; times in seconds
  bool skipped = false;
  std::string skip_reason;
  nlohmann::json
      parameters;  // the row's parameter fields (bytes, op, device, ...), to check a name match
  std::size_t throttled = 0;  // GPU repetitions left out: measured while the SM clock was throttled
  bool clocks_unlocked =
      false;  // a GPU row said its clocks were not locked (more spread to expect)
};

// Every benchmark of a results file with its samples, in file order. Aggregate rows are ignored and
// so are rows with an error (their time means nothing) and rows flagged `clock_throttled` (NVBench
// drops such samples too: they time the cooling, not the code). Throws ResultsError naming `origin`
// when a measured row lacks a finite numeric metric.
std::vector<BenchmarkSamples> benchmark_samples(const nlohmann::json& doc,
                                                const std::string& metric,
                                                const std::string& origin);

struct BenchmarkComparison {
  std::string name;
  Verdict verdict = Verdict::inconclusive;
  std::string reason;  // why, in words (always set)
  std::size_t base_count = 0, new_count = 0;
  double base_median = 0, new_median = 0;
  double change = 0;  // new_median / base_median − 1 of the metric itself
  double slowdown =
      1;             // time-equivalent ratio, > 1 is slower: new/base for times, base/new for rates
  double delta = 0;  // the δ that applied (CPU or GPU row)
  // Log slowness (log time, or −log rate): the test's statistic of NEW − BASE (Welch's, or the
  // floor shift with its scaled uncertainty and tail weight) and the quartiles and floors the gates
  // read.
  double log_shift = 0, standard_error = 0, df = 0;
  Floor base_floor, new_floor;
  bool single_thread =
      false;  // a CPU row timed on one thread (cpu_threads 1): the floor test's steady kind
  double history_spread = -1;  // the floor spread --history gave this row (log units); -1: none
  double base_q1 = 0, base_q3 = 0, new_q1 = 0, new_q3 = 0, base_log_median = 0, new_log_median = 0;
  double p_slower = 1, p_faster = 1;  // one-sided tests of "slower / faster by more than δ"
  double p_value = 1;   // 2·min(p_slower, p_faster), Holm-adjusted over the comparison
  bool inside = false;  // both one-sided tests say |change| < δ (at alpha): SAME allowed
  std::string test;     // "welch", "floor", or "" when none was run
  // The smallest slowdown (a fraction: 0.07 is 7%) this rule would have flagged at this row's noise
  // with these files' repetitions and processes (detectable.h); +infinity when the pair can support
  // no verdict at all, NaN when no test was run.
  double detectable = std::numeric_limits<double>::quiet_NaN();
  std::string
      family;  // the row's `family` field ("" when absent): shared shifts are named per family
};

// What the file pair as a whole says about the noise between its two runs (compare_results; a lone
// benchmark has none of it). Each benchmark's log shift is modelled as its change + the common
// shift
// + a between-runs term of standard deviation `between` + its repetitions' sampling error:
// - `common_shift`: the median log shift of all tested benchmarks. The machine's state (load,
// clocks)
//   moves them together; each change is judged relative to it.
// - `between`: the drift between the two runs that a benchmark's own repetitions cannot see (they
// all
//   come from one process at one time). It is the τ at which the median over the benchmarks of
//   |shift − common| / √(se² + τ²), over its null median, is 1 — a random-effects variance (as
//   Paule–Mandel's, with a median so that a few real changes cannot inflate it). Every benchmark's
//   standard error becomes √(se² + τ²). Between unchanged runs steady benchmarks shift by 2–4 times
//   their standard errors and noisy ones by about 1: the drift is an added term, not a scaled one.
// With the floors' test (files of several processes each), `floors` is set, common_shift is the
// median floor shift, `between` is 0 and each kind of row has its scale φ (floor_scale; one φ for
// both when either kind has fewer than kMinFloorRows benchmarks).
struct RunPairNoise {
  double common_shift = 0;
  double between = 0;
  std::size_t benchmarks = 0;  // tested benchmarks it was learned from (none: the defaults above)
  bool floors = false;
  double floor_scale_single_thread = 0, floor_scale_other = 0;
};
constexpr std::size_t kMinFloorRows = 20;
// Fewer tested benchmarks than this and the pair's noise is not estimated (common shift 0, between
// 0).
constexpr std::size_t kMinBenchmarksForRunPairNoise = 10;

// The verdict for one benchmark as if it were the only one (compare_results applies the run pair's
// noise and Holm across all):
//   fewer than min_repetitions on a side                         → INCONCLUSIVE
//   one-sided Welch test against +δ (−δ) rejects at alpha, and the median moved by more than δ and
//   the interquartile ranges do not overlap, the same way, and (in a file) no more benchmarks than
//   the model allows lie as far out the other way                 → SLOWER (FASTER), by the
//   metric's orientation both one-sided tests say the change is inside ±δ             → SAME
//   otherwise                                                     → INCONCLUSIVE (the spread cannot
//   support a verdict)
BenchmarkComparison compare_samples(const std::string& name, const std::vector<double>& base,
                                    const std::vector<double>& candidate,
                                    const CompareOptions& options, bool gpu_row = false);

// Several benchmarks of one family that moved the same way past δ (relative to the pair's common
// shift) in one file pair: one finding, since a cause they share moved them — code they share, or
// the machine (a file whose processes all sat high for one family) — and only `ab` can tell which.
struct SharedShift {
  std::string family;
  bool slower = false;
  std::vector<std::string> names;  // the rows, slowest first
  double low = 0, high = 0;        // their range of change, as fractions (+0.20 is 20% slower)
};
constexpr std::size_t kMinSharedShiftRows = 3;
// Families with kMinSharedShiftRows or more rows that moved one way past δ, largest group first.
std::vector<SharedShift> shared_shifts(const std::vector<BenchmarkComparison>& rows,
                                       double common_shift);

struct Comparison {
  CompareOptions options;
  std::vector<BenchmarkComparison> rows;  // slowest first
  std::vector<std::string> only_in_base, only_in_new, skipped_in_both;
  int slower = 0, faster = 0, same = 0, inconclusive = 0;
  RunPairNoise noise;
  // Benchmarks far out on each side (one-sided p < 0.001 against ±δ) and how many the model allows;
  // more on the faster side withholds every SLOWER (and vice versa): see compare.cpp, TailWitness.
  int tails_slower = 0, tails_faster = 0, tail_allowance = 0;
  double geomean_slowdown =
      1;  // geometric mean of `slowdown` over rows with both medians; > 1 slower
  // How many processes each file's repetitions came from (context.offloadbench.processes; 1 when
  // absent): with one, the change between runs that no repetition shows is estimated, not measured.
  int base_processes = 1, new_processes = 1;
  // Set when nearly everything moved one way by a lot: more likely the machine's state (load,
  // clocks, other tenants) than the code. The verdicts stand; the note says what to suspect.
  std::string machine_note;
  std::vector<SharedShift> shared;  // families that moved together (shared_shifts)
};

// Fields of context.machine_fingerprint that differ, each as "field ('base' vs 'new')".
std::vector<std::string> fingerprint_differences(const nlohmann::json& base,
                                                 const nlohmann::json& candidate);

// Loads a results file for comparison: load_results plus at least one benchmark and a machine
// fingerprint. Throws ResultsError naming the file and the problem.
nlohmann::json load_for_comparison(const std::string& path);

// Compares two loaded results files. Throws ResultsError when their fingerprints differ (naming the
// fields) unless options.allow_different_machines.
Comparison compare_results(const nlohmann::json& base, const nlohmann::json& candidate,
                           const CompareOptions& options, const std::string& base_origin,
                           const std::string& new_origin);

std::vector<std::string> slower_names(const Comparison& comparison);

// A value of `metric` for people: times in ns/us/ms/s (from seconds), rates in M/s or G/s.
std::string format_metric(double value, const std::string& metric);
std::string format_percent(double fraction);  // 0.052 → "+5.2%"
std::string format_p(double p_value);         // 4 decimals, or scientific below 1e-4

// compare_report.cpp: the terminal text, the Markdown table (slowest first) and JSON. The text
// opens with the verdict and what to do next, its lines under kTextColumns; `verbose` adds the
// method (the test, δ, Holm, the pair's noise) and each row's p-value, repetitions and reason.
constexpr std::size_t kTextColumns = 100;
void print_comparison(std::FILE* out, const Comparison& comparison, bool verbose = false);
std::string comparison_markdown(const Comparison& comparison, const std::string& base_label,
                                const std::string& new_label);
nlohmann::json to_json(const Comparison& comparison);

}  // namespace offloadbench
