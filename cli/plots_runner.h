// Running the plots package (`python -m plots…`) for `plot` and `dashboard`: finding the package
// (the installed copy beside the program, else the checkout's: plots_home.h) and a Python that can
// load matplotlib ($OFFLOADBENCH_PYTHON, else the checkout's .venv, else python3), checked with
// `python -m plots --check` before anything is written; when none can, one line says what to
// install or which variable to fix, exit 2.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace offloadbench::cli {

struct Python {
  std::string path;
  std::string origin;  // how it was chosen, for messages: "OFFLOADBENCH_PYTHON='…'", …
};

struct PlotsExit {
  int status = 0;  // the exit status, or 128 + the signal that ended it
  bool signaled = false;
  std::string output;  // stdout and stderr together, when captured
};

// Runs `python -m MODULE ARGS…` (the plots package by default). With `capture`, its stdout and
// stderr are collected (at most 64 KiB kept) instead of reaching the terminal. Throws FileError
// when it cannot be started at all.
PlotsExit run_plots(const Python& python, std::vector<std::string> args, bool capture,
                    const std::string& module = "plots");

// The plots package first on the module path, then the Python that can draw with it; nullopt after
// one line on stderr. Throws FileError when no plots package can be found.
std::optional<Python> plots_python();

// 0, or 1 or 2 after the package's own one-line message; anything else gets a line of its own.
int plots_exit(const Python& python, const PlotsExit& drawn);

// What a run of the package must leave behind: `path` made anew (renamed into place, so a new
// inode). An OFFLOADBENCH_PYTHON that says it drew but wrote nothing must not pass for a success.
struct ExpectedOutput {
  explicit ExpectedOutput(std::string path);  // notes what is at `path` now
  std::string path;
  std::uintmax_t inode_before = 0;
};

// plots_exit(python, drawn), and 1 with one line when it is 0 but `expected` was not written.
int plots_exit(const Python& python, const PlotsExit& drawn, const ExpectedOutput& expected);

}  // namespace offloadbench::cli
