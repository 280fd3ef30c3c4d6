// Ctrl-C (SIGINT) and SIGTERM during `run`: the first one calls `on_signal` on a watcher thread (not
// in the signal handler, where writing a file is not safe) and exits 128 + the signal number, so the
// results file records everything that finished; a second one exits at once.
#pragma once
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

}  // namespace offloadbench::cli
