// Running the plots package (`python -m plots…`) for `plot` and `dashboard`: finding the package
// (the installed copy beside the program, else the checkout's: plots_home.h) and a Python that can
// load matplotlib ($OFFLOADBENCH_PYTHON, else the checkout's .venv, else python3), checked with
// `python -m plots --check` before anything is written; when none can, one line says what to
// install or which variable to fix, exit 2.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cli/environment.h"
#include "cli/plots_home.h"
#include "cli/plots_runner.h"
#include "harness/results/files.h"
#include "harness/results/results.h"

extern char** environ;

namespace offloadbench::cli {

namespace {

// The last non-blank line of `text`, printable (at most `limit` bytes), or "" when there is none.
std::string last_line(std::string_view text, std::size_t limit = std::string::npos) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  const auto newline = text.find_last_of('\n');
  if (newline != std::string_view::npos) text.remove_prefix(newline + 1);
  if (text.size() > limit)
    return printable(text.substr(0, limit)) + "…";  // a cut character is escaped
  return printable(text);
}

// How a run that did not end as the plots package ends (0, or 1/2 after its own one-line message)
// ended.
std::string how_it_ended(const PlotsExit& e) {
  if (e.signaled)
    return fmt::format("was killed by signal {} ({})", e.status - 128, strsignal(e.status - 128));
  const auto line = last_line(e.output, 200);
  return line.empty() ? fmt::format("exited with status {} and printed nothing", e.status)
                      : fmt::format("exited with status {}: {}", e.status, line);
}

bool ready(const PlotsExit& check) {
  return !check.signaled && check.status == 0 &&
         check.output.find("plots: ready") != std::string::npos;
}

// The package's line when an import fails ("plots: matplotlib is not installed for …",
// plots/__main__.py).
bool lacks_a_module(const PlotsExit& check) {
  const auto line = last_line(check.output);
  return !check.signaled && check.status == 2 && line.rfind("plots: ", 0) == 0 &&
         line.find(" is not installed for ") != std::string::npos;
}

// One line on stderr for a Python whose check failed: the package's own line when it gave one
// (e.g. no matplotlib, a bad MPLBACKEND), else how the check ended.
void report_unready(const Python& python, const PlotsExit& check, bool checkout) {
  if (!check.signaled && check.status == 2) {
    if (const auto line = last_line(check.output); line.rfind("plots: ", 0) == 0) {
      fmt::print(stderr, "{}\n", line);
      return;
    }
  }
  fmt::print(stderr,
             "offloadbench: cannot draw the plots: {} {} when run as '{} -m plots --check' (set "
             "OFFLOADBENCH_PYTHON to a Python 3 with matplotlib{})\n",
             printable(python.origin), how_it_ended(check), printable(python.path),
             checkout ? ", or run scripts/setup" : "");
}

// The check before anything is written: the first candidate whose `python -m plots --check` says
// "plots: ready". A Python the user named is the only one tried; of the others, one that is missing
// or lacks matplotlib gives way to the next. nullopt after one line on stderr.
std::optional<Python> choose_python(const PlotsHome& home) {
  std::vector<std::string> failures;
  for (const auto& candidate : python_candidates(environment().python.c_str(), home)) {
    const Python python{candidate.path, candidate.origin};
    PlotsExit check;
    try {
      check = run_plots(python, {"--check"}, true);
    } catch (const FileError&) {
      if (candidate.explicit_choice) throw;  // its own line: cannot run OFFLOADBENCH_PYTHON='…'
      failures.push_back(fmt::format("{} cannot be started", candidate.origin));
      continue;
    }
    if (ready(check)) return python;
    if (!candidate.explicit_choice && lacks_a_module(check)) {
      failures.push_back(fmt::format("{} has no matplotlib", candidate.origin));
      continue;
    }
    report_unready(python, check, home.checkout);
    return std::nullopt;
  }
  fmt::print(stderr, "{}\n", no_matplotlib_line(failures, home.checkout));
  return std::nullopt;
}

}  // namespace

namespace {
// Ctrl-C reaches the whole foreground group: the plots package stops cleanly on its own (exit 130,
// its partial charts removed) while this process waits for it instead of dying first, as system(3)
// does.
struct IgnoreInterrupt {
  struct sigaction previous {};
  IgnoreInterrupt() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ignore, &previous);
  }
  ~IgnoreInterrupt() { sigaction(SIGINT, &previous, nullptr); }
  IgnoreInterrupt(const IgnoreInterrupt&) = delete;
  IgnoreInterrupt& operator=(const IgnoreInterrupt&) = delete;
};
}  // namespace

