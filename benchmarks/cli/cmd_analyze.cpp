// `offloadbench analyze FILE` and `offloadbench summary FILE`: compute the analysis block of a
// results file (speedups, crossovers, fits, overlap, ceilings) and store it in the same file
// (atomic rewrite); or print the short headline summary, analysing in memory when needed.
#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "benchmarks/cli/commands.h"
#include "harness/results/files.h"
#include "harness/results/results.h"
#include "harness/analysis/summary.h"

namespace offloadbench::cli {

namespace {

int execute_analyze(const std::string& path) {
  // The lock `run` holds on the file until its last write: while it is held, what we would read is a
  // snapshot that our rewrite would put back over the rows finished since (refused: FileError, exit 2).
  OutputLock lock(path);
  auto doc = load_results(path);
  doc["analysis"] = analyze(doc);
  write_json_atomically(path, doc);
  print_summary(stdout, doc);
  fmt::print("analysis written to {} (top-level \"analysis\")\n", path);
  return 0;
}

int execute_summary(const std::string& path) {
  auto doc = load_results(path);
  if (!doc.contains("analysis")) doc["analysis"] = analyze(doc);  // not written back: summary only reads
  print_summary(stdout, doc);
  return 0;
}

}  // namespace

Command add_analyze_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("analyze", "Compute speedups, crossovers and fits; store them in the results file");
  cmd->add_option("file", *path, "Results file")->required();
  return {cmd, [path] { return execute_analyze(*path); }};
}

Command add_summary_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("summary", "Print the headline findings of a results file");
  cmd->add_option("file", *path, "Results file")->required();
  return {cmd, [path] { return execute_summary(*path); }};
}

}  // namespace offloadbench::cli
