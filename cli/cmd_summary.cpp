// `offloadbench summary FILE`: print the short headline summary of a results file, analysing in memory
// when the file has no analysis block (nothing is written back: summary only reads).
#include <fmt/format.h>

#include "benchmarks/family_analyses.h"
#include "cli/commands.h"
#include "harness/analysis/analysis.h"
#include "harness/analysis/summary.h"
#include "harness/results/results.h"

namespace offloadbench::cli {

namespace {

int execute_summary(const std::string& path) {
  auto doc = load_results(path);
  // Not written back: summary only reads. A block from before the self-checks is computed again, so
  // no finding they would refuse is printed.
  if (!doc.contains("analysis") || !doc["analysis"].is_object() || !doc["analysis"].contains("invariants"))
    doc["analysis"] = analyze(doc, family_analyses());
  print_summary(stdout, doc, family_analyses());
  return 0;
}

}  // namespace

Command add_summary_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("summary", "Print the headline findings of a results file");
  cmd->add_option("file", *path, "Results file")->required();
  return {cmd, [path] { return execute_summary(*path); }};
}

}  // namespace offloadbench::cli
