#include "benchmark_case.h"

#include <map>
#include <stdexcept>

#include "harness/current_case.h"

namespace offloadbench {

namespace {
struct Registry {
  std::vector<CaseSpec> cases;
  std::map<std::string, std::size_t> by_name;
};
Registry& registry() {
  static Registry r;
  return r;
}
std::string& current_case() {
  static thread_local std::string name;
  return name;
}
}  // namespace

const std::string& current_case_name() { return current_case(); }

void register_case(CaseSpec spec) {
  auto& r = registry();
  if (r.by_name.count(spec.name)) throw std::logic_error("benchmark case registered twice: " + spec.name);
  spec.fields["family"] = spec.family;
  // A CUDA error or failed allocation inside a case skips that case with the error's text; the run
  // goes on. (Google Benchmark accepts an early return once an error is set, even mid-loop.)
  auto guarded = [run = spec.run, name = spec.name](benchmark::State& state) {
    current_case() = name;
    try {
      run(state);
    } catch (const std::exception& e) {
      if (!state.error_occurred()) skip_case(state, e.what());
    }
  };
  auto* bench = benchmark::RegisterBenchmark(spec.name.c_str(), guarded);
  bench->Unit(benchmark::kMicrosecond);
  if (spec.clock == Clock::device_events) bench->UseManualTime();
  else bench->UseRealTime();
  if (spec.min_time_s > 0) bench->MinTime(spec.min_time_s);
  r.by_name[spec.name] = r.cases.size();
  r.cases.push_back(std::move(spec));
}

nlohmann::json case_fields(const std::string& name) {
  const auto& r = registry();
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nlohmann::json(nullptr) : r.cases[it->second].fields;
}

const std::vector<CaseSpec>& registered_cases() { return registry().cases; }

void clear_registered_cases() {
  benchmark::ClearRegisteredBenchmarks();
  registry() = Registry{};
}

void skip_case(benchmark::State& state, const std::string& reason) {
  state.SkipWithError((kSkipPrefix + reason).c_str());
}

void invalidate_case(benchmark::State& state, const std::string& what_was_wrong) {
  state.SkipWithError((kInvalidPrefix + what_was_wrong).c_str());
}

void mark_validated(benchmark::State& state) { state.counters["validated"] = 1; }

void report_device_seconds(benchmark::State& state, double total_seconds) {
  state.counters["device_time_s"] = benchmark::Counter(total_seconds, benchmark::Counter::kAvgIterations);
}

void report_host_seconds(benchmark::State& state, double total_seconds) {
  state.counters["host_time_s"] = benchmark::Counter(total_seconds, benchmark::Counter::kAvgIterations);
}

void set_bytes_ceiling(benchmark::State& state, double bytes_per_second) {
  if (bytes_per_second > 0) state.counters["ceiling_bytes_per_second"] = bytes_per_second;
}

void set_flops_ceiling(benchmark::State& state, double flop_per_second) {
  if (flop_per_second > 0) state.counters["ceiling_flop_per_second"] = flop_per_second;
}

void set_flops_per_iteration(benchmark::State& state, double flops) {
  state.counters["flop_per_second"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace offloadbench
