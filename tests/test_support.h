// Shared by the tests: run whatever cases are registered through the real reporter into a
// temporary results file and return the parsed document.
#pragma once
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "harness/benchmark_case.h"
#include "harness/injected_slowdown.h"
#include "harness/results/results.h"
#include "harness/results_reporter.h"
#include "harness/run_context.h"

namespace offloadbench::testing {

// A run as Google Benchmark reports one, every field set: Run() leaves family_index,
// per_family_instance_index, repetitions and repetition_index uninitialised, and a reporter that
// writes them out then writes whatever the stack held.
inline benchmark::BenchmarkReporter::Run synthetic_run(const std::string& function_name) {
  benchmark::BenchmarkReporter::Run run;
  run.run_name.function_name = function_name;
  run.family_index = 0;
  run.per_family_instance_index = 0;
  run.repetitions = 1;
  run.repetition_index = 0;
  run.iterations = 10;
  run.real_accumulated_time = 1e-3;
  run.cpu_accumulated_time = 1e-3;
  return run;
}

inline std::string temp_path(const std::string& stem) {
  return (std::filesystem::temp_directory_path() /
          (stem + "_" + std::to_string(::getpid()) + ".json"))
      .string();
}

// Runs the registered cases matching `filter` with a tiny time budget and `repetitions`.
inline nlohmann::json run_registered(const std::string& filter = ".", int repetitions = 1,
                                     double min_time = 0.001,
                                     std::vector<std::string> more_flags = {}) {
  std::vector<std::string> args = {"tests", "--benchmark_filter=" + filter,
                                   "--benchmark_repetitions=" + std::to_string(repetitions),
                                   "--benchmark_min_time=" + std::to_string(min_time)};
  args.insert(args.end(), more_flags.begin(), more_flags.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  // Google Benchmark keeps argv[0] (Context::executable_name) after Initialize returns, and the
  // results reporter writes it into every later file: it must outlive `args`.
  static char program_name[] = "tests";
  argv[0] = program_name;
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  const auto path = temp_path("ob_test_run");
  RunDescription description{{"test"}, "quick", repetitions, "0", args};
  ResultsReporter reporter(path, make_run_context(description), 0, false);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.finish();
  auto doc = load_results(path);
  std::filesystem::remove(path);
  return doc;
}

// Per-repetition rows whose registered field `key` equals `value`.
inline std::vector<nlohmann::json> rows_where(const nlohmann::json& doc, const std::string& key,
                                              const nlohmann::json& value) {
  std::vector<nlohmann::json> rows;
  for (const auto& row : iteration_rows(doc))
    if (row.contains(key) && row[key] == value) rows.push_back(row);
  return rows;
}

// Sets the injected slowdown's rules, as OFFLOADBENCH_INJECT_SLOWDOWN's value (nullopt: none), for
// the life of the object, then restores the rules before.
class ScopedSlowdown {
 public:
  explicit ScopedSlowdown(const std::optional<std::string>& value) : old_(injected_slowdown()) {
    set_injected_slowdown(value ? parse_injected_slowdown(*value) : std::vector<SlowdownRule>{});
  }
  ~ScopedSlowdown() { set_injected_slowdown(old_); }
  ScopedSlowdown(const ScopedSlowdown&) = delete;
  ScopedSlowdown& operator=(const ScopedSlowdown&) = delete;

 private:
  std::vector<SlowdownRule> old_;
};

}  // namespace offloadbench::testing
