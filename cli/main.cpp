// offloadbench: when does moving work to the GPU pay off, and what does the move cost?
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <system_error>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/environment.h"
#include "harness/results/files.h"
#include "harness/results/results.h"
#include "harness/run_context.h"

namespace {

// stdout is block-buffered when redirected, so a full disk or /dev/full shows only when the buffer
// is flushed, after every print "succeeded": check once, after the command, or the results are lost
// with exit 0. The exit codes (docs/command-line.md) have none for this; 1 as for any failure after
// the work was done.
int stdout_failed(int error, int code) {
  fmt::print(stderr, "offloadbench: error: could not write to standard output{}\n",
             error ? fmt::format(": {}", std::strerror(error)) : "");
  return code == 0 ? 1 : code;
}

int with_stdout_checked(int code) {
  errno = 0;
  if (std::fflush(stdout) != 0) return stdout_failed(errno, code);
  std::cout.flush();
  return std::ferror(stdout) || !std::cout.good() ? stdout_failed(0, code) : code;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace offloadbench::cli;
  CLI::App app{
      "offloadbench: when does moving work to the GPU pay off, and what does the move cost?",
      "offloadbench"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version",
      fmt::format("offloadbench {} ({}, {})", offloadbench::offloadbench_version(),
                  offloadbench::offloadbench_git_sha(), offloadbench::offloadbench_build_type()));
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
      add_dashboard_command(app),
  };
  app.footer(
      environment_help());  // after the subcommands: they copy their parent's footer when made
  // CLI11 would only say "a subcommand is required" for a misspelt command; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const auto& command : commands) {
      known |= command.app->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + command.app->get_name();
    }
    if (!known) {
      fmt::print(stderr, "offloadbench: unknown command '{}' (known: {})\n",
                 offloadbench::printable(argv[1]), names);
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) { return app.exit(e); } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) { return app.exit(e); } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "offloadbench: {} (see offloadbench --help)\n",
               offloadbench::printable(e.what()));
    return 2;
  }
  try {
    load_environment();  // every variable, once; OMP_NUM_THREADS before any OpenMP region
  } catch (const UsageError& e) {
    fmt::print(stderr, "offloadbench: {}\n", offloadbench::printable(e.what()));
    return 2;
  }
  try {
    for (auto& command : commands)
      if (command.app->parsed()) return with_stdout_checked(command.execute());
  } catch (const UsageError&
               e) {  // messages quote names and paths from input files: printable, one line
    fmt::print(stderr, "offloadbench: {}\n", offloadbench::printable(e.what()));
    return 2;
  } catch (const offloadbench::ResultsError& e) {
    fmt::print(stderr, "offloadbench: {}\n", offloadbench::printable(e.what()));
    return 2;
  } catch (const offloadbench::FileError& e) {
    fmt::print(stderr, "offloadbench: {}\n", offloadbench::printable(e.what()));
    return 2;
  } catch (const std::exception& e) {
    // fmt::print throws (errno in the code) once stdout's buffer cannot be written: name the
    // output.
    if (std::ferror(stdout)) {
      const auto* system = dynamic_cast<const std::system_error*>(&e);
      return stdout_failed(system ? system->code().value() : 0, 1);
    }
    fmt::print(stderr, "offloadbench: error: {}\n", offloadbench::printable(e.what()));
    return 1;
  }
  return 2;
}
