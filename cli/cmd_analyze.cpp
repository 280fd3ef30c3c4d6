// `offloadbench analyze FILE`: compute the analysis block of a results file (speedups, crossovers,
// what each family adds, ceilings, headlines) and store it in the same file (atomic rewrite).
#include <fmt/format.h>

#include "benchmarks/family_analyses.h"
#include "cli/commands.h"
#include "harness/analysis/analysis.h"
#include "harness/analysis/summary.h"
#include "harness/analysis/verdicts.h"
#include "harness/results/files.h"
#include "harness/results/results.h"

namespace offloadbench::cli {

namespace {

int execute_analyze(const std::string& path) {
  // The lock `run` holds on the file until its last write: while it is held, what we would read is
  // a snapshot that our rewrite would put back over the rows finished since (refused: FileError,
  // exit 2).
  OutputLock lock(path);
  auto doc = load_results(path);
  doc["analysis"] = analyze(doc, family_analyses());
  write_json_atomically(path, doc);
  print_summary(stdout, doc, family_analyses(), {false, &default_reference_runs(), path});
  fmt::print("analysis written to {} (top-level \"analysis\")\n", path);
  return 0;
}

}  // namespace

Command add_analyze_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "analyze", "Compute speedups, crossovers and fits; store them in the results file");
  cmd->add_option("file", *path, "Results file")->required();
  return {cmd, [path] { return execute_analyze(*path); }};
}

}  // namespace offloadbench::cli
