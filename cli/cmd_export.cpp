// `offloadbench export --format github-action-benchmark|bencher FILE`: the file's results in a
// tracker's own format, so that trackers that read Google Benchmark files row by row do not chart
// skipped rows as 0-time results. One entry per benchmark: the median over its valid repetitions
// (skipped, errored and failed rows are left out), with its unit and which direction is better.
// For Bencher (its Metric Format, BMF), every measure a row carries by default — latency,
// throughput, bandwidth, FLOP/s — each with the repetitions' range; `--print-testbed` names the
// machine for `bencher run --testbed` (docs/fleet.md).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "cli/commands.h"
#include "harness/analysis/analysis.h"
#include "harness/analysis/stats.h"
#include "harness/results/files.h"
#include "harness/results/results.h"

namespace offloadbench::cli {

namespace {

struct ExportOptions {
  std::string format, file, metric = "real_time", out;
  bool metric_given = false, print_testbed = false;
};

// Bencher measures (slug, the row field, its scale to the measure's unit). latency and throughput
// are the two every Bencher project has (ns, operations/s); bandwidth and flops are created on
// first use.
struct BencherMeasure {
  const char* slug;
  const char* field;
  double scale;
};
constexpr BencherMeasure kBencherMeasures[] = {
    {"latency", "real_time", 1},              // ns per iteration (the row's time, converted to ns)
    {"throughput", "samples_per_second", 1},  // operations (samples) per second
    {"throughput", "items_per_second", 1},  // Google Benchmark's items, where a row has no samples
    {"bandwidth", "bytes_per_second",
     1e-9},                           // GB/s (10^9 bytes), as the terminal and charts print it
    {"flops", "flop_per_second", 1},  // FLOP/s, FLOPs counted 2·M·N·K
};

// Lower-case letters, digits and '.', everything else one '-': a name Bencher also takes as a slug.
std::string slug_of(const std::string& text) {
  std::string slug;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) && u < 128)
      slug += static_cast<char>(std::tolower(u));
    else if (c == '.' && !slug.empty() && slug.back() != '-')
      slug += '.';
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
  }
  while (!slug.empty() && (slug.back() == '-' || slug.back() == '.')) slug.pop_back();
  return slug;
}

// The machine a file was measured on, as a Bencher testbed: host, GPU model(s), driver and PCIe
// link (the link's generation and width the GPU and slot can reach, not the current one, which an
// idle GPU lowers), or host, CPU and "no-gpu". At most 64 characters (Bencher's slug limit).
std::string testbed_name(const nlohmann::json& doc) {
  const auto& context = doc["context"];
  auto text = [](const nlohmann::json& object, const char* key) {
    return object.is_object() && object.contains(key) && object[key].is_string()
               ? object[key].get<std::string>()
               : std::string();
  };
  const nlohmann::json none = nlohmann::json::object();
  const auto& host = context.contains("host") ? context["host"] : none;
  const auto& fingerprint =
      context.contains("machine_fingerprint") ? context["machine_fingerprint"] : none;
  std::string hostname = text(host, "hostname");
  if (hostname.empty()) hostname = text(context, "host_name");
  std::vector<std::string> parts = {hostname.empty() ? "host" : hostname};
  const bool gpus = context.contains("cuda") && context["cuda"].contains("gpus") &&
                    context["cuda"]["gpus"].is_array() && !context["cuda"]["gpus"].empty();
  if (!gpus) {
    parts.push_back(text(fingerprint, "cpu_model"));
    parts.push_back("no-gpu");
  } else {
    if (fingerprint.contains("gpu_models") && fingerprint["gpu_models"].is_array())
      for (const auto& model : fingerprint["gpu_models"])
        if (model.is_string()) parts.push_back(model.get<std::string>());
    parts.push_back(text(fingerprint, "driver"));
    const auto& gpu = context["cuda"]["gpus"][0];
    const auto& link = gpu.is_object() && gpu.contains("pcie_link") ? gpu["pcie_link"] : none;
    auto number = [&](const char* key) {  // a generation or lane count; anything else (1e300, −1)
                                          // is no answer
      const double value =
          link.contains(key) && link[key].is_number() ? link[key].get<double>() : 0.0;
      return value >= 1 && value <= 64 ? static_cast<int>(value) : 0;
    };
    const int generation =
        number("ceiling_generation") ? number("ceiling_generation") : number("max_generation");
    const int width = number("ceiling_width") ? number("ceiling_width") : number("max_width");
    if (generation > 0 && width > 0) parts.push_back(fmt::format("pcie{}x{}", generation, width));
  }
  std::string name;
  for (const auto& part : parts)
    if (const auto slug = slug_of(part); !slug.empty()) name += (name.empty() ? "" : "-") + slug;
  if (name.size() > 64) name.resize(64);
  while (!name.empty() && (name.back() == '-' || name.back() == '.')) name.pop_back();
  return name;
}

