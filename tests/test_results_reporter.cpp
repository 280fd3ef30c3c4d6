// The reporter turns Google Benchmark runs into rows with offloadbench's fields, and keeps the
// file valid after every benchmark.
#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>

#include "harness/benchmark_case.h"
#include "harness/results_reporter.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace {
void register_synthetic_cases() {
  clear_registered_cases();
  register_case({"synthetic/good",
                 "synthetic",
                 {{"bytes", 1024}, {"threads", 99}},
                 Clock::host_wall,
                 [](benchmark::State& state) {
                   mark_validated(state);
                   double total = 0;
                   for (auto _ : state) total += 1e-6;
                   state.counters["device_time_s"] =
                       benchmark::Counter(total, benchmark::Counter::kAvgIterations);
                   state.SetBytesProcessed(state.iterations() * 1024);
                 }});
  register_case(
      {"synthetic/skipped", "synthetic", {}, Clock::host_wall, [](benchmark::State& state) {
         skip_case(state, "no usable GPU: test");
       }});
  register_case(
      {"synthetic/invalid", "synthetic", {}, Clock::host_wall, [](benchmark::State& state) {
         invalidate_case(state, "byte 7 differs");
       }});
  register_case({"synthetic/above_ceiling",
                 "synthetic",
                 {},
                 Clock::device_events,
                 [](benchmark::State& state) {
                   mark_validated(state);
                   for (auto _ : state) state.SetIterationTime(1e-3);
                   state.SetBytesProcessed(state.iterations() * 1'000'000'000);  // 1 TB/s
                   set_bytes_ceiling(state, 64e9);
                 }});
}

nlohmann::json only_row(const nlohmann::json& doc, const std::string& prefix) {
  auto rows = iteration_rows(doc);
  for (const auto& row : rows)
    if (row["name"].get<std::string>().rfind(prefix, 0) == 0) return row;
  return nullptr;
}
}  // namespace

TEST(ResultsReporter, RowsCarryFieldsValidationAndSkipReasons) {
  register_synthetic_cases();
  const auto doc = testing::run_registered("synthetic/");

  const auto good = only_row(doc, "synthetic/good");
  ASSERT_FALSE(good.is_null());
  EXPECT_EQ(good["family"], "synthetic");
  EXPECT_EQ(good["bytes"], 1024);
  EXPECT_EQ(good["threads"], 1) << "a registered field must never replace Google Benchmark's own";
  EXPECT_EQ(good["validated"], true);
  EXPECT_EQ(good["skipped"], false);
  EXPECT_NEAR(good["device_time_s"].get<double>(), 1e-6, 1e-12);
  EXPECT_GT(good["bytes_per_second"].get<double>(), 0);
  EXPECT_GT(good["iterations"].get<double>(), 0);

  const auto skipped = only_row(doc, "synthetic/skipped");
  EXPECT_EQ(skipped["skipped"], true);
  EXPECT_EQ(skipped["skip_reason"], "no usable GPU: test");
  EXPECT_TRUE(skipped["validated"].is_null());

  const auto invalid = only_row(doc, "synthetic/invalid");
  EXPECT_EQ(invalid["skipped"], false);
  EXPECT_EQ(invalid["validated"], false);
  EXPECT_EQ(invalid["invalid_reason"], "byte 7 differs");

  const auto above = only_row(doc, "synthetic/above_ceiling");
  EXPECT_EQ(above["above_ceiling"], true);
  EXPECT_EQ(above["validated"], false);
  EXPECT_NE(above["suspect_reason"].get<std::string>().find("ceiling"), std::string::npos);

  EXPECT_EQ(doc["context"]["offloadbench"]["incomplete"], false);
  EXPECT_TRUE(doc["context"].contains("machine_fingerprint"));
  EXPECT_TRUE(doc["context"].contains("num_cpus")) << "Google Benchmark's own context is kept";
}

