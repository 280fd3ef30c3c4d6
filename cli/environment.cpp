#include "cli/environment.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "benchmarks/mlp/mlp_cases.h"
#include "cli/commands.h"
#include "harness/system_info.h"

namespace offloadbench::cli {

namespace {

using Parse = std::function<void(const std::string&, EnvironmentSettings&)>;

// The typed parsers a declaration picks from.

// A whole number in [low, high], digits only ("+5", " 5" and "5x" are refused).
Parse whole_number(int low, int high, const std::string& what,
                   std::optional<int> EnvironmentSettings::*field) {
  return [=](const std::string& value, EnvironmentSettings& into) {
    const bool digits =
        value.size() <= 9 && std::all_of(value.begin(), value.end(),
                                         [](unsigned char c) { return c >= '0' && c <= '9'; });
    const long number = digits ? std::stol(value) : -1;
    if (!digits || number < low || number > high)
      throw std::invalid_argument(fmt::format("is not {} ({} to {})", what, low, high));
    into.*field = static_cast<int>(number);
  };
}

// One of a list of names (case-sensitive), each standing for a value; `choices` is asked when a
// value is parsed, as what is on offer may depend on the build. `note` follows the list in the
// error.
template <typename T>
Parse one_of(std::function<std::vector<std::pair<std::string, T>>()> choices,
             T EnvironmentSettings::*field, std::function<std::string()> note = {}) {
  return [=](const std::string& value, EnvironmentSettings& into) {
    std::string names;
    for (const auto& [name, meaning] : choices()) {
      if (name == value) {
        into.*field = meaning;
        return;
      }
      names += (names.empty() ? "" : ", ") + name;
    }
    throw std::invalid_argument(fmt::format("is not one of {}{}", names, note ? note() : ""));
  };
}

// Text taken as it is: a path or a program name, which whoever uses it checks.
Parse text(std::string EnvironmentSettings::*field) {
  return [=](const std::string& value, EnvironmentSettings& into) { into.*field = value; };
}

std::vector<std::pair<std::string, CpuGemmPin>> cpu_gemm_choices() {
  std::vector<std::pair<std::string, CpuGemmPin>> choices;
  for (auto library : cpu_gemm_libraries())
    choices.push_back({to_string(library), {true, library, false}});
  if (cpu_gemm_available(CpuGemmLibrary::onednn))
    choices.push_back({"oneDNN-packed", {true, CpuGemmLibrary::onednn, true}});
  return choices;
}

void parse_slowdown(const std::string& value, EnvironmentSettings& into) {
  into.inject_slowdown = parse_injected_slowdown(value);
}

// OpenMP's nesting levels ("8" or "8,2"): refused only when asking for more threads than
// omp_num_threads_problem accepts. Nothing is kept: libgomp reads the variable itself.
void check_omp_num_threads(const std::string& value, EnvironmentSettings&) {
  if (auto problem = omp_num_threads_problem(value.c_str(), std::thread::hardware_concurrency());
      !problem.empty())
    throw std::invalid_argument(problem);
}

EnvironmentSettings& loaded() {
  static EnvironmentSettings settings;
  return settings;
}

}  // namespace

const std::vector<EnvironmentVariable>& environment_variables() {
  static const std::vector<EnvironmentVariable> variables = {
      {"OFFLOADBENCH_REMEASURE_UNSTEADY", "--remeasure-unsteady",
       "default (run), 0 to 1000 repetitions",
       whole_number(0, 1000, "a number of repetitions", &EnvironmentSettings::remeasure_unsteady)},
      {"OFFLOADBENCH_CPU_GEMM", "", "pins the MLP's CPU GEMMs: OpenBLAS, oneDNN or oneDNN-packed",
       one_of<CpuGemmPin>(cpu_gemm_choices, &EnvironmentSettings::cpu_gemm,
                          [] {
                            return cpu_gemm_available(CpuGemmLibrary::onednn)
                                       ? ""
                                       : " (this build has no oneDNN)";
                          })},
      {"OFFLOADBENCH_INJECT_SLOWDOWN", "",
       "slows cases for the self-test: <substring>=<percent>[,...]", parse_slowdown},
      {"OFFLOADBENCH_PYTHON", "", "the Python 3 with matplotlib that plot and dashboard run",
       text(&EnvironmentSettings::python)},
      {"OFFLOADBENCH_LAYOUT_PAD",
       "",
       "set by run for each process it starts: 0-4095 bytes of padding",
       {}},
      {"OMP_NUM_THREADS", "", "read: CPU threads; at most 4 per hardware thread",
       check_omp_num_threads},
      {"TMPDIR", "", "read: where ab and plot make their temporary files", {}},
      {"PYTHONPATH", "", "read: kept after the plots package's path for its Python",
       text(&EnvironmentSettings::pythonpath)},
  };
  return variables;
}

EnvironmentLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value =
        std::getenv(name.c_str());  // the program's only getenv (tests/python/test_layout.py)
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
}

EnvironmentSettings parse_environment(const EnvironmentLookup& lookup) {
  EnvironmentSettings settings;
  for (const auto& variable : environment_variables()) {
    const auto value = lookup(variable.name);
    if (!variable.parse || !value || value->empty()) continue;
    try {
      variable.parse(*value, settings);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("{}='{}' {}", variable.name, *value, e.what()));
    }
  }
  return settings;
}

void load_environment() {
  loaded() = parse_environment(process_environment());
  set_injected_slowdown(loaded().inject_slowdown);
  set_cpu_gemm_pin(loaded().cpu_gemm);
}

const EnvironmentSettings& environment() { return loaded(); }

std::vector<std::pair<std::string, std::string>> environment_in_use(
    const EnvironmentLookup& lookup) {
  std::vector<std::pair<std::string, std::string>> in_use;
  for (const auto& variable : environment_variables())
    if (const auto value = lookup(variable.name); value && !value->empty())
      in_use.emplace_back(variable.name, *value);
  return in_use;
}

std::string environment_help() {
  std::size_t width = 0;
  for (const auto& variable : environment_variables())
    width = std::max(width, variable.name.size());
  std::string help = "Environment:";
  for (const auto& variable : environment_variables())
    help += fmt::format("\n  {:<{}}  {}{}", variable.name, width,
                        variable.option.empty() ? "" : variable.option + " ", variable.doc);
  return help;
}

}  // namespace offloadbench::cli
