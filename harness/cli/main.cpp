// offloadbench: when does moving work to the GPU pay off, and what does the move cost?
#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/results.h"

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
      add_compare_command(app),
      add_history_command(app),
  };
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
  } catch (const std::exception& e) {
    fmt::print(stderr, "offloadbench: error: {}\n", e.what());
    return 1;
  }
  return 2;
}
