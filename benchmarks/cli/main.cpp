// offloadbench: when does moving work to the GPU pay off, and what does the move cost?
#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "benchmarks/cli/commands.h"
#include "harness/results/files.h"
#include "harness/results/results.h"

int main(int argc, char** argv) {
  using namespace offloadbench::cli;
  CLI::App app{"offloadbench: when does moving work to the GPU pay off, and what does the move cost?",
               "offloadbench"};
  app.require_subcommand(1);
  std::vector<std::string> command_line(argv, argv + argc);
  std::vector<Command> commands = {
      add_run_command(app, command_line),
      add_list_command(app),
      add_info_command(app),
      add_analyze_command(app),
      add_summary_command(app),
      add_plot_command(app),
      add_compare_command(app),
      add_history_command(app),
      add_ab_command(app, command_line),
      add_export_command(app),
  };
  // CLI11 would only say "a subcommand is required" for a misspelt command; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const auto& command : commands) {
      known |= command.app->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + command.app->get_name();
    }
    if (!known) {
      fmt::print(stderr, "offloadbench: unknown command '{}' (known: {})\n", argv[1], names);
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "offloadbench: {} (see offloadbench --help)\n", e.what());
    return 2;
  }
  try {
    for (auto& command : commands)
      if (command.app->parsed()) return command.execute();
  } catch (const UsageError& e) {
    fmt::print(stderr, "offloadbench: {}\n", e.what());
    return 2;
  } catch (const offloadbench::ResultsError& e) {
    fmt::print(stderr, "offloadbench: {}\n", e.what());
    return 2;
  } catch (const offloadbench::FileError& e) {
    fmt::print(stderr, "offloadbench: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "offloadbench: error: {}\n", e.what());
    return 1;
  }
  return 2;
}
