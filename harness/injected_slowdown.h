// A calibrated slowdown for the regression self-test (lab/tools/regression-selftest): with
// OFFLOADBENCH_INJECT_SLOWDOWN="<substring>=<percent>[,…]", a case whose name contains <substring>
// gets slower by <percent> of its own time, inside the timed region: a host-clocked case busy-waits
// after every call; a device-timed case gets a delay kernel on its stream in every batch
// (DeviceSlowdownInjector). The measured code path gets slower for real; no number is ever edited.
// Unset, it costs one branch.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace offloadbench {

struct SlowdownRule {
  std::string substring;
  double fraction = 0;
};
// Parses a value of the variable into (substring, fraction) entries; throws std::invalid_argument
// with a phrase naming the bad entry ("has an entry 'x' that is not …"), which the command line's
// registry of variables (cli/environment.h) puts after the variable's name and value.
std::vector<SlowdownRule> parse_injected_slowdown(const std::string& text);
// The fraction of the first rule whose substring `case_name` contains; 0 when none does.
double slowdown_for(const std::vector<SlowdownRule>& rules, const std::string& case_name);

// The rules of this process: none until the command line sets the variable's (a test sets its own).
void set_injected_slowdown(std::vector<SlowdownRule> rules);
const std::vector<SlowdownRule>& injected_slowdown();
// The slowdown for `case_name` as a fraction (5% → 0.05) under the rules set: slowdown_for.
double injected_slowdown_fraction(const std::string& case_name);

// Busy-waits (never sleeps: a sleeping thread would free the core and change what is measured).
void spin_for_seconds(double seconds);

// The cheapest steady tick counter: the invariant TSC on x86 (~10 ns to read; steady_clock::now()
// costs ~250 ns on a VM, which for a 1 µs call would inject far more than asked), else
// steady_clock.
#if defined(__x86_64__) || defined(__i386__)
inline std::uint64_t spin_ticks() { return __rdtsc(); }
#else
inline std::uint64_t spin_ticks() {
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}
#endif

// The slowdown of one case, made before its timed loop. It keeps the shortest call seen so far: a
// call that took much longer was preempted (waiting, not working), and spinning for a fraction of
// the wait would turn waiting into work — on a loaded machine that injects several times what was
// asked.
class SlowdownInjector {
 public:
  explicit SlowdownInjector(double fraction) : fraction_(fraction) {}
  double fraction() const { return fraction_; }
  // Ticks to spin after a call that took `elapsed` ticks: fraction × the call, capped at twice the
  // shortest call so far.
  std::uint64_t spin_after(std::uint64_t elapsed) {
    if (elapsed < shortest_) shortest_ = elapsed;
    const std::uint64_t counted = elapsed < 2 * shortest_ ? elapsed : 2 * shortest_;
    return static_cast<std::uint64_t>(fraction_ * static_cast<double>(counted));
  }

 private:
  double fraction_;
  std::uint64_t shortest_ = UINT64_MAX / 2;
};

// One timed call: construct at the start of the body; the destructor spins for the injector's share
// of the call (two tick reads per call and one per spin step; nothing at all when the fraction is
// 0).
class InjectedSlowdown {
 public:
  explicit InjectedSlowdown(SlowdownInjector& injector)
      : injector_(injector), start_(injector.fraction() > 0 ? spin_ticks() : 0) {}
  ~InjectedSlowdown() {
    if (!(injector_.fraction() > 0)) return;
    const std::uint64_t now = spin_ticks();
    const std::uint64_t until = now + injector_.spin_after(now - start_);
    while (spin_ticks() < until) {}
  }
  InjectedSlowdown(const InjectedSlowdown&) = delete;
  InjectedSlowdown& operator=(const InjectedSlowdown&) = delete;

 private:
  SlowdownInjector& injector_;
  std::uint64_t start_;
};

// The device side. A device batch is timed by events on its stream, and the copy gate holds that
// stream while the host enqueues, so a host spin would fall outside the timed span: the delay is a
// kernel that waits (__nanosleep) on the batch's stream after its calls and side streams, before
// the end event (DeviceTimer::delay_batch, harness/cuda/injected_delay.cu). Its length must be a
// share of the batch's own device time, known only once the batch is done, so it comes from the
// batches before: their device time less the delay they were given, per call, capped at twice the
// shortest as on the host (a batch that waited on a preempted host's enqueue is not work to scale).
class DeviceSlowdownInjector {
 public:
  explicit DeviceSlowdownInjector(double fraction) : fraction_(fraction) {}
  double fraction() const { return fraction_; }
  // Seconds of delay for a batch of `calls` calls; 0 until a batch has been measured.
  double delay_for(int calls) const;
  bool calibrated() const { return last_per_call_ > 0; }
  // A batch of `calls` calls took `device_seconds` by the device timer, `delay_seconds` of them
  // asked of the delay kernel.
  void measured(int calls, double device_seconds, double delay_seconds);

 private:
  double fraction_;
  double last_per_call_ = 0;      // own device seconds per call of the last batch
  double shortest_per_call_ = 0;  // of all batches so far (0: none yet)
};

// The device injector of `case_name` for the rest of the process, made on first use (and again if
// its fraction changes). It outlives the case's set-up, so Google Benchmark's later calls and
// interleaved repetitions of the case start calibrated; the layer calibrates it once, with one
// untimed batch, before the case's first timed one (a cold case may report its first batch).
DeviceSlowdownInjector& device_slowdown_injector(const std::string& case_name, double fraction);

}  // namespace offloadbench