// Per benchmark and Bencher measure, the value of each valid repetition in the measure's unit.
std::map<std::string, std::map<std::string, std::vector<double>>> bencher_samples(
    const nlohmann::json& doc) {
  std::map<std::string, std::map<std::string, std::vector<double>>> samples;
  for (const auto& row : doc["benchmarks"]) {
    if (row["run_type"] != "iteration" || row.value("skipped", false) ||
        row.value("error_occurred", false) || row.value("validated", nlohmann::json()) == false)
      continue;
    auto& measures = samples[row["name"].get<std::string>()];
    for (const auto& m : kBencherMeasures) {
      const std::string slug = m.slug, field = m.field;
      if (!row.contains(field) || !row[field].is_number()) continue;
      if (field == "items_per_second" && row.contains("samples_per_second"))
        continue;  // one throughput a row
      const double raw = row[field].get<double>();
      const double value =
          slug == "latency"
              ? row_seconds({{"real_time", raw}, {"time_unit", row.value("time_unit", "ns")}}) * 1e9
              : raw * m.scale;
      if (std::isfinite(value) && value > 0) measures[slug].push_back(value);
    }
    if (measures.empty()) samples.erase(row["name"].get<std::string>());
  }
  return samples;
}

// Per benchmark, the metric of each valid repetition: nanoseconds for real_time/cpu_time, else as
// stored.
std::map<std::string, std::vector<double>> valid_samples(const nlohmann::json& doc,
                                                         const std::string& metric, bool time) {
  std::map<std::string, std::vector<double>> samples;
  for (const auto& row : doc["benchmarks"]) {
    if (row["run_type"] != "iteration" || row.value("skipped", false) ||
        row.value("error_occurred", false) || row.value("validated", nlohmann::json()) == false ||
        !row.contains(metric) || !row[metric].is_number())
      continue;
    double value = row[metric].get<double>();
    if (time)
      value =
          row_seconds({{"real_time", value}, {"time_unit", row.value("time_unit", "ns")}}) * 1e9;
    if (std::isfinite(value) && value > 0) samples[row["name"].get<std::string>()].push_back(value);
  }
  return samples;
}

// Every measure of every benchmark, in BMF: {name: {slug: {value: median, lower_value: min,
// upper_value: max}}}.
int export_bencher_measures(const ExportOptions& o, const nlohmann::json& doc) {
  const auto samples = bencher_samples(doc);
  if (samples.empty()) throw UsageError(fmt::format("{}: no valid measurement to export", o.file));
  nlohmann::json out = nlohmann::json::object();
  std::map<std::string, int> counts;
  for (const auto& [name, measures] : samples)
    for (const auto& [slug, values] : measures) {
      const auto [low, high] = std::minmax_element(values.begin(), values.end());
      out[name][slug] = {{"value", median(values)}, {"lower_value", *low}, {"upper_value", *high}};
      ++counts[slug];
    }
  const std::string text = out.dump(2, ' ', /*ensure_ascii=*/true) + "\n";
  if (o.out.empty())
    fmt::print("{}", text);
  else
    write_file_atomically(o.out, text);
  std::string measures;
  for (const auto& [slug, count] : counts)
    measures += fmt::format("{}{} {}", measures.empty() ? "" : ", ", count, slug);
  const auto& ob = doc["context"]["offloadbench"];
  fmt::print(
      stderr,
      "export: {} benchmark(s) for Bencher: {} (latency ns, lower is better; throughput samples/s, "
      "bandwidth GB/s and flops FLOP/s, higher is better); bencher run --adapter json --testbed {} "
      "--hash <the "
      "full SHA of commit {}>\n",
      samples.size(), measures, testbed_name(doc),
      printable(ob.contains("git_sha") && ob["git_sha"].is_string()
                    ? ob["git_sha"].get<std::string>()
                    : "?"));
  return 0;
}

