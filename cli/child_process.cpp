#include "cli/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "cli/interrupt.h"
#include "harness/results/files.h"

namespace offloadbench::cli {

namespace {

using Clock = std::chrono::steady_clock;

// What a stopped child gets to end by itself (offloadbench run writes what finished and exits)
// before its group gets SIGKILL.
constexpr auto stop_grace = std::chrono::seconds(2);

// A descriptor that becomes readable when `pid` ends (Linux 5.3+), or -1 where the kernel has none:
// the waits then look every 50 ms.
int exit_descriptor(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  return -1;
#endif
}

// True once `pid` has ended and is reaped, its wait status in `status`.
bool reaped(pid_t pid, int& status) {
  pid_t got = 0;
  while ((got = waitpid(pid, &status, WNOHANG)) < 0 && errno == EINTR) {}
  if (got < 0)
    throw std::runtime_error(fmt::format("waiting for process {}: {}", pid, std::strerror(errno)));
  return got == pid;
}

// Sleeps until `exit_fd` or `wake_fd` (each -1 for none) is readable, or `until`.
void nap(int exit_fd, int wake_fd, Clock::time_point until) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
  const long long most = exit_fd < 0 ? 50 : INT_MAX;
  pollfd fds[2];
  nfds_t n = 0;
  for (int fd : {exit_fd, wake_fd})
    if (fd >= 0) fds[n++] = {fd, POLLIN, 0};
  poll(fds, n,
       static_cast<int>(std::clamp<long long>(left, 0, most)));  // EINTR: the caller looks again
}

// Whether a process of `group` still runs. kill() counts zombies too, and a member orphaned by the
// child's end stays one until init reaps it (late, where init is a container's agent): /proc tells.
bool group_runs(pid_t group) {
  if (kill(-group, 0) != 0) return errno != ESRCH;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    if (!std::getline(stat, text)) continue;  // not a process, or gone
    const auto fields = text.rfind(')');      // after "pid (command)": state, ppid, pgrp
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (fields == std::string::npos ||
        std::sscanf(text.c_str() + fields + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3)
      continue;
    if (pgrp == group && state != 'Z') return true;
  }
  return static_cast<bool>(error);  // without /proc, assume it does
}

// Ends the child's process group: `signal`, then SIGKILL to whatever is left after the grace.
// Returns the child's wait status once it is reaped.
int stop_group(pid_t pid, int exit_fd, int signal) {
  kill(-pid, signal);
  int status = 0;
  bool child_done = false;
  const auto until = Clock::now() + stop_grace;
  while (Clock::now() < until) {
    child_done = child_done || reaped(pid, status);
    if (child_done && !group_runs(pid)) return status;
    nap(child_done ? -1 : exit_fd, -1, until);
  }
  kill(-pid, SIGKILL);
  while (!child_done && waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return status;
}

int exit_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  return 128 + (WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0);
}

}  // namespace

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

