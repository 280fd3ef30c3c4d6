// `offloadbench compare BASE NEW`: per benchmark, did NEW get slower, faster, stay the same, or can
// we not tell? A verdict needs both a Mann–Whitney U test over the per-repetition samples (is the
// change real?) and a practical threshold on the change of the median (does it matter?).
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench {

enum class Verdict { slower, faster, same, inconclusive };
const char* verdict_name(Verdict verdict);  // "SLOWER", "FASTER", "SAME", "INCONCLUSIVE"

struct CompareOptions {
  // The row field compared. real_time (per iteration, normalised to seconds) covers every benchmark
  // and, since throughput = work / time, tells the same story as bytes_per_second for a fixed size.
  std::string metric = "real_time";
  // Smallest change of the median that counts, as a fraction (0.03 = 3%). Below 5% on purpose: a
  // true 5% slowdown has a measured median change spread around 5%, half of it below 5%.
  double threshold = 0.03;
  double alpha = 0.01;      // significance level of the two-sided U test
  int min_repetitions = 5;  // fewer per-repetition samples on either side → INCONCLUSIVE
  bool allow_different_machines = false;
};

// Times are better lower; rates (fields ending in "_per_second") are better higher.
bool higher_is_better(const std::string& metric);

// One benchmark's per-repetition values of the metric in one file.
struct BenchmarkSamples {
  std::string name;
  std::vector<double> values;  // metric per repetition; times in seconds
  bool skipped = false;
  std::string skip_reason;
  nlohmann::json parameters;  // the row's parameter fields (bytes, op, device, ...), to check a name match
};

// Every benchmark of a results file with its samples, in file order. Aggregate rows are ignored and
// so are rows with an error (their time means nothing). Throws ResultsError naming `origin` when a
// measured row lacks a finite numeric metric.
std::vector<BenchmarkSamples> benchmark_samples(const nlohmann::json& doc, const std::string& metric,
                                                const std::string& origin);

struct BenchmarkComparison {
  std::string name;
  Verdict verdict = Verdict::inconclusive;
  std::string reason;  // why, in words (always set)
  std::size_t base_count = 0, new_count = 0;
  double base_median = 0, new_median = 0;
  double change = 0;    // new_median / base_median − 1 of the metric itself
  double slowdown = 1;  // time-equivalent ratio, > 1 is slower: new/base for times, base/new for rates
  double p_value = 1;
  std::string test;  // "exact" / "asymptotic" U test, or "" when none was run
};

// The verdict for one benchmark (the rule is spelled out in docs/regression.md):
//   fewer than min_repetitions on a side           → INCONCLUSIVE
//   p < alpha and |change| ≥ threshold              → SLOWER or FASTER by the metric's orientation
//   |change| < threshold                            → SAME (a real but negligible change is still SAME)
//   |change| ≥ threshold but p ≥ alpha              → INCONCLUSIVE (large but within the noise)
BenchmarkComparison compare_samples(const std::string& name, const std::vector<double>& base,
                                    const std::vector<double>& candidate, const CompareOptions& options);

struct Comparison {
  CompareOptions options;
  std::vector<BenchmarkComparison> rows;  // slowest first
  std::vector<std::string> only_in_base, only_in_new, skipped_in_both;
  int slower = 0, faster = 0, same = 0, inconclusive = 0;
  double geomean_slowdown = 1;  // geometric mean of `slowdown` over rows with both medians; > 1 slower
  // Set when nearly everything moved one way by a lot: more likely the machine's state (load, clocks,
  // other tenants) than the code. The verdicts stand; the note says what to suspect.
  std::string machine_note;
};

// Fields of context.machine_fingerprint that differ, each as "field ('base' vs 'new')".
std::vector<std::string> fingerprint_differences(const nlohmann::json& base, const nlohmann::json& candidate);

// Loads a results file for comparison: load_results plus at least one benchmark and a machine
// fingerprint. Throws ResultsError naming the file and the problem.
nlohmann::json load_for_comparison(const std::string& path);

// Compares two loaded results files. Throws ResultsError when their fingerprints differ (naming the
// fields) unless options.allow_different_machines.
Comparison compare_results(const nlohmann::json& base, const nlohmann::json& candidate,
                           const CompareOptions& options, const std::string& base_origin,
                           const std::string& new_origin);

// Re-measurement: a SLOWER verdict stands only when `rerun` (BASE vs a fresh run of those benchmarks)
// says SLOWER again; otherwise it becomes INCONCLUSIVE with both outcomes in the reason.
Comparison confirm_with_rerun(Comparison first, const Comparison& rerun);

std::vector<std::string> slower_names(const Comparison& comparison);

// A value of `metric` for people: times in ns/us/ms/s (from seconds), rates in M/s or G/s.
std::string format_metric(double value, const std::string& metric);
std::string format_percent(double fraction);  // 0.052 → "+5.2%"
std::string format_p(double p_value);         // 4 decimals, or scientific below 1e-4

// compare_report.cpp: the terminal table, the Markdown table (slowest first) and JSON.
void print_comparison(std::FILE* out, const Comparison& comparison);
std::string comparison_markdown(const Comparison& comparison, const std::string& base_label,
                                const std::string& new_label);
nlohmann::json to_json(const Comparison& comparison);

}  // namespace offloadbench
