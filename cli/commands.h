// The offloadbench CLI's subcommands. Each add_* function declares its options on `app` and
// returns the subcommand with the function that runs it; main() dispatches. Exit codes:
// 0 ok, 1 the measured outcome failed (invalid rows, a regression), 2 bad input.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace offloadbench {
struct ReferenceRun;
}

namespace offloadbench::cli {

struct Command {
  CLI::App* app;
  std::function<int()> execute;
};

// Bad input: main() prints "offloadbench: <message>" on one line and exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Command add_run_command(CLI::App& app, const std::vector<std::string>& command_line);
Command add_list_command(CLI::App& app);
Command add_info_command(CLI::App& app);
Command add_analyze_command(CLI::App& app);
Command add_summary_command(CLI::App& app);
Command add_plot_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_history_command(CLI::App& app);
Command add_ab_command(CLI::App& app, const std::vector<std::string>& command_line);
Command add_export_command(CLI::App& app);
Command add_dashboard_command(CLI::App& app);

// For path options: `--json ''` is a mistake (CLI11 would read it as "not given"), a parse error
// (exit 2).
inline CLI::Validator non_empty_path() {
  return CLI::Validator(
      [](std::string& value) { return value.empty() ? std::string("empty path") : std::string(); },
      "PATH");
}

// The reference runs the verdicts compare with by default: results/reference/ of the checkout this
// program was built from (none for an installed copy: `summary --references DIR` names a folder).
const std::vector<offloadbench::ReferenceRun>& default_reference_runs();

// "5%" → 0.05, "0.05" → 0.05; throws UsageError naming `option` for anything else.
double parse_fraction(const std::string& text, const std::string& option);

}  // namespace offloadbench::cli
