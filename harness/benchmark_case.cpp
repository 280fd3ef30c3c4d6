#include "harness/benchmark_case.h"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <utility>

namespace offloadbench {

namespace {
struct Registry {
  std::vector<CaseSpec> cases;
  std::map<std::string, std::size_t> by_name;
  std::map<std::pair<std::string, std::string>, RowMark> marks;  // (case, error text) -> mark
};
std::map<std::string, nlohmann::json>& calibration() {
  static std::map<std::string, nlohmann::json> rows;
  return rows;
}
Registry& registry() {
  static Registry r;
  return r;
}
const nlohmann::json* calibration_row_of(const CaseSpec& spec) {
  const auto& rows = calibration();
  const auto it = rows.find(reported_name(spec));
  return it == rows.end() ? nullptr : &it->second;
}
// The case whose function Google Benchmark is running (it runs one at a time, on this thread).
thread_local const std::string* running_case = nullptr;

void mark_row(benchmark::State& state, RowMarkKind kind, const char* prefix,
              const std::string& reason) {
  const std::string text = prefix + reason;
  if (running_case) registry().marks[{*running_case, text}] = RowMark{kind, reason};
  state.SkipWithError(text.c_str());
}
}  // namespace

CaseSpec measured_case(std::string name, std::string family, nlohmann::json fields, Clock clock,
                       CaseSetup setup) {
  const bool manual_time = clock != Clock::host_wall;
  CaseSpec spec{name, std::move(family), std::move(fields), clock, {}};
  spec.run = [name, setup = std::move(setup), manual_time](benchmark::State& state) {
    measure_case(state, name, setup, manual_time);
  };
  return spec;
}

void register_case(CaseSpec spec) {
  auto& r = registry();
  if (r.by_name.count(spec.name))
    throw std::logic_error("benchmark case registered twice: " + spec.name);
  spec.fields["family"] = spec.family;
  // A CUDA error or failed allocation inside a case skips that case with the error's text; the run
  // goes on. (Google Benchmark accepts an early return once an error is set, even mid-loop.)
  auto guarded = [run = spec.run, name = spec.name](benchmark::State& state) {
    running_case = &name;
    try {
      run(state);
    } catch (const std::exception& e) {
      release_case_setup(name);  // whatever it holds may be half-made
      if (!state.error_occurred()) skip_case(state, e.what());
    }
    running_case = nullptr;
  };
  auto* bench = benchmark::RegisterBenchmark(spec.name.c_str(), guarded);
  bench->Unit(benchmark::kMicrosecond);
  if (spec.clock != Clock::host_wall)
    bench->UseManualTime();
  else
    bench->UseRealTime();
  const auto* earlier = calibration_row_of(spec);
  const auto iterations = earlier ? earlier->value("iterations", std::int64_t{0}) : 0;
  if (iterations > 0)
    bench->Iterations(iterations);  // Google Benchmark allows one of the two
  else if (spec.min_time_s > 0)
    bench->MinTime(spec.min_time_s);
  r.by_name[spec.name] = r.cases.size();
  r.cases.push_back(std::move(spec));
}

void set_calibration_rows(std::map<std::string, nlohmann::json> rows) {
  calibration() = std::move(rows);
}

const nlohmann::json* calibration_row(const std::string& case_name) {
  const auto& r = registry();
  const auto it = r.by_name.find(case_name);
  return it == r.by_name.end() ? nullptr : calibration_row_of(r.cases[it->second]);
}

std::string reported_name(const CaseSpec& spec) {
  return spec.name + (spec.clock != Clock::host_wall ? "/manual_time" : "/real_time");
}

bool check_outputs_in_full() { return calibration().empty(); }

nlohmann::json case_fields(const std::string& name) {
  const auto& r = registry();
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nlohmann::json(nullptr) : r.cases[it->second].fields;
}

const std::vector<CaseSpec>& registered_cases() { return registry().cases; }

void clear_registered_cases() {
  release_case_setup();
  benchmark::ClearRegisteredBenchmarks();
  registry() = Registry{};
}

void skip_case(benchmark::State& state, const std::string& reason) {
  mark_row(state, RowMarkKind::skipped, kSkipPrefix, reason);
}

void invalidate_case(benchmark::State& state, const std::string& what_was_wrong) {
  mark_row(state, RowMarkKind::invalid, kInvalidPrefix, what_was_wrong);
}

std::optional<RowMark> row_mark(const std::string& case_name, const std::string& error_message) {
  const auto& marks = registry().marks;
  auto it = marks.find({case_name, error_message});
  if (it == marks.end()) return std::nullopt;
  return it->second;
}

void mark_validated(benchmark::State& state) { state.counters["validated"] = 1; }

void set_bytes_ceiling(benchmark::State& state, double bytes_per_second) {
  if (bytes_per_second > 0) state.counters["ceiling_bytes_per_second"] = bytes_per_second;
}

void set_flops_ceiling(benchmark::State& state, double flop_per_second) {
  if (flop_per_second > 0) state.counters["ceiling_flop_per_second"] = flop_per_second;
}

}  // namespace offloadbench