ChildEnd run_child(const std::string& executable, const std::vector<std::string>& arguments,
                   const std::string& log_path, double time_limit_s, StopSignals* stop) {
  ChildEnd end;
  if (stop && (end.stop_signal = stop->signal())) return end;
  std::vector<std::string> argv_text = {executable};
  argv_text.insert(argv_text.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Created here, not in the child, so that a path we may not use is an error that names it.
  const int log = log_path.empty() ? -1 : create_new_file(log_path);
  const int no_input = open("/dev/null", O_RDONLY | O_CLOEXEC);
  // SIGINT and SIGTERM are held back across fork: `stop`'s handlers must not run in the child.
  sigset_t stop_signals, mask;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &mask);
  const pid_t parent = getpid();
  const auto started = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    // A group of its own, so that stopping it stops what it started too; and a parent killed
    // outright (SIGKILL, a crash) takes the child with it.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    if (stop) {  // what exec would make of a handler
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
    }
    pthread_sigmask(SIG_SETMASK, &mask, nullptr);
    if (no_input >= 0) dup2(no_input, STDIN_FILENO);
    dup2(log >= 0 ? log : STDERR_FILENO, STDOUT_FILENO);
    if (log >= 0) dup2(log, STDERR_FILENO);
    execv(executable.c_str(), argv.data());
    _exit(127);
  }
  const int fork_error = errno;
  if (pid > 0) setpgid(pid, pid);  // as the child does: whichever runs first
  pthread_sigmask(SIG_SETMASK, &mask, nullptr);
  if (log >= 0) close(log);
  if (no_input >= 0) close(no_input);
  if (pid < 0)
    throw std::runtime_error(
        fmt::format("cannot start '{}': {}", executable, std::strerror(fork_error)));

  if (stop) stop->set_child_group(pid);
  const int exit_fd = exit_descriptor(pid);
  const auto deadline = time_limit_s > 0
                            ? started + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(time_limit_s))
                            : Clock::time_point::max();
  int status = 0;
  while (!reaped(pid, status)) {
    if (stop && (end.stop_signal = stop->signal())) {
      status = stop_group(pid, exit_fd, end.stop_signal);
      break;
    }
    if (Clock::now() >= deadline) {
      end.timed_out = true;
      status = stop_group(pid, exit_fd, SIGTERM);
      break;
    }
    nap(exit_fd, stop ? stop->fd() : -1, deadline);
  }
  if (stop) stop->set_child_group(0);
  if (exit_fd >= 0) close(exit_fd);
  end.status = exit_status(status);
  end.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return end;
}

std::string last_log_line(const std::string& log) {
  std::ifstream in(log, std::ios::binary | std::ios::ate);
  const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : 0;
  std::string tail(static_cast<std::size_t>(std::min<std::streamoff>(size, 4096)), '\0');
  in.seekg(size - static_cast<std::streamoff>(tail.size()));
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  tail.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  while (!tail.empty() && std::isspace(static_cast<unsigned char>(tail.back()))) tail.pop_back();
  const auto start = tail.find_last_of("\r\n");
  std::string line = start == std::string::npos ? tail : tail.substr(start + 1);
  return line.size() > 200 ? line.substr(0, 200) + "…" : line;
}

std::vector<std::string> child_run_arguments(const ChildRun& run) {
  std::vector<std::string> args = {
      "run", "--suite", run.suites, run.full ? "--full" : "--quick", "--device", run.device};
  if (!run.host_numa.empty()) args.insert(args.end(), {"--host-numa", run.host_numa});
  if (!run.sizes.empty()) args.insert(args.end(), {"--sizes", run.sizes});
  if (!run.refine.empty()) args.insert(args.end(), {"--refine-at", run.refine});
  if (!run.calibrated_by.empty()) args.insert(args.end(), {"--calibrated-by", run.calibrated_by});
  // A child measures what it is asked, no more: whoever started it decides what to measure again,
  // and analyses and summarises what all of them measured.
  args.insert(args.end(), {"--repetitions", std::to_string(run.repetitions), "--remeasure-unsteady",
                           "0", "--refine-crossovers", "0", "--out", run.out});
  if (run.measure_only) args.push_back("--measure-only");
  if (!run.benchmark_flags.empty()) {
    args.push_back("--");
    args.insert(args.end(), run.benchmark_flags.begin(), run.benchmark_flags.end());
  }
  return args;
}

ChildEnd start_child_run(const std::string& program, const ChildRun& run,
                         const std::string& log_path, double time_limit_s, StopSignals* stop,
                         std::mt19937_64& rng) {
  std::uniform_int_distribution<std::size_t> pad(0, 4095);
  setenv("OFFLOADBENCH_LAYOUT_PAD", std::string(pad(rng), 'x').c_str(), 1);
  return run_child(program, child_run_arguments(run), log_path, time_limit_s, stop);
}

}  // namespace offloadbench::cli
