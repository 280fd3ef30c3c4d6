// `offloadbench plot FILE [--out DIR]`: draws the charts and report.html by running the plots
// package (`python -m plots`, plots_runner.h), which reads only the results file. With several
// files (one per machine), `python -m plots.fleet` draws one report with the machines side by side
// (docs/fleet.md). `plot` only reads FILE: for a file without the analysis block, the block is
// computed here and handed to the plots in a temporary file of its own (`offloadbench analyze FILE`
// is what stores it).
#include <deque>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/family_analyses.h"
#include "cli/commands.h"
#include "cli/plots_runner.h"
#include "harness/analysis/analysis.h"
#include "harness/results/files.h"
#include "harness/results/results.h"

namespace offloadbench::cli {

namespace {

struct PlotOptions {
  std::vector<std::string> files;
  std::string out;
};

int execute_plot(const PlotOptions& o) {
  std::vector<nlohmann::json> docs;
  for (const auto& file : o.files)
    docs.push_back(load_results(file));  // a malformed file: one line, exit 2
  if (!o.out.empty() && std::filesystem::exists(o.out) && !std::filesystem::is_directory(o.out))
    throw FileError(fmt::format("--out '{}' exists and is not a folder", o.out));
  // Without matplotlib nothing is written: neither the analysis block nor an empty chart folder.
  const auto python = plots_python();
  if (!python) return 2;
  const bool fleet = o.files.size() > 1;
  std::vector<std::string> args = o.files;
  // The package's own default, named here so that what it wrote can be checked afterwards.
  const auto source = std::filesystem::path(o.files[0]);
  const auto out = !o.out.empty() ? o.out
                   : fleet        ? std::string("fleet-plots")
                           : (source.parent_path() / (source.stem().string() + "-plots")).string();
  args.insert(args.end(), {"--out", out});
  const ExpectedOutput report((std::filesystem::path(out) / "report.html").string());
  std::deque<TemporaryFile>
      analysis_files;  // the charts need the analysis block; deque: they never move
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (docs[i].contains("analysis")) continue;
    const auto& temporary = analysis_files.emplace_back("offloadbench-analysis", ".json");
    write_json_atomically(temporary.path(), analyze(docs[i], family_analyses()));
    args.insert(args.end(), {"--analysis",
                             fleet ? fmt::format("{}={}", i, temporary.path()) : temporary.path()});
    fmt::print(
        "{} has no analysis block: drawing from one computed now (not stored; "
        "'offloadbench analyze {}' stores it)\n",
        o.files[i], o.files[i]);
  }
  return plots_exit(*python, run_plots(*python, args, false, fleet ? "plots.fleet" : "plots"),
                    report);
}

}  // namespace

Command add_plot_command(CLI::App& app) {
  auto o = std::make_shared<PlotOptions>();
  auto* cmd =
      app.add_subcommand("plot",
                         "Draw charts and report.html from a results file (python -m plots), or "
                         "from several machines' files side by side (python -m plots.fleet)");
  cmd->add_option("files", o->files,
                  "Results file; several files (one per machine): one report, machines side by "
                  "side")
      ->required();
  cmd->add_option("--out", o->out,
                  "Folder for the charts (default <file stem>-plots beside the file; "
                  "fleet-plots for several files)")
      ->check(non_empty_path());
  return {cmd, [o] { return execute_plot(*o); }};
}

}  // namespace offloadbench::cli
