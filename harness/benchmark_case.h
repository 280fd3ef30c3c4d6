// How a benchmark family declares its cases and reports from inside one.
// A case is a Google Benchmark registration plus its parameters as data (`fields`), which the
// results file carries as row fields so nothing downstream ever parses a benchmark name.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "harness/measure.h"

namespace offloadbench {

enum class Clock {
  device_events,  // UseManualTime: the case calls SetIterationTime with CUDA-event time
  host_wall,      // UseRealTime: wall clock around the loop body (CPU cases, host-side costs)
  // UseManualTime with the measurement's own clock (Measurement::wall): a call times only part of
  // itself (the pinning inside a call that also maps, touches, unpins and unmaps its memory).
  case_clock,
};

struct CaseSpec {
  std::string name;    // "transfer/h2d/pinned/16MiB"; unique
  std::string family;  // the suite name
  nlohmann::json
      fields;  // every parameter: {"direction": "h2d", "bytes": 16777216, "device": 0, ...}
  Clock clock = Clock::host_wall;
  std::function<void(benchmark::State&)> run;  // set by measured_case(); raw only in tests
  // > 0: this case's own minimum (measured) time per repetition, in place of --benchmark_min_time.
  // For cases whose every sample costs far more wall time than it measures (cold GPU samples).
  double min_time_s = 0;
};

// A case timed by the measurement layer (harness/measure.h): `setup` runs once per case.
CaseSpec measured_case(std::string name, std::string family, nlohmann::json fields, Clock clock,
                       CaseSetup setup);

// Registers with Google Benchmark. An exception escaping `run` (a CudaError, std::bad_alloc) is
// caught and recorded as a skip with its text, so one failing case never ends the run.
void register_case(CaseSpec spec);

// The fields a case was registered with (family included); null when the name is unknown.
nlohmann::json case_fields(const std::string& name);

// The name Google Benchmark gives the case's rows: its own, decorated with its clock
// ("…/real_time").
std::string reported_name(const CaseSpec& spec);

// Every case registered so far, in registration order.
const std::vector<CaseSpec>& registered_cases();

// Forget every registered case (tests register several suites in one process).
void clear_registered_cases();

// ---- what the first process of a run learned (run --processes) ----
// Its iteration rows by case name. Cases registered afterwards run that row's iteration count
// (Google Benchmark's search for one is skipped: in a one-process run every repetition after the
// first reuses the count the first found, and this does the same across processes), and the
// measurement layer reuses the row's calls per batch. Families may read a row for what a case chose
// by timing at set-up.
void set_calibration_rows(std::map<std::string, nlohmann::json> rows);
const nlohmann::json* calibration_row(const std::string& case_name);  // null: none
// Whether a case checks every output element: true unless this is such a later process, which runs
// the code the first one checked, on the same inputs, and may check a sample spread over the
// output.
bool check_outputs_in_full();

// ---- inside a case ----
// Skip (cannot run here: no GPU, does not fit). The row keeps the reason, the run goes on.
void skip_case(benchmark::State& state, const std::string& reason);
// The output check failed: the row is marked invalid and the run exits non-zero at the end.
void invalidate_case(benchmark::State& state, const std::string& what_was_wrong);

// How a row was marked by skip_case or invalidate_case. Google Benchmark carries only the error
// text of a stopped run; the reporter looks the mark up by case and text (it never parses the
// text).
enum class RowMarkKind { skipped, invalid };
struct RowMark {
  RowMarkKind kind;
  std::string reason;
};
// The mark recorded for `case_name` with Google Benchmark error text `error_message`, if any.
std::optional<RowMark> row_mark(const std::string& case_name, const std::string& error_message);

// Used by the measurement layer (harness/measure.h). The output check passed (call once, outside
// the timed region).
void mark_validated(benchmark::State& state);
// A physical limit this case's bytes_per_second must not exceed (PCIe link, DRAM peak). A row above
// it is kept but marked invalid with above_ceiling: that is how a missing synchronize shows itself.
void set_bytes_ceiling(benchmark::State& state, double bytes_per_second);
void set_flops_ceiling(benchmark::State& state, double flop_per_second);

// The words Google Benchmark's error text starts with, for people reading its console output.
inline constexpr const char* kSkipPrefix = "skipped: ";
inline constexpr const char* kInvalidPrefix = "invalid: ";

}  // namespace offloadbench
