// Ctrl-C (SIGINT) and SIGTERM.
// `run` (InterruptWatch): the first one calls `on_signal` on a watcher thread (not in the signal
// handler, where writing a file is not safe) and exits 128 + the signal number, so that the results
// file records everything that finished; a second one exits at once. `ab` (StopSignals): the
// handler only records the signal; the code waiting on a child process sees it, stops the child and
// unwinds, so that every way out removes what ab made.
#pragma once
#include <sys/types.h>

#include <functional>
#include <thread>

namespace offloadbench::cli {

class InterruptWatch {
 public:
  explicit InterruptWatch(std::function<void(int signal)> on_signal);
  ~InterruptWatch();  // restores the previous handlers
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

 private:
  std::function<void(int)> on_signal_;
  std::thread watcher_;
};

// While one exists, SIGINT and SIGTERM are recorded instead of ending the process: signal() says
// which came first, and fd() becomes readable, to wake a poll(). A second signal SIGKILLs the
// process group given to set_child_group (no grace for a child that takes its time to stop); a
// third exits at once. One at a time (ab is the only user), as InterruptWatch.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();  // restores the previous handlers
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  int signal() const;  // 0 until one arrives
  int fd() const;
  void set_child_group(pid_t group);  // 0: none
};

}  // namespace offloadbench::cli
