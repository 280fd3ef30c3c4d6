#include "harness/results_reporter.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>

#include "harness/benchmark_case.h"
#include "harness/measure.h"
#include "harness/results/results.h"
#include "harness/system_info.h"

namespace offloadbench {

namespace {
const char* time_unit_name(benchmark::TimeUnit unit) {
  switch (unit) {
    case benchmark::kNanosecond:
      return "ns";
    case benchmark::kMicrosecond:
      return "us";
    case benchmark::kMillisecond:
      return "ms";
    case benchmark::kSecond:
      return "s";
  }
  return "ns";
}

std::string local_date() {  // Google Benchmark's own "date" format
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S%z", &local);
  std::string s = text;  // +0000 -> +00:00
  if (s.size() > 2) s.insert(s.size() - 2, ":");
  return s;
}

// Reads a ceiling counter and marks the row when its throughput is above it.
void check_ceiling(nlohmann::json& row, const char* rate_key, const char* ceiling_key) {
  if (!row.contains(rate_key) || !row.contains(ceiling_key)) return;
  const double rate = row[rate_key].get<double>();
  const double ceiling = row[ceiling_key].get<double>();
  if (ceiling > 0 && rate > ceiling) {
    row["above_ceiling"] = true;
    row["validated"] = false;
    row["suspect_reason"] =
        fmt::format("{} {:.4g} is above the physical ceiling {:.4g}", rate_key, rate, ceiling);
  }
}
// Device-timed rows: the host took longer to enqueue the work than the device to run it, so the
// figure measures the launch path, not the device (what users of that path get, but say so).
void mark_enqueue_bound(nlohmann::json& row) {
  if (!row.contains("host_enqueue_time_s") || !row.contains("device_time_s")) return;
  row["enqueue_bound"] =
      row["host_enqueue_time_s"].get<double>() > row["device_time_s"].get<double>();
}

// Copy rows: the link's state read right after the copies ran. Below its maximum even under load
// is a slot, riser or BIOS limit (an idle link down-clocking is not: the ceiling is the maximum).
void mark_link_under_load(nlohmann::json& row) {
  if (!row.contains("link_generation_under_load") || !row.contains("link_max_generation")) return;
  const double max_generation = row["link_max_generation"].get<double>();
  const double max_width = row.value("link_max_width", 0.0);
  row["link_below_max_under_load"] =
      (max_generation > 0 && row["link_generation_under_load"].get<double>() < max_generation) ||
      (max_width > 0 && row.value("link_width_under_load", 0.0) < max_width);
}
}  // namespace

nlohmann::json run_to_row(const benchmark::BenchmarkReporter::Run& run) {
  using Run = benchmark::BenchmarkReporter::Run;
  nlohmann::json row;
  // Names as registered: an iteration count fixed by calibration (run --processes) is not part of a
  // case's name ("…/iterations:N" in Google Benchmark's), so every process's rows match.
  auto run_name = run.run_name;
  run_name.iterations.clear();
  row["name"] = run.run_type == Run::RT_Aggregate ? run_name.str() + "_" + run.aggregate_name
                                                  : run_name.str();
  row["family_index"] = run.family_index;
  row["per_family_instance_index"] = run.per_family_instance_index;
  row["run_name"] = run_name.str();
  row["run_type"] = run.run_type == Run::RT_Aggregate ? "aggregate" : "iteration";
  row["repetitions"] = run.repetitions;
  if (run.run_type != Run::RT_Aggregate) row["repetition_index"] = run.repetition_index;
  row["threads"] = run.threads;
  if (run.run_type == Run::RT_Aggregate) {
    row["aggregate_name"] = run.aggregate_name;
    row["aggregate_unit"] = run.aggregate_unit == benchmark::kPercentage ? "percentage" : "time";
  }
  if (run.error_occurred) {
    row["error_occurred"] = true;
    row["error_message"] = run.error_message;
  }
  row["iterations"] = run.iterations;
  // A percentage aggregate (cv) is a fraction, not a time per iteration: Google Benchmark's own
  // JSON writes its accumulated value as is; scaling it by time unit and iterations made cv 0.43
  // read 143482.
  const bool percentage =
      run.run_type == Run::RT_Aggregate && run.aggregate_unit == benchmark::kPercentage;
  row["real_time"] = percentage ? run.real_accumulated_time : run.GetAdjustedRealTime();
  row["cpu_time"] = percentage ? run.cpu_accumulated_time : run.GetAdjustedCPUTime();
  row["time_unit"] = time_unit_name(run.time_unit);
  for (const auto& [key, counter] : run.counters) row[key] = counter.value;
  if (!run.report_label.empty()) row["label"] = run.report_label;

  // offloadbench's fields. Registered parameters never replace Google Benchmark's own keys.
  const auto fields = case_fields(run.run_name.function_name);
  if (fields.is_object())
    for (auto it = fields.begin(); it != fields.end(); ++it)
      if (!row.contains(it.key())) row[it.key()] = it.value();

  row["skipped"] = false;
  nlohmann::json validated = nullptr;  // null: this case has no output to check
  // The counter is 1 on every checked repetition; its stddev or cv aggregate says nothing about it.
  const bool spread_row = run.run_type == Run::RT_Aggregate && run.aggregate_name != "mean" &&
                          run.aggregate_name != "median";
  if (row.contains("validated") && !spread_row) validated = row["validated"].get<double>() >= 1.0;
  if (run.error_occurred) {
    const auto mark = row_mark(run.run_name.function_name, run.error_message);
    if (mark && mark->kind == RowMarkKind::skipped) {
      row["skipped"] = true;
      row["skip_reason"] = mark->reason;
    } else {  // invalid, or an error Google Benchmark itself raised
      validated = false;
      row["invalid_reason"] = mark ? mark->reason : run.error_message;
    }
  }
  row["validated"] = validated;
  // A later process of a run left this case's check to the first process (harness/measure.cpp).
  if (row.contains("checked_by_first_process")) {
    if (spread_row)
      row.erase("checked_by_first_process");
    else
      row["checked_by_first_process"] = true;
  }
  // Aggregates such as stddev or cv are not rates; only means, medians and single runs are checked.
  if (!spread_row && !run.error_occurred) {
    check_ceiling(row, "bytes_per_second", "ceiling_bytes_per_second");
    check_ceiling(row, "flop_per_second", "ceiling_flop_per_second");
    mark_enqueue_bound(row);
    mark_link_under_load(row);
  }
  return row;
}

ResultsReporter::ResultsReporter(std::string path, nlohmann::json context, int expected_cases,
                                 bool show_progress, std::chrono::milliseconds write_interval)
    : path_(std::move(path)),
      expected_cases_(expected_cases),
      show_progress_(show_progress),
      write_interval_(write_interval) {
  doc_["context"] = std::move(context);
  doc_["benchmarks"] = nlohmann::json::array();
}

bool ResultsReporter::ReportContext(const Context& context) {
  started_run_ = true;
  auto& ctx = doc_["context"];
  const auto& cpu = context.cpu_info;
  ctx["date"] = local_date();
  ctx["host_name"] = context.sys_info.name;
  if (Context::executable_name) ctx["executable"] = Context::executable_name;
  ctx["num_cpus"] = cpu.num_cpus;
  ctx["mhz_per_cpu"] = static_cast<long long>(cpu.cycles_per_second / 1e6 + 0.5);
  ctx["cpu_scaling_enabled"] = cpu.scaling == benchmark::CPUInfo::ENABLED;
  nlohmann::json caches = nlohmann::json::array();
  for (const auto& c : cpu.caches)
    caches.push_back(
        {{"type", c.type}, {"level", c.level}, {"size", c.size}, {"num_sharing", c.num_sharing}});
  ctx["caches"] = caches;
  ctx["load_avg"] = cpu.load_avg;
#ifdef NDEBUG
  ctx["library_build_type"] = "release";
#else
  ctx["library_build_type"] = "debug";
#endif
  return true;
}

void ResultsReporter::ReportRuns(const std::vector<Run>& runs) {
  // Google Benchmark reports a case once all its repetitions ran: its setup can go.
  if (!runs.empty()) release_case_setup(runs.front().run_name.function_name);
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<int, std::vector<SmClockReading>>
      sampled;  // per device: what the sampler saw while this case ran
  for (const auto& run : runs) {
    auto row = run_to_row(run);
    if (row["skipped"] == true && !skipped_cases_.insert(row["run_name"].get<std::string>()).second)
      continue;
    if ((clock_reader_ || clock_sampler_) && run.run_type == Run::RT_Iteration &&
        !run.error_occurred && row.contains("device") && row["device"].is_number_integer()) {
      const int device = row["device"].get<int>();
      if (clock_sampler_ && !sampled.count(device)) sampled[device] = clock_sampler_->take(device);
      const auto during = clock_sampler_ ? summarize_readings(sampled[device]) : std::nullopt;
      if (during) row["clock_samples"] = sampled[device].size();
      annotate_clock(row, during ? during : clock_reader_ ? clock_reader_(device) : std::nullopt);
    }
    if (row["validated"] == false && run.run_type == Run::RT_Iteration) ++invalid_rows_;
    doc_["benchmarks"].push_back(std::move(row));
  }
  if (!runs.empty() && runs.front().run_name.function_name != last_case_) {
    last_case_ = runs.front().run_name.function_name;
    ++finished_cases_;
    print_progress(runs.front());
  }
  write_if_due();
}

void ResultsReporter::write_if_due() {
  if (std::chrono::steady_clock::now() - last_write_ >= write_interval_) write();
}

void ResultsReporter::print_progress(const Run& run) {
  if (!show_progress_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const int left = std::max(expected_cases_ - finished_cases_, 0);
  const double estimate = finished_cases_ > 0 ? elapsed / finished_cases_ * left : 0.0;
  fmt::print(stderr, "\r\033[K[{}/{}] {:<60.60} elapsed {:.0f}s, ~{:.0f}s left", finished_cases_,
             expected_cases_, run.run_name.function_name, elapsed, estimate);
  if (left == 0) fmt::print(stderr, "\n");
  std::fflush(stderr);
}

void ResultsReporter::finish(const std::string& stopped_because) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& ob = doc_["context"]["offloadbench"];
  ob["end_time_utc"] = utc_now_iso8601();
  ob["incomplete"] = !stopped_because.empty();
  if (!stopped_because.empty()) ob["stopped_because"] = stopped_because;
  if (show_progress_ && finished_cases_ < expected_cases_) fmt::print(stderr, "\n");
  write();
}

void ResultsReporter::write() {
  write_json_atomically(path_, doc_);
  last_write_ = std::chrono::steady_clock::now();
}

}  // namespace offloadbench
