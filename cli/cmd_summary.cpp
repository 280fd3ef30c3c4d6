// `offloadbench summary FILE [--all]`: the verdicts and crossovers of a results file (summary.h),
// from its analysis computed in memory (nothing is written back: summary only reads).
#include <filesystem>

#include <fmt/format.h>

#include "benchmarks/family_analyses.h"
#include "cli/commands.h"
#include "harness/analysis/analysis.h"
#include "harness/analysis/summary.h"
#include "harness/analysis/verdicts.h"
#include "harness/results/results.h"

namespace offloadbench::cli {

namespace {

struct SummaryArgs {
  std::string path;
  bool all = false;
  std::string references;  // none: default_reference_runs()
};

int execute_summary(const SummaryArgs& args) {
  const auto& path = args.path;
  if (!args.references.empty() && !std::filesystem::is_directory(args.references))
    throw UsageError(fmt::format("--references {}: not a folder", printable(args.references)));
  auto doc = load_results(path);
  // Computed again in memory, never written back (summary only reads): a stored block may come from
  // an older offloadbench, without the self-checks or the CPU rows' names the verdicts print.
  doc["analysis"] = analyze(doc, family_analyses());
  const auto given = load_reference_runs(args.references);
  print_summary(stdout, doc, family_analyses(),
                {args.all, args.references.empty() ? &default_reference_runs() : &given, path});
  return 0;
}

}  // namespace

const std::vector<ReferenceRun>& default_reference_runs() {
  static const auto runs = load_reference_runs(OFFLOADBENCH_SOURCE_DIR "/results/reference");
  return runs;
}

Command add_summary_command(CLI::App& app) {
  auto args = std::make_shared<SummaryArgs>();
  auto* cmd = app.add_subcommand(
      "summary", "Print whether a results file's figures are healthy, and where the GPU wins");
  cmd->add_option("file", args->path, "Results file")->required();
  cmd->add_flag("--all", args->all, "Also print every table and finding");
  cmd->add_option("--references", args->references,
                  "Folder of reference results files the verdicts compare with (matched by GPU "
                  "model and link; "
                  "default: the checkout's results/reference)")
      ->check(non_empty_path());
  return {cmd, [args] { return execute_summary(*args); }};
}

}  // namespace offloadbench::cli
