#include "benchmarks/cli/interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <stdexcept>

#include <fmt/format.h>

namespace offloadbench::cli {

namespace {

// The handler may only do async-signal-safe things: it writes the signal number into a pipe that
// the watcher thread reads. One watch at a time (run is the only user), hence file-scope state.
int signal_pipe[2] = {-1, -1};
std::atomic<int> signals_seen{0};
struct sigaction previous_int {}, previous_term {};

void on_signal_handler(int signal) {
  if (signals_seen.fetch_add(1) > 0) _exit(128 + signal);  // the second Ctrl-C: no more waiting
  const unsigned char number = static_cast<unsigned char>(signal);
  [[maybe_unused]] const auto ignored = write(signal_pipe[1], &number, 1);
}

}  // namespace

InterruptWatch::InterruptWatch(std::function<void(int)> on_signal) : on_signal_(std::move(on_signal)) {
  if (pipe2(signal_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(fmt::format("cannot watch for Ctrl-C: {}", std::strerror(errno)));
  signals_seen = 0;
  watcher_ = std::thread([this] {
    unsigned char number = 0;
    ssize_t got = 0;
    while ((got = read(signal_pipe[0], &number, 1)) < 0 && errno == EINTR) {
    }
    if (got != 1) return;  // the pipe closed: the watch ended without a signal
    try {
      on_signal_(number);
    } catch (const std::exception& e) {  // an exception leaving this thread would abort (134), lock left
      try {
        fmt::print(stderr, "\noffloadbench: interrupted, and then: {}\n", e.what());
      } catch (...) {
      }
    } catch (...) {
    }
    _exit(128 + number);
  });
  struct sigaction action {};
  action.sa_handler = on_signal_handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &previous_int);
  sigaction(SIGTERM, &action, &previous_term);
}

InterruptWatch::~InterruptWatch() {
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);
  close(signal_pipe[1]);  // wakes the watcher with end of file
  watcher_.join();
  close(signal_pipe[0]);
  signal_pipe[0] = signal_pipe[1] = -1;
}

}  // namespace offloadbench::cli
