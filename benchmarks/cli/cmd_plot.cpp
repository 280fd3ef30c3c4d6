// `offloadbench plot FILE [--out DIR]`: draws the charts and report.html by running the plots
// package (`python -m plots`), which reads only the results file. With several files (one per
// machine), `python -m plots.fleet` draws one report with the machines side by side (docs/fleet.md).
// `offloadbench dashboard DIR --out SITE` runs its `plots.dashboard` module the same way
// (docs/dashboard.md). Python is found as
// $OFFLOADBENCH_PYTHON, else <source>/.venv/bin/python (what scripts/setup makes), else python3.
// `plot` only reads FILE: for a file without the analysis block, the block is computed here and handed
// to the plots in a temporary file of its own (`offloadbench analyze FILE` is what stores it).
// Before anything is written, `python -m plots --check` proves that this Python can load matplotlib;
// when it cannot (or is not Python at all), one line says so and which variable to fix, exit 2.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "benchmarks/cli/commands.h"
#include "harness/results/files.h"
#include "harness/results/results.h"

extern char** environ;

namespace offloadbench::cli {

namespace {

struct PlotOptions {
  std::vector<std::string> files;
  std::string out;
};

struct Python {
  std::string path;
  std::string origin;  // how it was chosen, for messages: "OFFLOADBENCH_PYTHON='…'", …
};

Python find_python() {
  if (const char* chosen = std::getenv("OFFLOADBENCH_PYTHON"); chosen && *chosen)
    return {chosen, fmt::format("OFFLOADBENCH_PYTHON='{}'", chosen)};
  const auto venv = std::filesystem::path(OFFLOADBENCH_SOURCE_DIR) / ".venv" / "bin" / "python";
  if (std::filesystem::exists(venv)) return {venv.string(), fmt::format("the project's Python '{}'", venv.string())};
  return {"python3", "'python3' from PATH"};
}

struct PlotsExit {
  int status = 0;      // the exit status, or 128 + the signal that ended it
  bool signaled = false;
  std::string output;  // stdout and stderr together, when captured
};

// Runs `python -m MODULE ARGS…` (the plots package by default). With `capture`, its stdout and stderr
// are collected (at most 64 KiB kept) instead of reaching the terminal. Throws FileError when it cannot
// be started at all.
PlotsExit run_plots(const Python& python, std::vector<std::string> args, bool capture,
                    const std::string& module = "plots") {
  args.insert(args.begin(), {python.path, "-m", module});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);  // our lines before the child's
  int pipe_fds[2] = {-1, -1};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (capture) {
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
      posix_spawn_file_actions_destroy(&actions);
      throw std::runtime_error(fmt::format("cannot make a pipe for the plots: {}", std::strerror(errno)));
    }
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);  // dup2 clears close-on-exec
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  }
  pid_t pid = 0;
  const int err = posix_spawnp(&pid, python.path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  PlotsExit result;
  if (capture) {
    close(pipe_fds[1]);
    if (err == 0) {
      char buffer[4096];
      for (;;) {
        const ssize_t got = read(pipe_fds[0], buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        if (result.output.size() < (64u << 10)) result.output.append(buffer, static_cast<std::size_t>(got));
      }
    }
    close(pipe_fds[0]);
  }
  if (err != 0)
    throw FileError(fmt::format("cannot run {} for the plots: {} (set OFFLOADBENCH_PYTHON to a Python with "
                                "matplotlib)", python.origin, std::strerror(err)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw std::runtime_error(fmt::format("waiting for {}: {}", python.origin, std::strerror(errno)));
  if (WIFEXITED(status)) {
    result.status = WEXITSTATUS(status);
  } else {
    result.signaled = true;
    result.status = 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  return result;
}

// find_python(), with the plots package (in the source tree) put first on its module path.
Python plots_python() {
  std::string path = OFFLOADBENCH_SOURCE_DIR;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += fmt::format(":{}", old);
  setenv("PYTHONPATH", path.c_str(), 1);
  return find_python();
}

// The last non-blank line of `text`, printable (at most `limit` bytes), or "" when there is none.
std::string last_line(std::string_view text, std::size_t limit = std::string::npos) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  const auto newline = text.find_last_of('\n');
  if (newline != std::string_view::npos) text.remove_prefix(newline + 1);
  if (text.size() > limit) return printable(text.substr(0, limit)) + "…";  // a cut character is escaped
  return printable(text);
}

// How a run that did not end as the plots package ends (0, or 1/2 after its own one-line message) ended.
std::string how_it_ended(const PlotsExit& e) {
  if (e.signaled) return fmt::format("was killed by signal {} ({})", e.status - 128, strsignal(e.status - 128));
  const auto line = last_line(e.output, 200);
  return line.empty() ? fmt::format("exited with status {} and printed nothing", e.status)
                      : fmt::format("exited with status {}: {}", e.status, line);
}

// The check before anything is written: 0 when `python -m plots --check` says "plots: ready", else 2
// after one line on stderr (the package's own line when it gave one, e.g. no matplotlib).
int check_python(const Python& python) {
  const auto check = run_plots(python, {"--check"}, true);
  const bool ready = check.output.find("plots: ready") != std::string::npos;
  if (!check.signaled && check.status == 0 && ready) return 0;
  if (!check.signaled && check.status == 2) {
    if (const auto line = last_line(check.output); line.rfind("plots: ", 0) == 0) {
      fmt::print(stderr, "{}\n", line);
      return 2;
    }
  }
  fmt::print(stderr, "offloadbench: cannot draw the plots: {} {} when run as '{} -m plots --check' (set "
             "OFFLOADBENCH_PYTHON to a Python 3 with matplotlib, or run scripts/setup)\n",
             printable(python.origin), how_it_ended(check), printable(python.path));
  return 2;
}

// 0, or 1 or 2 after the package's own one-line message; anything else gets a line of its own.
int plots_exit(const Python& python, const PlotsExit& drawn) {
  if (!drawn.signaled && drawn.status <= 2) return drawn.status;
  if (drawn.signaled && (drawn.status == 128 + SIGINT || drawn.status == 128 + SIGTERM)) return drawn.status;
  fmt::print(stderr, "offloadbench: the plots stopped: {} {}\n", printable(python.origin), how_it_ended(drawn));
  return 1;
}

int execute_plot(const PlotOptions& o) {
  std::vector<nlohmann::json> docs;
  for (const auto& file : o.files) docs.push_back(load_results(file));  // a malformed file: one line, exit 2
  if (!o.out.empty() && std::filesystem::exists(o.out) && !std::filesystem::is_directory(o.out))
    throw FileError(fmt::format("--out '{}' exists and is not a folder", o.out));
  const Python python = plots_python();
  // Without matplotlib nothing is written: neither the analysis block nor an empty chart folder.
  if (const int failed = check_python(python); failed != 0) return failed;
  const bool fleet = o.files.size() > 1;
  std::vector<std::string> args = o.files;
  if (!o.out.empty()) args.insert(args.end(), {"--out", o.out});
  std::deque<TemporaryFile> analysis_files;  // the charts need the analysis block; deque: they never move
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (docs[i].contains("analysis")) continue;
    const auto& temporary = analysis_files.emplace_back("offloadbench-analysis", ".json");
    write_json_atomically(temporary.path(), analyze(docs[i]));
    args.insert(args.end(), {"--analysis", fleet ? fmt::format("{}={}", i, temporary.path()) : temporary.path()});
    fmt::print("{} has no analysis block: drawing from one computed now (not stored; "
               "'offloadbench analyze {}' stores it)\n", o.files[i], o.files[i]);
  }
  return plots_exit(python, run_plots(python, args, false, fleet ? "plots.fleet" : "plots"));
}

struct DashboardOptions {
  std::string tree;
  std::string out;
  std::string metric = "real_time";
};

// The site is drawn by plots.dashboard, which reads each machine's history through this same program
// (`offloadbench history`), so its change points are the ones `history` prints.
int execute_dashboard(const DashboardOptions& o) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(o.tree, error)) throw FileError(fmt::format("{}: not a folder", o.tree));
  if (fs::exists(o.out, error) && !fs::is_directory(o.out, error))
    throw FileError(fmt::format("--out '{}' exists and is not a folder", o.out));
  const auto self = fs::read_symlink("/proc/self/exe", error);
  if (error) throw FileError(fmt::format("cannot find this program's own path: {}", error.message()));
  const Python python = plots_python();
  if (const int failed = check_python(python); failed != 0) return failed;
  return plots_exit(python, run_plots(python, {o.tree, "--out", o.out, "--metric", o.metric, "--offloadbench",
                                                self.string()}, false, "plots.dashboard"));
}

}  // namespace