int execute_export(const ExportOptions& o) {
  if (o.print_testbed) {
    fmt::print("{}\n", testbed_name(load_results(o.file)));
    return 0;
  }
  if (o.format == "bencher" && !o.metric_given) {
    if (!o.out.empty()) {
      check_not_same_file(o.out, "--out", o.file, "FILE");
      check_output_path(o.out, "--out");
    }
    return export_bencher_measures(o, load_results(o.file));
  }
  const bool time = o.metric == "real_time" || o.metric == "cpu_time";
  const bool rate =
      o.metric.size() > 11 && o.metric.compare(o.metric.size() - 11, 11, "_per_second") == 0;
  if (!time && !rate)
    throw UsageError(
        fmt::format("--metric '{}' is not real_time, cpu_time or a *_per_second rate", o.metric));
  if (!o.out.empty()) {
    check_not_same_file(o.out, "--out", o.file, "FILE");
    check_output_path(o.out, "--out");
  }
  const auto doc = load_results(o.file);
  const auto samples = valid_samples(doc, o.metric, time);
  if (samples.empty())
    throw UsageError(fmt::format("{}: no valid measurement of '{}' to export", o.file, o.metric));
  const std::string unit = time                             ? "ns"
                           : o.metric == "bytes_per_second" ? "bytes/s"
                           : o.metric == "flop_per_second"  ? "FLOP/s"
                                                            : o.metric;

  nlohmann::json out;
  std::string tool;
  if (o.format == "github-action-benchmark") {
    out = nlohmann::json::array();
    for (const auto& [name, values] : samples) {
      const auto [low, high] = std::minmax_element(values.begin(), values.end());
      out.push_back({{"name", name},
                     {"unit", unit},
                     {"value", median(values)},
                     {"range", fmt::format("{:.6g}..{:.6g}", *low, *high)},
                     {"extra", fmt::format("median of {} valid repetition(s), {}", values.size(),
                                           o.metric)}});
    }
    tool = time ? "customSmallerIsBetter" : "customBiggerIsBetter";
  } else {  // Bencher Metric Format: latency (ns, lower is better) or throughput (higher is better)
    const std::string measure = time ? "latency" : "throughput";
    out = nlohmann::json::object();
    for (const auto& [name, values] : samples) {
      const auto [low, high] = std::minmax_element(values.begin(), values.end());
      out[name][measure] = {
          {"value", median(values)}, {"lower_value", *low}, {"upper_value", *high}};
    }
    tool = fmt::format("Bencher measure '{}' ({}, {} is better)", measure, unit,
                       time ? "lower" : "higher");
  }
  // ASCII only: JSON leaves C1 controls and bidi overrides in names raw, and this often goes to a
  // terminal.
  const std::string text = out.dump(2, ' ', /*ensure_ascii=*/true) + "\n";
  if (o.out.empty())
    fmt::print("{}", text);
  else
    write_file_atomically(o.out, text);
  fmt::print(stderr, "export: {} benchmark(s), {} in {}; use {}\n", samples.size(), o.metric, unit,
             tool);
  return 0;
}

}  // namespace

Command add_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd =
      app.add_subcommand("export",
                         "Write a results file in a tracker's format (github-action-benchmark, "
                         "bencher): medians of valid repetitions, skipped rows left out");
  cmd->add_option("--format", o->format, "github-action-benchmark or bencher")
      ->required()
      ->check(CLI::IsMember({"github-action-benchmark", "bencher"}));
  cmd->add_option("file", o->file, "Results file")->required();
  auto* metric = cmd->add_option("--metric", o->metric,
                                 "real_time, cpu_time (nanoseconds, smaller is better) or a "
                                 "*_per_second rate (bigger is better); for bencher the default "
                                 "is every measure (latency, throughput, bandwidth, flops)")
                     ->default_str("real_time");
  cmd->add_flag("--print-testbed", o->print_testbed,
                "Print the Bencher testbed name of FILE's machine (host, GPU, "
                "driver, PCIe link) and nothing else");
  cmd->add_option("--out", o->out, "Write here instead of stdout")->check(non_empty_path());
  return {cmd, [o, metric] {
            o->metric_given = metric->count() > 0;
            return execute_export(*o);
          }};
}

}  // namespace offloadbench::cli
