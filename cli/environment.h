// Every environment variable offloadbench reads, declared once: its name, the option it stands for,
// how its value is parsed and its one-line doc (the idea of Google Benchmark's BM_DEFINE_*, which
// keeps a flag and its variable in one declaration). main() parses them all once, before a command
// runs; a bad value is bad input (exit 2). The layers below receive the parsed values
// (set_injected_slowdown, set_cpu_gemm_pin) and read no environment themselves, except TMPDIR,
// which harness/results reads where it makes a temporary folder.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/injected_slowdown.h"
#include "kernels/cpu_gemm.h"

namespace offloadbench::cli {

// What the variables say, parsed. Unset and set-but-empty are the same: the default.
struct EnvironmentSettings {
  std::optional<int> remeasure_unsteady;      // OFFLOADBENCH_REMEASURE_UNSTEADY
  CpuGemmPin cpu_gemm;                        // OFFLOADBENCH_CPU_GEMM
  std::vector<SlowdownRule> inject_slowdown;  // OFFLOADBENCH_INJECT_SLOWDOWN
  std::string python;                         // OFFLOADBENCH_PYTHON
  std::string pythonpath;                     // PYTHONPATH, kept after the plots package's path
};

// One variable. `parse` stores a set, non-empty value in the settings or throws
// std::invalid_argument with what is wrong, a phrase that follows "NAME='value' " ("is not one of
// …"); none for a variable offloadbench only passes on or sets.
struct EnvironmentVariable {
  std::string name;
  std::string option;  // the command-line option it is the default of, or ""
  std::string doc;     // one line, for --help
  std::function<void(const std::string& value, EnvironmentSettings& into)> parse;
};

// The registry, in --help's order: offloadbench's own variables, then the standard ones it reads.
const std::vector<EnvironmentVariable>& environment_variables();

// A variable's value, or nullopt when it is unset (getenv; tests pass a table).
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvironmentLookup process_environment();

// Parses every variable; throws UsageError "NAME='value' <what is wrong>" for the first bad one.
EnvironmentSettings parse_environment(const EnvironmentLookup& lookup);

// Parses the process's environment, keeps the result for environment() and hands the harness and
// the MLP suite their values. main() calls it once, before any OpenMP region: libgomp starts its
// threads at the first one, so a thread count it would crash on must be refused before (parsing
// runs no OpenMP).
void load_environment();
const EnvironmentSettings& environment();

// The registry's variables that are set (non-empty), with their values, in registry order.
std::vector<std::pair<std::string, std::string>> environment_in_use(
    const EnvironmentLookup& lookup);

// --help's closing section: "Environment:" and one line per variable (name, option, doc).
std::string environment_help();

}  // namespace offloadbench::cli
