// `offloadbench history DIR`: the nightly results of one machine in time order, with the steps
// (change points) in each benchmark's median and the git SHA where each appeared. Given a tree of
// machines instead (DIR/<fingerprint id>/*.json, as ci/nightly-gpu.yml keeps it), each machine's
// table, and the steps that appeared at one commit on several machines named once.
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "cli/commands.h"
#include "harness/regression/history.h"
#include "harness/regression/history_tree.h"
#include "harness/results/files.h"
#include "harness/results/results.h"

namespace offloadbench::cli {

namespace {

struct HistoryCliOptions {
  std::string directory;
  std::string metric = "real_time";
  std::string min_magnitude = "5%";
  int min_runs = 3;
  bool every_benchmark = false;
  bool allow_different_machines = false;
  std::string json;
};

int execute_history(const HistoryCliOptions& o) {
  ChangePointOptions options;
  options.min_magnitude = parse_fraction(o.min_magnitude, "--min-magnitude");
  if (!(options.min_magnitude > 0 && options.min_magnitude < 1))
    throw UsageError(
        fmt::format("--min-magnitude {} is out of range (above 0%, below 100%)", o.min_magnitude));
  if (o.min_runs < 1 || o.min_runs > 1000)
    throw UsageError(fmt::format("--min-runs {} is out of range (1..1000)", o.min_runs));
  options.min_segment = o.min_runs;
  const bool tree = is_history_tree(o.directory);
  if (!o.json.empty()) {
    std::vector<std::string> folders = {o.directory};
    if (tree)
      for (const auto& entry : std::filesystem::directory_iterator(o.directory)) {
        std::error_code error;
        if (entry.is_directory(error)) folders.push_back(entry.path().string());
      }
    for (const auto& folder : folders) {
      std::vector<std::string> inputs;
      try {
        inputs = history_files(folder);
      } catch (const ResultsError&) {  // a machine folder that cannot be listed is left out, and
                                       // said so, later
      }
      for (const auto& input : inputs) check_not_same_file(o.json, "--json", input, "input");
    }
    check_output_path(o.json,
                      "--json");  // after: its probe file would touch the folder of a refused path
  }
  if (tree) {
    const auto machines =
        load_history_tree(o.directory, o.metric, o.allow_different_machines, options);
    print_history_tree(stdout, machines, o.every_benchmark);  // names made printable there
    if (!o.json.empty()) write_json_atomically(o.json, to_json(machines));
    return 0;
  }
  auto history = load_history(o.directory, o.metric, o.allow_different_machines, options);
  const auto json = o.json.empty() ? nlohmann::json() : to_json(history);
  // The JSON keeps names as they are; the terminal gets them printable (a CR or ESC in a name or a
  // git SHA could otherwise forge a line), made so in place here once the JSON no longer needs
  // them.
  history.directory = printable(history.directory);
  for (auto& why : history.ignored) why = printable(why);
  for (auto& run : history.runs) run.start_time = printable(run.start_time);
  for (auto& benchmark : history.benchmarks) {
    benchmark.name = printable(benchmark.name);
    for (auto& step : benchmark.change_points)
      for (auto* text : {&step.start_time, &step.git_sha, &step.previous_git_sha})
        *text = printable(*text);
  }
  print_history(stdout, history, o.every_benchmark);
  if (!o.json.empty()) write_json_atomically(o.json, json);
  return 0;
}

}  // namespace

Command add_history_command(CLI::App& app) {
  auto o = std::make_shared<HistoryCliOptions>();
  auto* cmd =
      app.add_subcommand("history",
                         "Trends and change points over a directory of results files of one "
                         "machine, or over a tree of machines (DIR/<machine>/*.json)");
  cmd->add_option("DIR", o->directory,
                  "Directory of results files (*.json), or of one such folder per machine")
      ->required();
  cmd->add_option("--metric", o->metric, "Row field: real_time, cpu_time or a *_per_second rate")
      ->default_str("real_time");
  cmd->add_option("--min-magnitude", o->min_magnitude, "Smallest step reported (5% or 0.05)")
      ->default_str("5%");
  cmd->add_option("--min-runs", o->min_runs, "Runs a level must last on each side of a step")
      ->default_str("3");
  cmd->add_flag("--all", o->every_benchmark,
                "List every benchmark, not only those with a change point");
  cmd->add_flag("--allow-different-machines", o->allow_different_machines,
                "Read files whose machine fingerprints differ");
  cmd->add_option("--json", o->json,
                  "Write the trends and change points as JSON (input of plots/trend.py)")
      ->check(non_empty_path());
  return {cmd, [o] { return execute_history(*o); }};
}

}  // namespace offloadbench::cli
