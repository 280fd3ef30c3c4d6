// `offloadbench dashboard DIR --out SITE`: the nightly history of every machine as a static site,
// drawn by the plots package's `plots.dashboard` module (plots_runner.h; docs/dashboard.md).
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/plots_runner.h"
#include "harness/results/files.h"

namespace offloadbench::cli {

namespace {

struct DashboardOptions {
  std::string tree;
  std::string out;
  std::string metric = "real_time";
};

// The site is drawn by plots.dashboard, which reads each machine's history through this same
// program
// (`offloadbench history`), so its change points are the ones `history` prints.
int execute_dashboard(const DashboardOptions& o) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(o.tree, error)) throw FileError(fmt::format("{}: not a folder", o.tree));
  if (fs::exists(o.out, error) && !fs::is_directory(o.out, error))
    throw FileError(fmt::format("--out '{}' exists and is not a folder", o.out));
  const auto self = fs::read_symlink("/proc/self/exe", error);
  if (error)
    throw FileError(fmt::format("cannot find this program's own path: {}", error.message()));
  const auto python = plots_python();
  if (!python) return 2;
  const ExpectedOutput site_index((fs::path(o.out) / "index.html").string());
  return plots_exit(
      *python,
      run_plots(*python,
                {o.tree, "--out", o.out, "--metric", o.metric, "--offloadbench", self.string()},
                false, "plots.dashboard"),
      site_index);
}

}  // namespace

Command add_dashboard_command(CLI::App& app) {
  auto o = std::make_shared<DashboardOptions>();
  auto* cmd = app.add_subcommand("dashboard",
                                 "A static site of the nightly history of every machine "
                                 "(python -m plots.dashboard)");
  cmd->add_option("DIR", o->tree,
                  "The nightly results tree (history/<machine>/*.json, ab/, baselines/)")
      ->required();
  cmd->add_option("--out", o->out,
                  "Folder of the site: new, empty, or a previous dashboard (replaced whole)")
      ->required()
      ->check(non_empty_path());
  cmd->add_option("--metric", o->metric, "Row field the trends follow")->default_str("real_time");
  return {cmd, [o] { return execute_dashboard(*o); }};
}

}  // namespace offloadbench::cli
