// `offloadbench compare BASE NEW`: per-benchmark verdicts, a summary, an exit code CI can act on
// (1 when anything is SLOWER), and optionally a Markdown table and a re-measurement of what looked slower.
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/rerun.h"
#include "harness/compare.h"
#include "harness/files.h"
#include "harness/results.h"
#include "harness/run_context.h"

namespace offloadbench::cli {

namespace {

struct CompareCliOptions {
  std::string base, candidate;
  std::string threshold = "3%";
  double alpha = 0.01;
  std::string metric = "real_time";
  int min_repetitions = 5;
  bool allow_different_machines = false;
  std::string markdown, json;
  bool rerun = false;
  std::string rerun_out;
};

// Re-measures the SLOWER benchmarks on this machine and keeps each verdict only if it repeats.
Comparison rerun_slower(const Comparison& first, const nlohmann::json& base, const nlohmann::json& candidate,
                        const CompareCliOptions& o, const CompareOptions& options) {
  const auto here = fingerprint_differences(candidate["context"]["machine_fingerprint"], machine_fingerprint());
  if (!here.empty())
    throw UsageError(fmt::format("--rerun must run on the machine that made {}; this one differs: {}", o.candidate,
                                 here.front()));
  const auto names = slower_names(first);
  const std::string out = o.rerun_out.empty()
      ? (std::filesystem::temp_directory_path() / fmt::format("offloadbench-rerun-{}.json", getpid())).string()
      : o.rerun_out;
  const auto arguments = rerun_arguments(candidate["context"], names, out);
  fmt::print(stderr, "compare: re-measuring {} SLOWER benchmark(s) on this machine\n", names.size());
  const int status = run_child(std::filesystem::read_symlink("/proc/self/exe").string(), arguments);
  if (status != 0 && status != 1)  // 1: some rows failed validation; the file is still usable
    throw std::runtime_error(fmt::format("the rerun (offloadbench run) failed with exit status {}", status));
  const auto again = load_for_comparison(out);
  if (o.rerun_out.empty()) std::filesystem::remove(out);
  return confirm_with_rerun(first, compare_results(base, again, options, o.base, "the rerun"));
}

int execute_compare(const CompareCliOptions& o) {
  CompareOptions options;
  options.threshold = parse_fraction(o.threshold, "--threshold");
  if (!(options.threshold >= 0 && options.threshold < 1))
    throw UsageError(fmt::format("--threshold {} is out of range (0% to <100%)", o.threshold));
  if (!(o.alpha > 0 && o.alpha < 1)) throw UsageError(fmt::format("--alpha {} is out of range (0 to 1)", o.alpha));
  if (o.min_repetitions < 2)
    throw UsageError(fmt::format("--min-repetitions {} is too small (at least 2)", o.min_repetitions));
  options.alpha = o.alpha;
  options.metric = o.metric;
  options.min_repetitions = o.min_repetitions;
  options.allow_different_machines = o.allow_different_machines;

  // Output paths are checked before any work: a bad one is bad input (2), never "SLOWER" (1).
  if (!o.markdown.empty()) check_output_path(o.markdown, "--markdown");
  if (!o.json.empty()) check_output_path(o.json, "--json");
  const auto base = load_for_comparison(o.base);
  const auto candidate = load_for_comparison(o.candidate);
  auto comparison = compare_results(base, candidate, options, o.base, o.candidate);
  if (comparison.rows.empty() && comparison.skipped_in_both.empty())
    throw UsageError(fmt::format("{} and {} have no benchmark in common: nothing to compare", o.base, o.candidate));
  if (o.rerun && comparison.slower > 0) comparison = rerun_slower(comparison, base, candidate, o, options);

  print_comparison(stdout, comparison);
  if (!o.markdown.empty()) write_file_atomically(o.markdown, comparison_markdown(comparison, o.base, o.candidate));
  if (!o.json.empty()) write_json_atomically(o.json, to_json(comparison));
  return comparison.slower > 0 ? 1 : 0;
}

}  // namespace

double parse_fraction(const std::string& text, const std::string& option) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  std::size_t used = 0;
  double value = NAN;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (number.empty() || used != number.size() || !std::isfinite(value))
    throw UsageError(fmt::format("{} '{}' is not a number or a percentage (e.g. 5% or 0.05)", option, text));
  return percent ? value / 100 : value;
}

Command add_compare_command(CLI::App& app) {
  auto o = std::make_shared<CompareCliOptions>();
  auto* cmd = app.add_subcommand("compare", "Compare two results files: SLOWER / FASTER / SAME / INCONCLUSIVE per "
                                            "benchmark; exit 1 when any is SLOWER");
  cmd->add_option("BASE", o->base, "Baseline results file")->required();
  cmd->add_option("NEW", o->candidate, "New results file")->required();
  cmd->add_option("--threshold", o->threshold, "Smallest change of the median that counts (5% or 0.05)")
      ->default_str("3%");
  cmd->add_option("--alpha", o->alpha, "Significance level of the two-sided Mann-Whitney U test")->default_str("0.01");
  cmd->add_option("--metric", o->metric,
                  "Row field to compare: real_time, cpu_time (lower is better) or a *_per_second rate (higher)")
      ->default_str("real_time");
  cmd->add_option("--min-repetitions", o->min_repetitions, "Fewer samples on a side gives INCONCLUSIVE")
      ->default_str("5");
  cmd->add_flag("--allow-different-machines", o->allow_different_machines,
                "Compare even when the machine fingerprints differ");
  cmd->add_option("--markdown", o->markdown, "Write the table, slowest first, as Markdown (e.g. for a CI summary)")
      ->check(non_empty_path());
  cmd->add_option("--json", o->json, "Write the verdicts as JSON")->check(non_empty_path());
  cmd->add_flag("--rerun", o->rerun, "Re-measure SLOWER benchmarks on this machine; keep SLOWER only if it repeats");
  cmd->add_option("--rerun-out", o->rerun_out, "Keep the rerun's results file here (default: a temporary file)");
  return {cmd, [o] { return execute_compare(*o); }};
}

}  // namespace offloadbench::cli
