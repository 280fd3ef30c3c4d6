#include "harness/analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "harness/results/results.h"
#include "harness/analysis/signed_rank.h"
#include "harness/analysis/stats.h"

namespace offloadbench {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Row fields that describe what was measured (docs/results-schema.md); two rows with the same name
// but different values here are different benchmarks.
const char* const kParameterKeys[] = {"family", "op",       "device",        "bytes", "elements",
                                      "m",      "n",        "k",             "batch", "cpu_threads",
                                      "view",   "series",   "compare_group", "sweep"};

double seconds_per_unit(const std::string& unit, const std::string& where) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1.0;
  throw ResultsError(fmt::format("{}: unknown time_unit '{}'", where, unit));
}

bool is_time_metric(const std::string& metric) { return metric == "real_time" || metric == "cpu_time"; }

double metric_value(const nlohmann::json& row, const std::string& metric, const std::string& where) {
  if (!row.contains(metric)) throw ResultsError(fmt::format("{}: no '{}' field", where, metric));
  const auto& v = row[metric];
  if (v.is_null()) throw ResultsError(fmt::format("{}: '{}' is null (NaN or infinity when measured)", where, metric));
  if (!v.is_number()) throw ResultsError(fmt::format("{}: '{}' is not a number", where, metric));
  const double value = v.get<double>();
  if (!std::isfinite(value) || value < 0) throw ResultsError(fmt::format("{}: '{}' is {}", where, metric, value));
  if (!is_time_metric(metric)) return value;
  return value * seconds_per_unit(row.value("time_unit", std::string("ns")), where);
}

nlohmann::json parameters_of(const nlohmann::json& row) {
  nlohmann::json parameters = nlohmann::json::object();
  for (const char* key : kParameterKeys)
    if (row.contains(key)) parameters[key] = row[key];
  return parameters;
}

// "bytes (1024 vs 2048)" for every parameter present on both sides with different values.
std::string parameter_differences(const nlohmann::json& base, const nlohmann::json& candidate) {
  std::string text;
  for (auto it = base.begin(); it != base.end(); ++it)
    if (candidate.contains(it.key()) && candidate[it.key()] != it.value())
      text += fmt::format("{}{} ({} vs {})", text.empty() ? "" : ", ", it.key(), it.value().dump(),
                          candidate[it.key()].dump());
  return text;
}

// "load average 16.9 vs 3.2" from Google Benchmark's context.load_avg (1-minute figure), when both have it.
std::string load_text(const nlohmann::json& base, const nlohmann::json& candidate) {
  auto first = [](const nlohmann::json& ctx) {
    const auto it = ctx.find("load_avg");
    return it != ctx.end() && it->is_array() && !it->empty() && (*it)[0].is_number() ? (*it)[0].get<double>() : -1.0;
  };
  const double a = first(base), b = first(candidate);
  return a >= 0 && b >= 0 ? fmt::format("; load average {:.1f} vs {:.1f}", a, b) : "";
}

// A shared machine shifts every benchmark together; a code change rarely does.
std::string machine_state_note(const Comparison& c, const nlohmann::json& base_context,
                               const nlohmann::json& new_context) {
  int up = 0, down = 0;
  for (const auto& row : c.rows) {
    if (!std::isfinite(row.slowdown)) continue;
    up += row.slowdown > 1 + c.options.delta_cpu;
    down += row.slowdown < 1 / (1 + c.options.delta_cpu);
  }
  const int moved = std::max(up, down), measured = static_cast<int>(c.rows.size());
  if (measured < 4 || moved < 0.75 * measured || !(std::fabs(std::log(c.geomean_slowdown)) >= 2 * c.options.delta_cpu))
    return "";
  return fmt::format("{} of {} benchmarks moved {} (geometric mean {}): suspect the machine's state (load, clocks, "
                     "other tenants) before the code{}",
                     moved, measured, up > down ? "slower" : "faster", format_percent(c.geomean_slowdown - 1),
                     load_text(base_context, new_context));
}

void decide(BenchmarkComparison& r, double p_adjusted, double alpha);

// Holm across every benchmark that was tested: many benchmarks at once must not multiply false alarms.
void holm_verdicts(Comparison& c) {
  std::vector<BenchmarkComparison*> tested;
  std::vector<double> p;
  for (auto& row : c.rows)
    if (!row.test.empty()) {
      tested.push_back(&row);
      p.push_back(std::min(1.0, 2 * std::min(row.p_slower, row.p_faster)));
    }
  const auto adjusted = holm_adjust(p);
  for (std::size_t i = 0; i < tested.size(); ++i) decide(*tested[i], adjusted[i], c.options.alpha);
}

