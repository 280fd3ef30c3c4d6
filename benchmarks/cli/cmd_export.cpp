// `offloadbench export --format github-action-benchmark|bencher FILE`: the file's results in a
// tracker's own format, so that trackers that read Google Benchmark files row by row do not chart
// skipped rows as 0-time results. One entry per benchmark: the median over its valid repetitions
// (skipped, errored and failed rows are left out), with its unit and which direction is better.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "benchmarks/cli/commands.h"
#include "harness/results/files.h"
#include "harness/results/results.h"
#include "harness/analysis/stats.h"

namespace offloadbench::cli {

namespace {

struct ExportOptions {
  std::string format, file, metric = "real_time", out;
};

// Per benchmark, the metric of each valid repetition: nanoseconds for real_time/cpu_time, else as stored.
std::map<std::string, std::vector<double>> valid_samples(const nlohmann::json& doc, const std::string& metric,
                                                         bool time) {
  std::map<std::string, std::vector<double>> samples;
  for (const auto& row : doc["benchmarks"]) {
    if (row["run_type"] != "iteration" || row.value("skipped", false) || row.value("error_occurred", false) ||
        row.value("validated", nlohmann::json()) == false || !row.contains(metric) || !row[metric].is_number())
      continue;
    double value = row[metric].get<double>();
    if (time) value = row_seconds({{"real_time", value}, {"time_unit", row.value("time_unit", "ns")}}) * 1e9;
    if (std::isfinite(value) && value > 0) samples[row["name"].get<std::string>()].push_back(value);
  }
  return samples;
}

int execute_export(const ExportOptions& o) {
  const bool time = o.metric == "real_time" || o.metric == "cpu_time";
  const bool rate = o.metric.size() > 11 && o.metric.compare(o.metric.size() - 11, 11, "_per_second") == 0;
  if (!time && !rate)
    throw UsageError(fmt::format("--metric '{}' is not real_time, cpu_time or a *_per_second rate", o.metric));
  if (!o.out.empty()) {
    check_not_same_file(o.out, "--out", o.file, "FILE");
    check_output_path(o.out, "--out");
  }
  const auto doc = load_results(o.file);
  const auto samples = valid_samples(doc, o.metric, time);
  if (samples.empty()) throw UsageError(fmt::format("{}: no valid measurement of '{}' to export", o.file, o.metric));
  const std::string unit = time ? "ns" : o.metric == "bytes_per_second" ? "bytes/s" : o.metric == "flop_per_second" ? "FLOP/s" : o.metric;

  nlohmann::json out;
  std::string tool;
  if (o.format == "github-action-benchmark") {
    out = nlohmann::json::array();
    for (const auto& [name, values] : samples) {
      const auto [low, high] = std::minmax_element(values.begin(), values.end());
      out.push_back({{"name", name}, {"unit", unit}, {"value", median(values)},
                     {"range", fmt::format("{:.6g}..{:.6g}", *low, *high)},
                     {"extra", fmt::format("median of {} valid repetition(s), {}", values.size(), o.metric)}});
    }
    tool = time ? "customSmallerIsBetter" : "customBiggerIsBetter";
  } else {  // Bencher Metric Format: latency (ns, lower is better) or throughput (higher is better)
    const std::string measure = time ? "latency" : "throughput";
    out = nlohmann::json::object();
    for (const auto& [name, values] : samples) {
      const auto [low, high] = std::minmax_element(values.begin(), values.end());
      out[name][measure] = {{"value", median(values)}, {"lower_value", *low}, {"upper_value", *high}};
    }
    tool = fmt::format("Bencher measure '{}' ({}, {} is better)", measure, unit, time ? "lower" : "higher");
  }
  // ASCII only: JSON leaves C1 controls and bidi overrides in names raw, and this often goes to a terminal.
  const std::string text = out.dump(2, ' ', /*ensure_ascii=*/true) + "\n";
  if (o.out.empty()) fmt::print("{}", text);
  else write_file_atomically(o.out, text);
  fmt::print(stderr, "export: {} benchmark(s), {} in {}; use {}\n", samples.size(), o.metric, unit, tool);
  return 0;
}

}  // namespace

Command add_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand("export", "Write a results file in a tracker's format (github-action-benchmark, "
                                           "bencher): medians of valid repetitions, skipped rows left out");
  cmd->add_option("--format", o->format, "github-action-benchmark or bencher")
      ->required()
      ->check(CLI::IsMember({"github-action-benchmark", "bencher"}));
  cmd->add_option("file", o->file, "Results file")->required();
  cmd->add_option("--metric", o->metric, "real_time, cpu_time (nanoseconds, smaller is better) or a *_per_second "
                                         "rate (bigger is better)")
      ->default_str("real_time");
  cmd->add_option("--out", o->out, "Write here instead of stdout")->check(non_empty_path());
  return {cmd, [o] { return execute_export(*o); }};
}

}  // namespace offloadbench::cli
