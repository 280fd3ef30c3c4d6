#include "cli/interrupt.h"

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

// The handlers may only do async-signal-safe things: they write the signal number into a pipe that
// a watcher thread reads or a poll() waits on. One watch at a time, hence file-scope state.
int signal_pipe[2] = {-1, -1};
std::atomic<int> signals_seen{0};
std::atomic<int> first_signal{0};
std::atomic<pid_t> child_group{0};
struct sigaction previous_int {
}, previous_term{};

void on_signal_handler(int signal) {
  if (signals_seen.fetch_add(1) > 0) _exit(128 + signal);  // the second Ctrl-C: no more waiting
  const unsigned char number = static_cast<unsigned char>(signal);
  [[maybe_unused]] const auto ignored = write(signal_pipe[1], &number, 1);
}

void on_stop_signal(int signal) {
  const int seen = signals_seen.fetch_add(1);
  if (seen == 0) {
    first_signal = signal;
    const unsigned char number = static_cast<unsigned char>(signal);
    [[maybe_unused]] const auto ignored = write(signal_pipe[1], &number, 1);
    return;
  }
  if (const pid_t group = child_group; group > 0) kill(-group, SIGKILL);
  if (seen >= 2) _exit(128 + first_signal);
}

void open_signal_pipe() {
  if (pipe2(signal_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(fmt::format("cannot watch for Ctrl-C: {}", std::strerror(errno)));
  signals_seen = 0;
  first_signal = 0;
}

void handle_signals_with(void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &previous_int);
  sigaction(SIGTERM, &action, &previous_term);
}

void restore_signals() {
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);
}

void close_signal_pipe() {
  for (int& fd : signal_pipe) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

}  // namespace

InterruptWatch::InterruptWatch(std::function<void(int)> on_signal)
    : on_signal_(std::move(on_signal)) {
  open_signal_pipe();
  watcher_ = std::thread([this] {
    unsigned char number = 0;
    ssize_t got = 0;
    while ((got = read(signal_pipe[0], &number, 1)) < 0 && errno == EINTR) {}
    if (got != 1) return;  // the pipe closed: the watch ended without a signal
    try {
      on_signal_(number);
    } catch (
        const std::exception& e) {  // an exception leaving this thread would abort (134), lock left
      try {
        fmt::print(stderr, "\noffloadbench: interrupted, and then: {}\n", e.what());
      } catch (...) {}
    } catch (...) {}
    _exit(128 + number);
  });
  handle_signals_with(on_signal_handler);
}

InterruptWatch::~InterruptWatch() {
  restore_signals();
  close(signal_pipe[1]);  // wakes the watcher with end of file
  signal_pipe[1] = -1;
  watcher_.join();
  close_signal_pipe();
}

StopSignals::StopSignals() {
  open_signal_pipe();
  child_group = 0;
  handle_signals_with(on_stop_signal);
}

StopSignals::~StopSignals() {
  restore_signals();
  child_group = 0;
  close_signal_pipe();
}

int StopSignals::signal() const { return first_signal; }

int StopSignals::fd() const { return signal_pipe[0]; }

void StopSignals::set_child_group(pid_t group) { child_group = group; }

}  // namespace offloadbench::cli