// The verdict from a (Holm-adjusted) directional p-value; see compare_samples.
void decide(BenchmarkComparison& r, double p_adjusted, double alpha) {
  r.p_value = p_adjusted;
  const std::string delta = format_percent(r.delta).substr(1);
  if (p_adjusted < alpha) {
    r.verdict = r.p_slower < r.p_faster ? Verdict::slower : Verdict::faster;
    r.reason = fmt::format("median {}: {} by more than {} (p={})", format_percent(r.change),
                           r.verdict == Verdict::slower ? "slower" : "faster", delta, format_p(p_adjusted));
  } else if (r.inside) {
    r.verdict = Verdict::same;
    r.reason = fmt::format("median {}, within ±{}", format_percent(r.change), delta);
  } else {
    r.verdict = Verdict::inconclusive;
    r.reason = fmt::format("median {}, but the repetitions' spread cannot tell it from ±{} (p={})",
                           format_percent(r.change), delta, format_p(p_adjusted));
  }
}

}  // namespace

std::string format_percent(double fraction) { return fmt::format("{:+.1f}%", 100 * fraction); }

std::string format_p(double p) { return p < 1e-4 ? fmt::format("{:.1e}", p) : fmt::format("{:.4f}", p); }

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::slower: return "SLOWER";
    case Verdict::faster: return "FASTER";
    case Verdict::same: return "SAME";
    case Verdict::inconclusive: return "INCONCLUSIVE";
  }
  return "INCONCLUSIVE";
}

