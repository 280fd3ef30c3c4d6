#include "benchmarks/cli/child_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/results/files.h"

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

int run_child(const std::string& executable, const std::vector<std::string>& arguments, const std::string& log_path) {
  std::vector<std::string> argv_text = {executable};
  argv_text.insert(argv_text.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Created here, not in the child, so that a path we may not use is an error that names it.
  const int log = log_path.empty() ? -1 : create_new_file(log_path);
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    if (log >= 0) close(log);
    throw std::runtime_error(fmt::format("cannot start '{}': {}", executable, std::strerror(err)));
  }
  if (pid == 0) {
    dup2(log >= 0 ? log : STDERR_FILENO, STDOUT_FILENO);
    if (log >= 0) dup2(log, STDERR_FILENO);
    execv(executable.c_str(), argv.data());
    _exit(127);
  }
  if (log >= 0) close(log);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(fmt::format("waiting for '{}': {}", executable, std::strerror(errno)));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace offloadbench::cli
