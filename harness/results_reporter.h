// Receives Google Benchmark's runs and keeps the results file current: after a benchmark finishes
// the whole file is rewritten atomically (marked incomplete), at most once a second so that a sweep
// of thousands of quick cases is not dominated by rewriting, so a crash leaves a valid file holding
// everything that finished up to a second before; Ctrl-C loses nothing (finish() from another
// thread writes at once). Nothing is written before the first case finishes: an existing file at
// the path stays until there is something to replace it with. finish() marks it complete. A skipped
// case is recorded once, not once per repetition: its repetitions all say the same.
#pragma once
#include <chrono>
#include <mutex>
#include <set>
#include <string>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "harness/gpu_clocks.h"

namespace offloadbench {

// One Google Benchmark run as its JSON reporter writes it, plus offloadbench's fields:
// the case's registered parameters, validated, skipped/skip_reason, above_ceiling.
nlohmann::json run_to_row(const benchmark::BenchmarkReporter::Run& run);

class ResultsReporter : public benchmark::BenchmarkReporter {
 public:
  // `context` holds offloadbench's context; Google Benchmark's own fields are added to it.
  ResultsReporter(std::string path, nlohmann::json context, int expected_cases, bool show_progress,
                  std::chrono::milliseconds write_interval = std::chrono::seconds(1));

  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override {}

  // Marks the file complete (or records why it stopped) and writes it a last time. Safe to call
  // from another thread while Google Benchmark runs (the Ctrl-C watcher does).
  void finish(const std::string& stopped_because = "");

  // Reads the SM clock for each GPU row as it is reported (right after its repetition when Google
  // Benchmark interleaves repetitions, as `ab` asks): the row gets sm_clock_mhz, clock_throttled,
  // clocks_locked. Without a reader (the default) rows carry no clock.
  void set_clock_reader(SmClockReader reader) { clock_reader_ = std::move(reader); }
  // With a sampler, a GPU row's clock is the summary of the busy readings taken while its case ran
  // (summarize_readings; clock_samples says how many), the reader's reading only when there are
  // none.
  void set_clock_sampler(std::shared_ptr<ClockSampler> sampler) {
    clock_sampler_ = std::move(sampler);
  }

  int invalid_rows() const { return invalid_rows_; }
  bool started() const { return started_run_; }  // Google Benchmark reported its context
  const nlohmann::json& document() const { return doc_; }

 private:
  void write();
  void write_if_due();
  void print_progress(const Run& run);

  std::string path_;
  nlohmann::json doc_;
  int expected_cases_;
  int finished_cases_ = 0;
  bool show_progress_;
  int invalid_rows_ = 0;
  bool started_run_ = false;
  std::string last_case_;
  SmClockReader clock_reader_;
  std::shared_ptr<ClockSampler> clock_sampler_;
  std::set<std::string> skipped_cases_;  // cases whose one skipped row is already recorded
  std::mutex mutex_;                     // doc_ and the file: ReportRuns vs finish() on Ctrl-C
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_write_{};
  std::chrono::milliseconds write_interval_;
};

}  // namespace offloadbench