TEST(ResultsReporter, FileOnDiskIsValidAndIncompleteAfterEveryBenchmark) {
  clear_registered_cases();
  const auto path = testing::temp_path("ob_interrupted");
  RunDescription description{{"test"}, "quick", 1, "0", {}};
  ResultsReporter reporter(path, make_run_context(description), 2, false,
                           std::chrono::milliseconds(0));
  reporter.ReportContext(benchmark::BenchmarkReporter::Context{});
  auto run = testing::synthetic_run("synthetic/first");
  reporter.ReportRuns({run});

  // This is what a run killed here leaves behind.
  auto on_disk = load_results(path);
  EXPECT_EQ(on_disk["context"]["offloadbench"]["incomplete"], true);
  ASSERT_EQ(on_disk["benchmarks"].size(), 1u);
  EXPECT_EQ(on_disk["benchmarks"][0]["name"], "synthetic/first");

  reporter.finish("failure: test");
  on_disk = load_results(path);
  EXPECT_EQ(on_disk["context"]["offloadbench"]["incomplete"], true);
  EXPECT_EQ(on_disk["context"]["offloadbench"]["stopped_because"], "failure: test");
  std::filesystem::remove(path);
}

}  // namespace offloadbench

namespace offloadbench {

TEST(ResultsReporter, AnExceptionInACaseBecomesASkipWithItsText) {
  clear_registered_cases();
  register_case(
      {"synthetic/throws", "synthetic", {}, Clock::host_wall, [](benchmark::State& state) {
         for (auto _ : state) throw std::runtime_error("x.cu:12: cudaMalloc failed: out of memory");
       }});
  register_case({"synthetic/after", "synthetic", {}, Clock::host_wall, [](benchmark::State& state) {
                   for (auto _ : state) benchmark::DoNotOptimize(state.iterations());
                 }});
  const auto doc = testing::run_registered("synthetic/");
  const auto rows = iteration_rows(doc);
  ASSERT_EQ(rows.size(), 2u) << "the run goes on after the failing case";
  EXPECT_EQ(rows[0]["skipped"], true);
  EXPECT_EQ(rows[0]["skip_reason"], "x.cu:12: cudaMalloc failed: out of memory");
  EXPECT_EQ(rows[1]["skipped"], false);
}

// The cv aggregate is stddev/mean of the repetitions' times, a fraction: it was stored scaled by
// the time unit and divided by the iterations (cv 0.43 written as 143482).
TEST(ResultsReporter, CvAggregateIsTheFractionOfTheRepetitions) {
  clear_registered_cases();
  register_case(
      {"synthetic/uneven", "synthetic", {}, Clock::device_events, [](benchmark::State& state) {
         static int repetition = 0;
         const double seconds = (repetition++ % 2 ? 3e-3 : 1e-3);  // times differ by 3×
         for (auto _ : state) state.SetIterationTime(seconds);
       }});
  const auto doc = testing::run_registered("synthetic/uneven", 4);
  std::vector<double> times;
  for (const auto& row : iteration_rows(doc)) times.push_back(row["real_time"].get<double>());
  ASSERT_EQ(times.size(), 4u);
  double mean = 0, squares = 0;
  for (double t : times) mean += t / times.size();
  for (double t : times) squares += (t - mean) * (t - mean);
  const double cv =
      std::sqrt(squares / (times.size() - 1)) / mean;  // Google Benchmark's sample stddev
  bool found = false;
  for (const auto& row : doc["benchmarks"])
    if (row.value("aggregate_name", "") == "cv") {
      found = true;
      EXPECT_EQ(row["aggregate_unit"], "percentage");
      EXPECT_NEAR(row["real_time"].get<double>(), cv, 1e-6) << row.dump();
      EXPECT_GT(cv, 0.4) << "the repetitions were meant to differ";
    }
  EXPECT_TRUE(found) << "Google Benchmark writes a cv aggregate with repetitions";
}

}  // namespace offloadbench
