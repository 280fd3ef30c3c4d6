#include "harness/cli/rerun.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/results.h"

namespace offloadbench::cli {

std::string exact_name_filter(const std::vector<std::string>& names) {
  std::string filter = "^(";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) filter += '|';
    for (char c : names[i]) {
      if (std::strchr("\\^$.|?*+()[]{}", c)) filter += '\\';
      filter += c;
    }
  }
  return filter + ")$";
}

namespace {
bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

std::vector<std::string> rerun_arguments_or_throw(const nlohmann::json& context, const std::vector<std::string>& names,
                                                  const std::string& out) {
  const auto& ob = context.at("offloadbench");
  std::string suites;
  for (const auto& s : ob.at("suites")) suites += (suites.empty() ? "" : ",") + s.get<std::string>();
  std::vector<std::string> args = {"run", "--suite", suites, ob.value("mode", std::string("quick")) == "full" ? "--full" : "--quick",
                                   "--device", ob.value("devices", std::string("0")),
                                   "--repetitions", std::to_string(ob.value("repetitions", 5)), "--out", out};
  // --sizes and the Google Benchmark flags come from the original command line.
  const auto command_line = ob.value("command_line", std::vector<std::string>{});
  std::vector<std::string> benchmark_flags;
  bool after_separator = false;
  for (std::size_t i = 0; i < command_line.size(); ++i) {
    const auto& a = command_line[i];
    if (after_separator) {
      if (!starts_with(a, "--benchmark_filter") && !starts_with(a, "--benchmark_out")) benchmark_flags.push_back(a);
    } else if (a == "--") {
      after_separator = true;
    } else if (a == "--sizes" && i + 1 < command_line.size()) {
      args.insert(args.end(), {"--sizes", command_line[i + 1]});
    } else if (starts_with(a, "--sizes=")) {
      args.insert(args.end(), {"--sizes", a.substr(8)});
    }
  }
  args.push_back("--");
  args.insert(args.end(), benchmark_flags.begin(), benchmark_flags.end());
  args.push_back("--benchmark_filter=" + exact_name_filter(names));
  return args;
}
}  // namespace

std::vector<std::string> rerun_arguments(const nlohmann::json& context, const std::vector<std::string>& names,
                                         const std::string& out) {
  try {
    return rerun_arguments_or_throw(context, names, out);
  } catch (const nlohmann::json::exception& e) {
    throw ResultsError(fmt::format("NEW's context does not say how it was run ({})", e.what()));
  }
}

int run_child(const std::string& executable, const std::vector<std::string>& arguments) {
  std::vector<std::string> argv_text = {executable};
  argv_text.insert(argv_text.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("cannot start '{}': {}", executable, std::strerror(errno)));
  if (pid == 0) {
    dup2(STDERR_FILENO, STDOUT_FILENO);
    execv(executable.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(fmt::format("waiting for '{}': {}", executable, std::strerror(errno)));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace offloadbench::cli
