// `offloadbench compare BASE NEW`: per-benchmark verdicts from two existing files, a summary, an
// exit code CI can act on (1 when anything is SLOWER), and optionally a Markdown table. It only
// compares files; measuring again, side by side, is `offloadbench ab`.
#include <cmath>
#include <filesystem>

#include <utility>

#include <fmt/format.h>

#include "cli/commands.h"
#include "harness/regression/compare.h"
#include "harness/regression/floor_history.h"
#include "harness/results/files.h"
#include "harness/results/results.h"

namespace offloadbench::cli {

namespace {

struct CompareCliOptions {
  std::string base, candidate;
  std::string delta_cpu = "2%", delta_gpu = "1%";
  double alpha = 0.05;
  std::string metric = "real_time";
  int min_repetitions = 3;
  bool allow_different_machines = false;
  bool verbose = false;
  std::string markdown, json;
  std::string history;
};

int execute_compare(const CompareCliOptions& o) {
  CompareOptions options;
  options.delta_cpu = parse_fraction(o.delta_cpu, "--delta-cpu");
  options.delta_gpu = parse_fraction(o.delta_gpu, "--delta-gpu");
  if (!(options.delta_cpu > 0 && options.delta_cpu < 1))
    throw UsageError(
        fmt::format("--delta-cpu {} is out of range (above 0%, below 100%)", o.delta_cpu));
  if (!(options.delta_gpu > 0 && options.delta_gpu < 1))
    throw UsageError(
        fmt::format("--delta-gpu {} is out of range (above 0%, below 100%)", o.delta_gpu));
  if (!(o.alpha > 0 && o.alpha < 1))
    throw UsageError(fmt::format("--alpha {} is out of range (0 to 1)", o.alpha));
  if (o.min_repetitions < 2)
    throw UsageError(
        fmt::format("--min-repetitions {} is too small (at least 2)", o.min_repetitions));
  options.alpha = o.alpha;
  options.metric = o.metric;
  options.min_repetitions = o.min_repetitions;
  options.allow_different_machines = o.allow_different_machines;

  // Output paths are checked before any work: a bad one is bad input (2), never "SLOWER" (1). An
  // output that is an input, or the other output, would destroy it: refused before anything is
  // made.
  for (const auto& [path, option] :
       {std::pair{o.markdown, "--markdown"}, std::pair{o.json, "--json"}}) {
    if (path.empty()) continue;
    check_not_same_file(path, option, o.base, "BASE");
    check_not_same_file(path, option, o.candidate, "NEW");
  }
  if (!o.markdown.empty() && !o.json.empty())
    check_not_same_file(o.json, "--json", o.markdown, "--markdown");
  if (!o.markdown.empty()) check_output_path(o.markdown, "--markdown");
  if (!o.json.empty()) check_output_path(o.json, "--json");
  const auto base = load_for_comparison(o.base);
  const auto candidate = load_for_comparison(o.candidate);
  if (!o.history.empty()) {
    const auto history =
        load_floor_history(o.history, o.metric, base["context"]["machine_fingerprint"]);
    options.floor_history = history.spread;
    options.floor_history_runs = history.runs;
  }
  auto comparison = compare_results(base, candidate, options, o.base, o.candidate);
  if (comparison.rows.empty() && comparison.skipped_in_both.empty())
    throw UsageError(fmt::format("{} and {} have no benchmark in common: nothing to compare",
                                 o.base, o.candidate));

  print_comparison(stdout, comparison, o.verbose);
  if (!o.markdown.empty())
    write_file_atomically(o.markdown, comparison_markdown(comparison, o.base, o.candidate));
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
  } catch (const std::exception&) { used = 0; }
  if (number.empty() || used != number.size() || !std::isfinite(value))
    throw UsageError(
        fmt::format("{} '{}' is not a number or a percentage (e.g. 5% or 0.05)", option, text));
  return percent ? value / 100 : value;
}

Command add_compare_command(CLI::App& app) {
  auto o = std::make_shared<CompareCliOptions>();
  auto* cmd =
      app.add_subcommand("compare",
                         "Compare two results files: SLOWER / FASTER / SAME / INCONCLUSIVE per "
                         "benchmark; exit 1 when any is SLOWER");
  cmd->add_option("BASE", o->base, "Baseline results file")->required();
  cmd->add_option("NEW", o->candidate, "New results file")->required();
  cmd->add_option("--delta-cpu", o->delta_cpu,
                  "Smallest change that counts on CPU rows (2% or 0.02)")
      ->default_str("2%");
  cmd->add_option("--delta-gpu", o->delta_gpu, "Smallest change that counts on GPU rows")
      ->default_str("1%");
  cmd->add_option("--alpha", o->alpha, "Family-wise error rate over the benchmarks (Holm)")
      ->default_str("0.05");
  cmd->add_option("--metric", o->metric,
                  "Row field to compare: real_time, cpu_time (lower is better) or a *_per_second "
                  "rate (higher)")
      ->default_str("real_time");
  cmd->add_option("--min-repetitions", o->min_repetitions,
                  "Fewer samples on a side gives INCONCLUSIVE")
      ->default_str("3");
  cmd->add_flag("--allow-different-machines", o->allow_different_machines,
                "Compare even when the machine fingerprints differ");
  cmd->add_option("--markdown", o->markdown,
                  "Write the table, slowest first, as Markdown (e.g. for a CI summary)")
      ->check(non_empty_path());
  cmd->add_option("--json", o->json, "Write the verdicts as JSON")->check(non_empty_path());
  cmd->add_option(
         "--history", o->history,
         "A directory of earlier results files of this machine (run --processes): how far each "
         "benchmark's fastest process moves between runs widens its test")
      ->check(non_empty_path());
  cmd->add_flag("--verbose", o->verbose,
                "Also print the method (test, δ, Holm, the pair's noise) and each row's p, "
                "repetitions and reason");
  return {cmd, [o] { return execute_compare(*o); }};
}

}  // namespace offloadbench::cli