Command add_plot_command(CLI::App& app) {
  auto o = std::make_shared<PlotOptions>();
  auto* cmd = app.add_subcommand("plot", "Draw charts and report.html from a results file (python -m plots), or "
                                         "from several machines' files side by side (python -m plots.fleet)");
  cmd->add_option("files", o->files, "Results file; several files (one per machine): one report, machines side by "
                                     "side")->required();
  cmd->add_option("--out", o->out, "Folder for the charts (default <file stem>-plots beside the file; "
                                   "fleet-plots for several files)")
      ->check(non_empty_path());
  return {cmd, [o] { return execute_plot(*o); }};
}

Command add_dashboard_command(CLI::App& app) {
  auto o = std::make_shared<DashboardOptions>();
  auto* cmd = app.add_subcommand("dashboard", "A static site of the nightly history of every machine "
                                              "(python -m plots.dashboard)");
  cmd->add_option("DIR", o->tree, "The nightly results tree (history/<machine>/*.json, ab/, baselines/)")
      ->required();
  cmd->add_option("--out", o->out, "Folder of the site: new, empty, or a previous dashboard (replaced whole)")
      ->required()
      ->check(non_empty_path());
  cmd->add_option("--metric", o->metric, "Row field the trends follow")->default_str("real_time");
  return {cmd, [o] { return execute_dashboard(*o); }};
}

}  // namespace offloadbench::cli
