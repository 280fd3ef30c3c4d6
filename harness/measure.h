// The one measurement layer every runner of every family times through (NVBench's measure_cold /
// measure_hot, on Google Benchmark's State). A case's setup runs once per case and returns a
// Measurement: the timed body, the work one call does, a verify step and, for GPU work, a device
// timer. The layer owns the rest: verify and warm-up outside any timed window, batches through
// KeepRunningBatch (so `iterations` counts calls), the clock, the gate check after every batch,
// rates = work per call × calls ÷ seconds, side rates (bytes ÷ seconds of a run timed beside the
// calls, such as a synchronous copy), ceilings, and skip/invalid marks on the row.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

namespace offloadbench {

// What one call of the timed body does; rates are these × calls ÷ seconds. Zero: not reported.
struct Work {
  double bytes = 0;        // counted as the family documents (BabelStream weights; per direction)
  double flops = 0;        // 2·M·N·K per GEMM
  double items = 0;        // e.g. samples of a training step
  std::string items_rate;  // the counter items go to, e.g. "samples_per_second"
  // > 0: dependent steps one call makes (a pointer chase's loads; 1 for a round trip), for cases
  // whose figure is a time, not a rate: the row's latency_ns = seconds per call ÷ latency_steps.
  double latency_steps = 0;
};

// The host's wall clock: steady_clock in runs, a fake in tests.
class WallClock {
 public:
  virtual ~WallClock() = default;
  virtual double now_seconds() = 0;
};
WallClock& steady_wall_clock();

// What a device timer measured for one batch.
struct DeviceBatch {
  double seconds = 0;           // between the batch's start and end, by the device's clock
  bool gate_timed_out = false;  // the gate gave up before it was opened: the batch was not timed
  // With side streams: each stream's own time, from the batch's start to its last call's end (the
  // main stream first), as nvbandwidth times each direction of a bidirectional copy. Empty
  // otherwise.
  std::vector<double> lane_seconds;
};

// Times a batch of calls enqueued on a device stream: CUDA events around a gated batch
// (harness/cuda/event_timer.h), or a fake in tests. Cases without one are timed by the wall clock.
class DeviceTimer {
 public:
  virtual ~DeviceTimer() = default;
  virtual void prepare_batch() {}  // untimed and finished before the batch starts (an L2 flush)
  virtual void begin_batch() = 0;  // closes the gate (when gated) and records the start
  virtual void end_batch() = 0;    // records the end (after joining side streams), opens the gate
  // The regression self-test's slowdown (harness/injected_slowdown.h): the next end_batch first
  // enqueues `seconds` of waiting on the device, after the side streams are joined, so it is timed.
  virtual void delay_batch(double seconds) = 0;
  // Waits for the batch; calls `while_waiting` (when set) until the batch is done.
  virtual DeviceBatch wait(const std::function<void()>& while_waiting) = 0;
};

// A rate measured beside the timed calls, once per case after its warm-up: a synchronous copy by
// the host clock, one direction of a bidirectional pass alone by device events. The runner declares
// what one run moves and how to time it; the layer times it and sets `time_counter` = seconds and
// `rate_counter` = bytes ÷ seconds on every row of the case (after its own rates: a side figure
// of the same name wins).
struct SideRate {
  std::string rate_counter;      // e.g. "host_bytes_per_second"
  std::string time_counter;      // e.g. "host_time_s"; empty: only the rate is reported
  double bytes = 0;              // what one timed run moves
  std::function<double()> time;  // seconds of one run (the runner may take a median of several)
  double seconds = 0;            // what `time` gave: set by the layer
  double bytes_per_second() const { return seconds > 0 ? bytes / seconds : 0; }
};

// Totals over the timed batches of one Google Benchmark call.
struct Totals {
  std::int64_t calls = 0;
  int batches = 0;
  double seconds = 0;         // by the case's clock (device, or wall when it has none)
  double device_seconds = 0;  // device timer only
  double host_seconds = 0;    // wall clock, batch start to the end of the wait
  double enqueue_seconds =
      0;  // wall clock, batch start to the last call's return (device timer only)
  std::vector<SideRate> side_rates;  // the case's side rates, measured
  std::vector<double> lane_seconds;  // per stream, summed over batches (DeviceBatch::lane_seconds)
  // The measured side rate named `rate_counter` (0 when the case has none of that name).
  double side_bytes_per_second(const std::string& rate_counter) const;
};

struct Measurement {
  std::function<void()> call;           // one call: runs (host) or enqueues (device) the work
  Work work;                            // per call
  std::function<std::string()> verify;  // "" when the output is right; never inside a timed window
  // Calls between the clock's start and end; 0: the layer chooses (device: 1; host: enough calls
  // for a batch of at least 50 µs, from the warm-up).
  int calls_per_batch = 0;
  int warmup_calls = 1;  // once per case, after verify
  // verify runs the case's work as a call does (same buffers, threads, pages): a host case whose
  // batch size is already known takes that run as its warm-up instead of making one more call.
  bool verify_warms_up = false;
  // verify only checks: its run leaves nothing the timed calls or the row's counters depend on (no
  // state carried into the calls, nothing recorded for the report), so a later process of a run may
  // leave a long case's check to the first process (harness/measure.cpp: checked_by_first_process).
  bool verify_only_checks = false;
  // Host work before every batch, the warm-up's included (rewriting a buffer the calls consume):
  // it ends before the batch's clock starts (a host-clocked case's timing is paused around it).
  std::function<void()> before_batch;
  std::shared_ptr<DeviceTimer> device;  // null: the wall clock times the batch
  std::function<void()> while_waiting;  // host work done while a device batch runs
  double bytes_ceiling = 0;             // physical limits the rates must not exceed (0: none)
  double flops_ceiling = 0;
  std::vector<SideRate> side_rates;  // measured once per case, after the warm-up
  // Counters that describe the case (calibration, losses, link state), set after every timed call.
  std::function<void(benchmark::State&, const Totals&)> report;
  WallClock* wall = nullptr;  // null: steady_wall_clock()
};

// What a case's setup gives the layer: a measurement, or why the case cannot run here.
struct MeasuredCase {
  Measurement measurement;
  std::string skip_reason;  // not empty: every call of the case skips with it
  static MeasuredCase skip(std::string reason) {
    MeasuredCase c;
    c.skip_reason = std::move(reason);
    return c;
  }
};

using CaseSetup = std::function<MeasuredCase()>;

// The timing loop of the project. Sets up `case_name` on its first call (or after another case
// ran), verifies and warms it up once, then times it. `manual_time` says the case was registered
// with UseManualTime (device timing); a device timer on a wall-clock case marks the row invalid.
void measure_case(benchmark::State& state, const std::string& case_name, const CaseSetup& setup,
                  bool manual_time);

// Tears down the set-up case when it is `case_name` (its repetitions are done), or any ("").
void release_case_setup(const std::string& case_name = "");

// Calls per device batch for calls that each move `bytes`: about 64 MiB a batch, so small calls are
// not all launch latency and large ones few, within [min_calls, max_calls].
int calls_per_batch_moving(double bytes, int min_calls = 1, int max_calls = 64);

// Side measurements a case reports beside its timed calls (a synchronous copy, a pinning call),
// by the same wall clock: seconds `work` takes, and the median of `runs` such samples.
double wall_seconds(const std::function<void()>& work, WallClock& wall = steady_wall_clock());
double median_wall_seconds(int runs, const std::function<void()>& work,
                           WallClock& wall = steady_wall_clock());
// Device seconds of one untimed-by-Google-Benchmark batch: what `enqueue` puts on the timer's
// stream.
double time_once(DeviceTimer& timer, const std::function<void()>& enqueue);
// The median of `runs` samples that time themselves (device-event stage times, for instance).
double median_of(int runs, const std::function<double()>& sample);

// Sets the rates (work per call × calls ÷ seconds), the latency and the per-call times of `totals`
// as counters.
void report_rates(benchmark::State& state, const Work& work, const Totals& totals, bool has_device);
// Sets each side rate's seconds and bytes ÷ seconds as counters.
void report_side_rates(benchmark::State& state, const std::vector<SideRate>& side_rates);

}  // namespace offloadbench