PlotsExit run_plots(const Python& python, std::vector<std::string> args, bool capture,
                    const std::string& module) {
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
      throw std::runtime_error(
          fmt::format("cannot make a pipe for the plots: {}", std::strerror(errno)));
    }
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1],
                                     STDOUT_FILENO);  // dup2 clears close-on-exec
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  }
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults,
            SIGINT);  // an ignored signal stays ignored across exec: the child gets its default
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  const IgnoreInterrupt ignore_interrupt;
  pid_t pid = 0;
  const int err =
      posix_spawnp(&pid, python.path.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  PlotsExit result;
  if (capture) {
    close(pipe_fds[1]);
    if (err == 0) {
      char buffer[4096];
      for (;;) {
        const ssize_t got = read(pipe_fds[0], buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        if (result.output.size() < (64u << 10))
          result.output.append(buffer, static_cast<std::size_t>(got));
      }
    }
    close(pipe_fds[0]);
  }
  if (err != 0)
    throw FileError(
        fmt::format("cannot run {} for the plots: {} (set OFFLOADBENCH_PYTHON to a Python with "
                    "matplotlib)",
                    python.origin, std::strerror(err)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw std::runtime_error(
          fmt::format("waiting for {}: {}", python.origin, std::strerror(errno)));
  if (WIFEXITED(status)) {
    result.status = WEXITSTATUS(status);
  } else {
    result.signaled = true;
    result.status = 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  return result;
}

std::optional<Python> plots_python() {
  const auto home =
      find_plots_home(program_dir(), OFFLOADBENCH_INSTALLED_ROOT, OFFLOADBENCH_SOURCE_DIR);
  if (!home)
    throw FileError(fmt::format(
        "cannot find the plots package: neither '{}' beside this program nor '{}' holds "
        "plots/ (reinstall offloadbench)",
        OFFLOADBENCH_INSTALLED_ROOT, OFFLOADBENCH_SOURCE_DIR));
  // Its package first on the module path; and not the current folder, whose own plots/ or
  // matplotlib.py would otherwise shadow them (PYTHONSAFEPATH, Python 3.11; older ones ignore it).
  std::string path = home->root.string();
  if (const auto& old = environment().pythonpath; !old.empty()) path += fmt::format(":{}", old);
  setenv("PYTHONPATH", path.c_str(), 1);
  setenv("PYTHONSAFEPATH", "1", 1);
  // An installed package's folder belongs to the package manager: no __pycache__ left in it.
  if (!home->checkout) setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
  return choose_python(*home);
}

int plots_exit(const Python& python, const PlotsExit& drawn) {
  if (!drawn.signaled && drawn.status <= 2) return drawn.status;
  if (!drawn.signaled && drawn.status == 128 + SIGINT)
    return drawn.status;  // Ctrl-C: the package said so
  if (drawn.signaled && (drawn.status == 128 + SIGINT || drawn.status == 128 + SIGTERM))
    return drawn.status;
  fmt::print(stderr, "offloadbench: the plots stopped: {} {}\n", printable(python.origin),
             how_it_ended(drawn));
  return 1;
}

namespace {
std::uintmax_t inode_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)
             ? static_cast<std::uintmax_t>(st.st_ino)
             : 0;
}
}  // namespace

ExpectedOutput::ExpectedOutput(std::string p) : path(std::move(p)), inode_before(inode_of(path)) {}

int plots_exit(const Python& python, const PlotsExit& drawn, const ExpectedOutput& expected) {
  const int status = plots_exit(python, drawn);
  if (status != 0) return status;
  const auto inode = inode_of(expected.path);
  if (inode != 0 && inode != expected.inode_before) return 0;
  fmt::print(
      stderr,
      "offloadbench: the plots ended with status 0 but wrote no {} ({} as '{}' is not the plots "
      "package's Python: set OFFLOADBENCH_PYTHON to a Python 3 with matplotlib)\n",
      printable(expected.path), printable(python.origin), printable(python.path));
  return 1;
}

}  // namespace offloadbench::cli
