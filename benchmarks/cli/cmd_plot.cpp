// `offloadbench plot FILE [--out DIR]`: draws the charts and report.html by running the plots
// package (`python -m plots`), which reads only the results file. Python is found as
// $OFFLOADBENCH_PYTHON, else <source>/.venv/bin/python (what scripts/setup makes), else python3.
// `plot` only reads FILE: for a file without the analysis block, the block is computed here and handed
// to the plots in a temporary file of its own (`offloadbench analyze FILE` is what stores it).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "benchmarks/cli/commands.h"
#include "harness/results/files.h"
#include "harness/results/results.h"

extern char** environ;

namespace offloadbench::cli {

namespace {

struct PlotOptions {
  std::string file;
  std::string out;
};

std::string find_python() {
  if (const char* chosen = std::getenv("OFFLOADBENCH_PYTHON"); chosen && *chosen) return chosen;
  const auto venv = std::filesystem::path(OFFLOADBENCH_SOURCE_DIR) / ".venv" / "bin" / "python";
  if (std::filesystem::exists(venv)) return venv.string();
  return "python3";
}

// Runs `python -m plots ARGS…` and returns its exit status.
int run_plots(const std::string& python, std::vector<std::string> args) {
  args.insert(args.begin(), {python, "-m", "plots"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);  // our lines before the child's
  pid_t pid = 0;
  if (int err = posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ); err != 0)
    throw FileError(fmt::format("cannot run '{}' for the plots: {} (set OFFLOADBENCH_PYTHON)", python,
                                std::strerror(err)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(fmt::format("waiting for '{}': {}", python, std::strerror(errno)));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int execute_plot(const PlotOptions& o) {
  auto doc = load_results(o.file);  // a malformed file is reported here, on one line, with exit 2
  if (!o.out.empty() && std::filesystem::exists(o.out) && !std::filesystem::is_directory(o.out))
    throw FileError(fmt::format("--out '{}' exists and is not a folder", o.out));
  const std::string python = find_python();
  // The plots package lives in the source tree; put it first on the module path.
  std::string path = OFFLOADBENCH_SOURCE_DIR;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += fmt::format(":{}", old);
  setenv("PYTHONPATH", path.c_str(), 1);
  // Without matplotlib nothing is written: neither the analysis block nor an empty chart folder.
  if (run_plots(python, {"--check"}) != 0) return 2;
  std::vector<std::string> args = {o.file};
  if (!o.out.empty()) args.insert(args.end(), {"--out", o.out});
  std::optional<TemporaryFile> analysis_file;
  if (!doc.contains("analysis")) {  // the charts need the analysis block
    analysis_file.emplace("offloadbench-analysis", ".json");
    write_json_atomically(analysis_file->path(), analyze(doc));
    args.insert(args.end(), {"--analysis", analysis_file->path()});
    fmt::print("{} has no analysis block: drawing from one computed now (not stored; "
               "'offloadbench analyze {}' stores it)\n", o.file, o.file);
  }
  return run_plots(python, args);
}

}  // namespace

Command add_plot_command(CLI::App& app) {
  auto o = std::make_shared<PlotOptions>();
  auto* cmd = app.add_subcommand("plot", "Draw charts and report.html from a results file (python -m plots)");
  cmd->add_option("file", o->file, "Results file")->required();
  cmd->add_option("--out", o->out, "Folder for the charts (default <file stem>-plots beside the file)")
      ->check(non_empty_path());
  return {cmd, [o] { return execute_plot(*o); }};
}

}  // namespace offloadbench::cli
