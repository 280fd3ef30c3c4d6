// The measurement layer's host half: the set-up case, the one timing loop, rates and marks.
// Nothing here knows CUDA; the device timer is an interface (harness/cuda/event_timer.h), so the
// CPU tests reach every line of it with a fake clock.
#include "harness/measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "harness/benchmark_case.h"
#include "harness/host_blocks.h"
#include "harness/injected_slowdown.h"

namespace offloadbench {

namespace {

class SteadyWallClock : public WallClock {
 public:
  double now_seconds() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

// The one case whose setup is held: Google Benchmark runs a case's calls and repetitions one after
// another, so holding one bounds memory to the largest case's and frees it when the next begins.
struct SetUpCase {
  std::string name;
  MeasuredCase measured;
  std::string invalid_reason;             // verify's finding, the same for every call
  bool checked_by_first_process = false;  // verify was left to the run's first process
};

std::unique_ptr<SetUpCase>& set_up_case() {
  static std::unique_ptr<SetUpCase> current;
  return current;
}

// Host batches last at least this long, so the clock reads and the loop between batches stay a
// negligible part of what is timed (a 4 KiB memcpy takes ~0.1 µs; two clock reads ~0.04 µs).
constexpr double kMinHostBatchSeconds = 50e-6;
constexpr int kMaxHostBatch = 1 << 16;

// One untimed batch through the case's clock, so first-call costs (page faults, module loading,
// cuBLAS heuristics, clocks ramping) stay out of the timed batches. A host case that left its batch
// size to the layer gets one here, from what the warm-up calls took.
void warm_up(Measurement& m) {
  WallClock& wall = m.wall ? *m.wall : steady_wall_clock();
  const int calls = std::max(m.warmup_calls, 1);
  if (m.before_batch) m.before_batch();
  if (m.device) {
    m.device->prepare_batch();
    m.device->begin_batch();
  }
  const double start = wall.now_seconds();
  for (int i = 0; i < calls; ++i) m.call();
  const double call_seconds = (wall.now_seconds() - start) / calls;
  if (m.device) {
    m.device->end_batch();
    m.device->wait(nullptr);
  }
  if (m.calls_per_batch > 0) return;
  m.calls_per_batch = 1;
  if (!m.device && call_seconds < kMinHostBatchSeconds)
    m.calls_per_batch = call_seconds > 0
                            ? static_cast<int>(std::min<double>(
                                  std::ceil(kMinHostBatchSeconds / call_seconds), kMaxHostBatch))
                            : kMaxHostBatch;
}

// The batch size the layer chose for each case, kept for the process: with random interleaving a
// case is set up again for every repetition, and a batch chosen anew from a new warm-up would round
// KeepRunningBatch's iteration count differently — Google Benchmark requires one count for all the
// repetitions of a case (it aborts in ComputeStats otherwise).
std::map<std::string, int>& chosen_batches() {
  static std::map<std::string, int> chosen;
  return chosen;
}

// A later process of a run (the first process's row of the case is at hand) does not check again a
// host case whose verify only checks, whose output the first process found right, and whose call
// took 10 ms or more there: it runs the code the first process checked on the same inputs. Nor does
// it warm such a case up: its arrays are touched at set-up and the thread pool is running, so what
// a warm-up removes (µs) is far below the call's noise. That one untimed run cost as much as the
// case's measuring.
constexpr double kCheckedOnceCallSeconds = 10e-3;
bool checked_by_first_process(const Measurement& m, const nlohmann::json* earlier) {
  if (!earlier || m.device || !m.verify || !m.verify_only_checks) return false;
  const auto call_seconds = earlier->find("host_time_s");  // null where a row had no finite time
  return earlier->value("validated", nlohmann::json()) == true && call_seconds != earlier->end() &&
         call_seconds->is_number() && call_seconds->get<double>() >= kCheckedOnceCallSeconds;
}

// Setup, verify and warm-up of `name`, once; a throw in any of them skips the case with its text.
SetUpCase& prepare(const std::string& name, const CaseSetup& setup) {
  auto& current = set_up_case();
  if (current && current->name == name) return *current;
  current.reset();            // the previous case's buffers go before this case's are made
  static std::string family;  // host blocks are kept between one family's cases only
  const auto fields = case_fields(name);
  const std::string now = fields.is_object() ? fields.value("family", "") : "";
  if (now != family) release_kept_host_blocks();
  family = now;
  auto made = std::make_unique<SetUpCase>();
  made->name = name;
  try {
    made->measured = setup();
    Measurement& m = made->measured.measurement;
    if (made->measured.skip_reason.empty()) {
      const auto* earlier = calibration_row(name);  // the first process's row, in a later process
      made->checked_by_first_process = checked_by_first_process(m, earlier);
      if (m.verify && !made->checked_by_first_process) made->invalid_reason = m.verify();
      if (made->invalid_reason.empty()) {
        const auto chosen = chosen_batches().find(name);
        if (m.calls_per_batch <= 0 && chosen != chosen_batches().end())
          m.calls_per_batch = chosen->second;
        else if (m.calls_per_batch <= 0 && earlier)
          m.calls_per_batch = earlier->value("calls_per_batch", 0);
        // The warm-up's one call only repeats verify's when the batch needs no timing to choose it
        // (a later process's warm-ups cost as much as its measuring of the largest cases); a long
        // case whose check was left to the first process needs none (above).
        const bool warmed = !m.device && m.calls_per_batch > 0 && m.warmup_calls <= 1 &&
                            (m.verify_warms_up || made->checked_by_first_process);
        if (!warmed) warm_up(m);
        chosen_batches()[name] = m.calls_per_batch;
        for (auto& side : m.side_rates) side.seconds = side.time();
      }
    }
  } catch (const std::exception& e) {
    // The device timer first: it opens a gate a throw left closed and waits on the case's stream,
    // which the calls' captures may be the last to hold (member-wise assignment frees them first).
    made->measured.measurement.device.reset();
    made->measured = MeasuredCase::skip(e.what());
  }
  current = std::move(made);
  return *current;
}

// A case's host work before a batch, outside every clock: a device batch starts after it; a host
// batch's clock (and Google Benchmark's own, whose real_time host rates are divided by) restarts.
void run_untimed(benchmark::State& state, Measurement& m, WallClock& wall,
                 double& host_batch_start) {
  if (m.device) return m.before_batch();
  state.PauseTiming();
  m.before_batch();
  state.ResumeTiming();
  host_batch_start = wall.now_seconds();
}

// The timing loop of the project: batches of calls between the clock's start and end.
Totals time_batches(benchmark::State& state, const std::string& case_name, Measurement& m) {
  WallClock& wall = m.wall ? *m.wall : steady_wall_clock();
  const int batch = std::max(1, m.calls_per_batch);
  Totals t;
  // Host batches are timed back to back, each from the previous one's end, so their sum is the
  // loop's whole wall time, as Google Benchmark's own real time measures it.
  double host_batch_start = wall.now_seconds();
  // The regression self-test (lab/tools/regression-selftest) may ask for a calibrated slowdown of
  // this case: on the host clock a busy-wait after every call, on a device timer a delay kernel per
  // batch.
  const double slowdown = injected_slowdown_fraction(case_name);
  SlowdownInjector injected(m.device ? 0 : slowdown);
  DeviceSlowdownInjector* delayed =
      m.device && slowdown > 0 ? &device_slowdown_injector(case_name, slowdown) : nullptr;
  if (delayed &&
      !delayed->calibrated()) {  // once per case and process: an untimed batch to take a share of
    if (m.before_batch) m.before_batch();
    delayed->measured(batch,
                      time_once(*m.device,
                                [&] {
                                  for (int i = 0; i < batch; ++i) m.call();
                                }),
                      0);
  }
  while (state.KeepRunningBatch(batch)) {
    if (state.error_occurred()) continue;  // lets KeepRunningBatch end the loop
    if (m.before_batch) run_untimed(state, m, wall, host_batch_start);
    if (m.device) m.device->prepare_batch();
    const double start = m.device ? wall.now_seconds() : host_batch_start;
    if (m.device) m.device->begin_batch();
    for (int i = 0; i < batch; ++i) {
      const InjectedSlowdown slowed(
          injected);  // the regression self-test's busy-wait, inside the window
      m.call();
    }
    double seconds = 0;
    if (m.device) {
      const double delay = delayed ? delayed->delay_for(batch) : 0;
      if (delay > 0) m.device->delay_batch(delay);
      m.device->end_batch();
      const double enqueued = wall.now_seconds();
      const DeviceBatch measured = m.device->wait(m.while_waiting);
      const double done = wall.now_seconds();
      if (measured.gate_timed_out) {
        invalidate_case(
            state,
            fmt::format("the gate timed out on batch {}: its calls were not timed", t.batches + 1));
        continue;
      }
      seconds = measured.seconds;
      if (delayed) delayed->measured(batch, seconds, delay);
      t.device_seconds += seconds;
      if (t.lane_seconds.size() < measured.lane_seconds.size())
        t.lane_seconds.resize(measured.lane_seconds.size());
      for (std::size_t i = 0; i < measured.lane_seconds.size(); ++i)
        t.lane_seconds[i] += measured.lane_seconds[i];
      t.enqueue_seconds += enqueued - start;
      t.host_seconds += done - start;
    } else {
      const double end = wall.now_seconds();
      seconds = end - start;
      t.host_seconds += seconds;
      host_batch_start = end;
    }
    state.SetIterationTime(seconds);  // read only by cases registered with manual time
    t.seconds += seconds;
    t.calls += batch;
    ++t.batches;
  }
  return t;
}

}  // namespace

WallClock& steady_wall_clock() {
  static SteadyWallClock clock;
  return clock;
}

int calls_per_batch_moving(double bytes, int min_calls, int max_calls) {
  constexpr double kBatchBytes = 64.0 * (1 << 20);
  const double calls = std::floor(kBatchBytes / std::max(bytes, 1.0));
  return static_cast<int>(
      std::clamp(calls, static_cast<double>(min_calls), static_cast<double>(max_calls)));
}

double wall_seconds(const std::function<void()>& work, WallClock& wall) {
  const double start = wall.now_seconds();
  work();
  return wall.now_seconds() - start;
}

double time_once(DeviceTimer& timer, const std::function<void()>& enqueue) {
  timer.prepare_batch();
  timer.begin_batch();
  enqueue();
  timer.end_batch();
  return timer.wait(nullptr).seconds;
}

double median_of(int runs, const std::function<double()>& sample) {
  std::vector<double> samples;
  for (int i = 0; i < std::max(runs, 1); ++i) samples.push_back(sample());
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

double median_wall_seconds(int runs, const std::function<void()>& work, WallClock& wall) {
  return median_of(runs, [&] { return wall_seconds(work, wall); });
}

void release_case_setup(const std::string& case_name) {
  auto& current = set_up_case();
  if (current && (case_name.empty() || current->name == case_name)) current.reset();
}

void report_rates(benchmark::State& state, const Work& work, const Totals& totals,
                  bool has_device) {
  if (totals.calls <= 0 || totals.seconds <= 0) return;
  const auto calls = static_cast<double>(totals.calls);
  // Work done in all: Google Benchmark divides a rate counter by the same seconds its real_time
  // comes from (the case's clock for device cases, whose batch times the layer hands it; its own
  // wall clock around the same loop for host cases), so a rate and real_time always agree.
  const auto rate = [&](double per_call) {
    return benchmark::Counter(per_call * calls, benchmark::Counter::kIsRate);
  };
  if (work.bytes > 0) state.counters["bytes_per_second"] = rate(work.bytes);
  if (work.flops > 0) state.counters["flop_per_second"] = rate(work.flops);
  if (work.items > 0 && !work.items_rate.empty())
    state.counters[work.items_rate] = rate(work.items);
  if (work.latency_steps > 0)
    state.counters["latency_ns"] = totals.seconds / calls / work.latency_steps * 1e9;
  state.counters["host_time_s"] = totals.host_seconds / calls;
  if (has_device) {
    state.counters["device_time_s"] = totals.device_seconds / calls;
    state.counters["host_enqueue_time_s"] = totals.enqueue_seconds / calls;
  }
}

double Totals::side_bytes_per_second(const std::string& rate_counter) const {
  for (const auto& side : side_rates)
    if (side.rate_counter == rate_counter) return side.bytes_per_second();
  return 0;
}

void report_side_rates(benchmark::State& state, const std::vector<SideRate>& side_rates) {
  for (const auto& side : side_rates) {
    if (!side.time_counter.empty()) state.counters[side.time_counter] = side.seconds;
    state.counters[side.rate_counter] = side.bytes_per_second();
  }
}

void measure_case(benchmark::State& state, const std::string& case_name, const CaseSetup& setup,
                  bool manual_time) {
  SetUpCase& set_up = prepare(case_name, setup);
  if (!set_up.measured.skip_reason.empty()) return skip_case(state, set_up.measured.skip_reason);
  if (!set_up.invalid_reason.empty()) return invalidate_case(state, set_up.invalid_reason);
  Measurement& m = set_up.measured.measurement;
  if (m.device && !manual_time)
    return invalidate_case(state,
                           "timed by a device timer but registered with the host wall clock");
  if (m.verify) mark_validated(state);
  if (set_up.checked_by_first_process) state.counters["checked_by_first_process"] = 1;

  Totals totals = time_batches(state, case_name, m);
  if (state.error_occurred()) return;
  report_rates(state, m.work, totals, m.device != nullptr);
  report_side_rates(state, m.side_rates);
  totals.side_rates = m.side_rates;
  state.counters["calls_per_batch"] = std::max(1, m.calls_per_batch);
  set_bytes_ceiling(state, m.bytes_ceiling);
  set_flops_ceiling(state, m.flops_ceiling);
  if (m.report) m.report(state, totals);
}

}  // namespace offloadbench
