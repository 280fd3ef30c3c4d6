// A calibrated slowdown for the regression self-test (scripts/regression-selftest): with
// OFFLOADBENCH_INJECT_SLOWDOWN="<substring>=<percent>[,…]", every timed call of a case whose name
// contains <substring> busy-waits for <percent> of that call's own body time, inside the timed region.
// The measured code path gets slower for real; no number is ever edited. Unset, it costs one branch.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace offloadbench {

inline constexpr const char* kInjectSlowdownVariable = "OFFLOADBENCH_INJECT_SLOWDOWN";

// The slowdown for `case_name` as a fraction (5% → 0.05): the first entry whose substring the name
// contains, 0 when none does or the variable is unset. The variable is read once per process.
double injected_slowdown_fraction(const std::string& case_name);

// Throws std::invalid_argument with a one-line message when the variable is set but malformed
// (run calls this before measuring anything, so a typo is bad input, exit 2).
void check_injected_slowdown_setting();

// Busy-waits (never sleeps: a sleeping thread would free the core and change what is measured).
void spin_for_seconds(double seconds);

// The cheapest steady tick counter: the invariant TSC on x86 (~10 ns to read; steady_clock::now()
// costs ~250 ns on a VM, which for a 1 µs call would inject far more than asked), else steady_clock.
#if defined(__x86_64__) || defined(__i386__)
inline std::uint64_t spin_ticks() { return __rdtsc(); }
#else
inline std::uint64_t spin_ticks() {
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}
#endif

// The slowdown of one case, made before its timed loop. It keeps the shortest call seen so far: a
// call that took much longer was preempted (waiting, not working), and spinning for a fraction of
// the wait would turn waiting into work — on a loaded machine that injects several times what was asked.
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
// of the call (two tick reads per call and one per spin step; nothing at all when the fraction is 0).
class InjectedSlowdown {
 public:
  explicit InjectedSlowdown(SlowdownInjector& injector)
      : injector_(injector), start_(injector.fraction() > 0 ? spin_ticks() : 0) {}
  ~InjectedSlowdown() {
    if (!(injector_.fraction() > 0)) return;
    const std::uint64_t now = spin_ticks();
    const std::uint64_t until = now + injector_.spin_after(now - start_);
    while (spin_ticks() < until) {
    }
  }
  InjectedSlowdown(const InjectedSlowdown&) = delete;
  InjectedSlowdown& operator=(const InjectedSlowdown&) = delete;

 private:
  SlowdownInjector& injector_;
  std::uint64_t start_;
};

// Parses a value of the variable into (substring, fraction) entries; throws std::invalid_argument.
struct SlowdownRule {
  std::string substring;
  double fraction = 0;
};
std::vector<SlowdownRule> parse_injected_slowdown(const std::string& text);
// The fraction of the first rule whose substring `case_name` contains; 0 when none does.
double slowdown_for(const std::vector<SlowdownRule>& rules, const std::string& case_name);

}  // namespace offloadbench