bool higher_is_better(const std::string& metric) {
  const std::string suffix = "_per_second";
  return metric.size() > suffix.size() && metric.compare(metric.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<BenchmarkSamples> benchmark_samples(const nlohmann::json& doc, const std::string& metric,
                                                const std::string& origin) {
  std::vector<BenchmarkSamples> out;
  std::map<std::string, std::size_t> index;
  for (const auto& row : doc.at("benchmarks")) {
    const auto name = row.at("name").get<std::string>();
    const auto where = fmt::format("{}: benchmark '{}'", origin, name);
    try {
      if (row.at("run_type").get<std::string>() != "iteration") continue;
      auto [it, inserted] = index.emplace(name, out.size());
      if (inserted) out.push_back(BenchmarkSamples{name, {}, false, "", nlohmann::json::object(), 0, false});
      auto& samples = out[it->second];
      if (row.value("skipped", false)) {
        samples.skipped = true;
        samples.skip_reason = row.value("skip_reason", std::string());
        continue;
      }
      if (row.value("error_occurred", false)) continue;  // an invalid row's time means nothing
      samples.clocks_unlocked |= row.contains("clocks_locked") && row["clocks_locked"] == false;
      if (row.value("clock_throttled", false)) {
        ++samples.throttled;
        continue;
      }
      samples.values.push_back(metric_value(row, metric, where));
      if (samples.parameters.empty()) samples.parameters = parameters_of(row);
    } catch (const nlohmann::json::exception& e) {  // a field of the wrong type
      throw ResultsError(fmt::format("{}: {}", where, e.what()));
    }
  }
  return out;
}

BenchmarkComparison compare_samples(const std::string& name, const std::vector<double>& base,
                                    const std::vector<double>& candidate, const CompareOptions& options,
                                    bool gpu_row) {
  BenchmarkComparison r;
  r.name = name;
  r.base_count = base.size();
  r.new_count = candidate.size();
  r.delta = gpu_row ? options.delta_gpu : options.delta_cpu;
  r.base_median = base.empty() ? kNaN : median(base);
  r.new_median = candidate.empty() ? kNaN : median(candidate);
  const bool rate = higher_is_better(options.metric);
  r.change = r.new_median / r.base_median - 1;
  r.slowdown = rate ? r.base_median / r.new_median : r.new_median / r.base_median;
  if (!(r.base_median > 0) || !(r.new_median > 0)) {
    r.change = r.slowdown = kNaN;
    r.reason = "no positive median to compare";
    return r;
  }
  const auto minimum = static_cast<std::size_t>(options.min_repetitions);
  if (base.size() < minimum || candidate.size() < minimum) {
    r.reason = fmt::format("fewer than {} repetitions (base {}, new {})", options.min_repetitions, base.size(),
                           candidate.size());
    return r;
  }
  // Log time-equivalents (a rate's −log), so that larger is slower and δ is a ratio on either side.
  const auto slowness = [rate](const std::vector<double>& values, double shift) {
    std::vector<double> out;
    for (double v : values) out.push_back((rate ? -std::log(v) : std::log(v)) + shift);
    return out;
  };
  const auto b = slowness(base, 0);
  const double margin = std::log1p(r.delta);
  const auto less_margin = slowness(candidate, -margin), plus_margin = slowness(candidate, margin);
  const auto slower = mann_whitney_u(b, less_margin, 20, Alternative::less);
  r.p_slower = slower.p_value;
  r.p_faster = mann_whitney_u(b, plus_margin, 20, Alternative::greater).p_value;
  // Two one-sided tests: below +δ and above −δ, each at alpha, make the change equivalent to none.
  r.inside = mann_whitney_u(b, less_margin, 20, Alternative::greater).p_value < options.alpha &&
             mann_whitney_u(b, plus_margin, 20, Alternative::less).p_value < options.alpha;
  r.test = slower.method;
  decide(r, std::min(1.0, 2 * std::min(r.p_slower, r.p_faster)), options.alpha);
  return r;
}

std::vector<std::string> fingerprint_differences(const nlohmann::json& base, const nlohmann::json& candidate) {
  std::vector<std::string> differences;
  std::vector<std::string> keys;
  for (const auto* side : {&base, &candidate})
    for (auto it = side->begin(); it != side->end(); ++it)
      if (it.key() != "id" && std::find(keys.begin(), keys.end(), it.key()) == keys.end()) keys.push_back(it.key());
  for (const auto& key : keys) {
    const auto a = base.contains(key) ? base[key] : nlohmann::json();
    const auto b = candidate.contains(key) ? candidate[key] : nlohmann::json();
    if (a != b) differences.push_back(fmt::format("{} ({} vs {})", key, a.dump(), b.dump()));
  }
  return differences;
}

nlohmann::json load_for_comparison(const std::string& path) {
  auto doc = load_results(path);
  if (doc["benchmarks"].empty()) throw ResultsError(fmt::format("{}: no benchmarks (empty 'benchmarks' list)", path));
  const auto& ctx = doc["context"];
  if (!ctx.contains("machine_fingerprint") || !ctx["machine_fingerprint"].is_object())
    throw ResultsError(fmt::format("{}: missing 'context.machine_fingerprint'", path));
  return doc;
}

Comparison compare_results(const nlohmann::json& base, const nlohmann::json& candidate,
                           const CompareOptions& options, const std::string& base_origin,
                           const std::string& new_origin) {
  const auto differences = fingerprint_differences(base["context"].value("machine_fingerprint", nlohmann::json::object()),
                                                   candidate["context"].value("machine_fingerprint", nlohmann::json::object()));
  if (!differences.empty() && !options.allow_different_machines) {
    std::string fields;
    for (const auto& d : differences) fields += (fields.empty() ? "" : "; ") + d;
    throw ResultsError(fmt::format("{} and {} come from different machines: {}; pass --allow-different-machines to "
                                   "compare anyway", base_origin, new_origin, fields));
  }
  Comparison c;
  c.options = options;
  const auto base_samples = benchmark_samples(base, options.metric, base_origin);
  const auto new_samples = benchmark_samples(candidate, options.metric, new_origin);
  std::map<std::string, const BenchmarkSamples*> by_name;
  for (const auto& s : new_samples) by_name[s.name] = &s;
  std::map<std::string, bool> in_base;
  for (const auto& b : base_samples) {
    in_base[b.name] = true;
    const auto found = by_name.find(b.name);
    if (found == by_name.end()) {
      c.only_in_base.push_back(b.name);
      continue;
    }
    const auto& n = *found->second;
    if (b.values.empty() && n.values.empty()) {
      c.skipped_in_both.push_back(b.name);
      continue;
    }
    const bool gpu_row = b.parameters.contains("device") && b.parameters["device"].is_number_integer();
    auto row = compare_samples(b.name, b.values, n.values, options, gpu_row);
    if (b.values.empty() || n.values.empty()) {
      row.verdict = Verdict::inconclusive;
      row.test.clear();
      const auto& missing = b.values.empty() ? b : n;
      row.reason = fmt::format("not measured in {}{}", b.values.empty() ? "BASE" : "NEW",
                               missing.skip_reason.empty() ? "" : ": " + missing.skip_reason);
    } else if (const auto diff = parameter_differences(b.parameters, n.parameters); !diff.empty()) {
      row.verdict = Verdict::inconclusive;
      row.test.clear();
      row.reason = "same name but parameters differ: " + diff;
    }
    c.rows.push_back(row);
  }
  for (const auto& n : new_samples)
    if (!in_base.count(n.name)) c.only_in_new.push_back(n.name);
  holm_verdicts(c);

  double log_sum = 0;
  int logs = 0;
  for (const auto& row : c.rows) {
    c.slower += row.verdict == Verdict::slower;
    c.faster += row.verdict == Verdict::faster;
    c.same += row.verdict == Verdict::same;
    c.inconclusive += row.verdict == Verdict::inconclusive;
    if (row.base_count > 0 && row.new_count > 0 && std::isfinite(row.slowdown)) {
      log_sum += std::log(row.slowdown);
      ++logs;
    }
  }
  c.geomean_slowdown = logs ? std::exp(log_sum / logs) : kNaN;
  c.machine_note = machine_state_note(c, base["context"], candidate["context"]);
  std::stable_sort(c.rows.begin(), c.rows.end(), [](const auto& a, const auto& b) {
    const double x = std::isfinite(a.slowdown) ? a.slowdown : -1, y = std::isfinite(b.slowdown) ? b.slowdown : -1;
    return x > y;
  });
  return c;
}

std::vector<std::string> slower_names(const Comparison& comparison) {
  std::vector<std::string> names;
  for (const auto& row : comparison.rows)
    if (row.verdict == Verdict::slower) names.push_back(row.name);
  return names;
}

}  // namespace offloadbench
