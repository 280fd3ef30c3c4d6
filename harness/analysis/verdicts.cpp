#include "harness/analysis/verdicts.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "harness/analysis/analysis_detail.h"
#include "harness/analysis/invariants.h"
#include "harness/analysis/stats.h"
#include "harness/analysis/verdict_causes.h"
#include "harness/results/results.h"

namespace offloadbench {

namespace {

using detail::number;
using detail::text;
using Rows = std::vector<const nlohmann::json*>;

std::map<std::string, Rows> rows_by_name(const nlohmann::json& doc) {
  std::map<std::string, Rows> out;
  for (const auto* row : iteration_row_pointers(doc))
    if (row->contains("name") && (*row)["name"].is_string() && !row->value("skipped", false))
      out[(*row)["name"].get<std::string>()].push_back(row);
  return out;
}

struct Violation {
  std::string rule;
  int repetition;
  std::string reason;
};
std::map<std::string, std::vector<Violation>> violations_by_name(const nlohmann::json& doc) {
  std::map<std::string, std::vector<Violation>> out;
  if (!doc.contains("analysis") || !doc["analysis"].is_object() ||
      !doc["analysis"].contains("invariants"))
    return out;
  const auto& section = doc["analysis"]["invariants"];
  if (!section.is_object() || !section.contains("violations") || !section["violations"].is_array())
    return out;
  for (const auto& v : section["violations"])
    if (v.is_object() && v.contains("name") && v["name"].is_string())
      out[v["name"].get<std::string>()].push_back(
          {text(v, "invariant"),
           v.contains("repetition_index") && v["repetition_index"].is_number_integer()
               ? v["repetition_index"].get<int>()
               : -1,
           text(v, "reason")});
  return out;
}

bool broken_by(const std::vector<Violation>& violations, const nlohmann::json& row,
               bool steady_counts) {
  const int repetition = row.value("repetition_index", 0);
  return std::any_of(violations.begin(), violations.end(), [&](const Violation& v) {
    return (steady_counts || v.rule != "steady") &&
           (v.repetition == -1 || v.repetition == repetition);
  });
}

const char* rate_field(const nlohmann::json& row) {
  return row.contains("flop_per_second")    ? "flop_per_second"
         : row.contains("bytes_per_second") ? "bytes_per_second"
                                            : "";
}

double median_rate(const Rows& rows, const char* field) {
  std::vector<double> values;
  for (const auto* r : rows)
    if (double v = number(*r, field); std::isfinite(v) && v > 0) values.push_back(v);
  return median(values);
}

double lowest_rate(const Rows& rows, const char* field) {
  double lowest = NAN;
  for (const auto* r : rows)
    if (double v = number(*r, field); std::isfinite(v) && v > 0)
      lowest = std::isnan(lowest) ? v : std::min(lowest, v);
  return lowest;
}

// The rows of a case worth a figure: validated, broken by no rule (unsteady ones are kept: their
// spread is the verdict's cause, not a reason to drop them).
Rows good_rows(const Rows& rows, const std::vector<Violation>& violations) {
  Rows out;
  for (const auto* r : rows)
    if (r->value("validated", nlohmann::json()) != false && !broken_by(violations, *r, false))
      out.push_back(r);
  return out;
}

std::string device_key(const nlohmann::json& row) {
  if (row.contains("device") && row["device"].is_number_integer())
    return std::to_string(row["device"].get<int>());
  return "cpu";
}

// (compare_group, series, view, size) of a row that has them, for finding a cpu_all row's cpu_1t
// twin.
using TwinKey = std::tuple<std::string, std::string, std::string, double>;
bool twin_key(const nlohmann::json& row, TwinKey& key) {
  const auto group = text(row, "compare_group"), sweep = text(row, "sweep");
  if (group.empty() || sweep.empty() || !std::isfinite(number(row, sweep))) return false;
  key = {group, text(row, "series"), text(row, "view"), number(row, sweep)};
  return true;
}

std::string all_threads_cause(const nlohmann::json& row, double rate, const char* field,
                              const std::map<TwinKey, const Rows*>& twins,
                              const nlohmann::json& context) {
  TwinKey key;
  if (text(row, "view") != "cpu_all" || !twin_key(row, key)) return "";
  std::get<2>(key) = "cpu_1t";
  const auto twin = twins.find(key);
  if (twin == twins.end()) return "";
  const double one = median_rate(*twin->second, field);
  if (!(one > rate)) return "";
  const double threads = number(row, "cpu_threads");
  const auto unit = std::string(field) == "flop_per_second" ? "FLOP/s" : "B/s";
  std::string load;
  if (context.contains("load_avg") && context["load_avg"].is_array() &&
      !context["load_avg"].empty() && context["load_avg"][0].is_number())
    load = fmt::format("; load average {:.1f} on {} CPUs", context["load_avg"][0].get<double>(),
                       context.value("num_cpus", 0));
  return fmt::format("all {}threads slower than one ({} vs {}): oversubscribed or noisy machine{}",
                     std::isfinite(threads) ? fmt::format("{:.0f} ", threads) : std::string(),
                     rate_text(rate, unit), rate_text(one, unit), load);
}

bool same_run(const nlohmann::json& a, const nlohmann::json& b) {
  const auto start = [](const nlohmann::json& doc) {
    const auto& c = doc.contains("context") ? doc["context"] : nlohmann::json::object();
    const auto ob = c.contains("offloadbench") ? c["offloadbench"] : nlohmann::json::object();
    return text(c, "host_name") + "|" + text(ob, "start_time_utc");
  };
  return start(a) == start(b);
}

const nlohmann::json& context_of(const nlohmann::json& doc) {
  static const nlohmann::json empty = nlohmann::json::object();
  return doc.contains("context") && doc["context"].is_object() ? doc["context"] : empty;
}

// A reference for a CPU row: a run on the same CPU model.
const ReferenceRun* cpu_reference(const nlohmann::json& results,
                                  const std::vector<ReferenceRun>& references) {
  const auto model = [](const nlohmann::json& doc) {
    const auto& c = context_of(doc);
    return c.contains("host") ? text(c["host"], "cpu_model") : std::string();
  };
  for (const auto& ref : references)
    if (!model(results).empty() && model(ref.doc) == model(results) && !same_run(ref.doc, results))
      return &ref;
  return nullptr;
}

}  // namespace

std::string rate_text(double value, const char* unit) {
  if (value >= 1e12) return fmt::format("{:.2f} T{}", value / 1e12, unit);
  if (value >= 1e9) return fmt::format("{:.2f} G{}", value / 1e9, unit);
  if (value >= 1e6) return fmt::format("{:.2f} M{}", value / 1e6, unit);
  return fmt::format("{:.3g} {}", value, unit);
}

std::vector<ReferenceRun> load_reference_runs(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<ReferenceRun> out;
  std::error_code error;
  if (dir.empty() || !fs::is_directory(dir, error)) return out;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const auto name = entry.path().filename().string();
    const auto ends = [&](const std::string& tail) {
      return name.size() >= tail.size() &&
             name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (ends(".json") && !ends("-info.json") && !ends("-pytorch.json"))
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    try {
      out.push_back({path.filename().string(), load_results(path.string())});
    } catch (const std::exception&) {  // not a results file: not a reference
    }
  }
  return out;
}

const ReferenceRun* matching_reference(const nlohmann::json& results, int device,
                                       const std::vector<ReferenceRun>& references) {
  const auto& gpu = verdict_causes::gpu_context(context_of(results), device);
  if (!gpu.is_object() || text(gpu, "name").empty()) return nullptr;
  const auto link = [](const nlohmann::json& g) {
    const auto& l = g.contains("pcie_link") ? g["pcie_link"] : nlohmann::json::object();
    return std::make_pair(l.value("max_generation", 0), l.value("max_width", 0));
  };
  for (const auto& ref : references) {
    if (same_run(ref.doc, results)) continue;
    const auto& c = context_of(ref.doc);
    if (!c.contains("cuda") || !c["cuda"].contains("gpus") || !c["cuda"]["gpus"].is_array())
      continue;
    for (const auto& g : c["cuda"]["gpus"])
      if (g.is_object() && text(g, "name") == text(gpu, "name") && link(g) == link(gpu))
        return &ref;
  }
  return nullptr;
}

nlohmann::json judge_headlines(const nlohmann::json& results,
                               const std::vector<ReferenceRun>& references) {
  const auto& context = context_of(results);
  const auto by_name = rows_by_name(results);
  const auto violations = violations_by_name(results);
  // Per label, the case at its largest size (as the summary's headline throughputs pick it).
  std::map<std::string, std::string> case_of_label;
  std::map<TwinKey, const Rows*> twins;
  for (const auto& [name, rows] : by_name) {
    const auto& row = *rows.front();
    if (TwinKey key; twin_key(row, key)) twins[key] = &rows;
    if (!row.contains("headline") || !row["headline"].is_string()) continue;
    auto& chosen = case_of_label[row["headline"].get<std::string>()];
    if (chosen.empty() || row.value("bytes", 0.0) > by_name.at(chosen).front()->value("bytes", 0.0))
      chosen = name;
  }
  std::map<std::string, const ReferenceRun*> reference_of_device;
  std::map<std::string, std::map<std::string, Rows>> reference_rows;  // by reference file
  std::map<std::string, std::map<std::string, std::vector<Violation>>> reference_violations;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [label, name] : case_of_label) {
    const auto& rows = by_name.at(name);
    const auto& row = *rows.front();
    const char* field = rate_field(row);
    if (!*field) continue;
    const auto unit = std::string(field) == "flop_per_second" ? "FLOP/s" : "B/s";
    const auto found = violations.find(name);
    const auto& broken = found == violations.end() ? std::vector<Violation>() : found->second;
    const auto good = good_rows(rows, broken);
    const double rate = median_rate(good.empty() ? rows : good, field);
    std::vector<std::string> impossible, limiting, contributing;
    for (const auto* r : rows)
      if (r->value("validated", nlohmann::json()) == false) {
        impossible.push_back(printable(text(*r, "invalid_reason").empty()
                                           ? text(*r, "suspect_reason").empty()
                                                 ? "failed its own validation"
                                                 : text(*r, "suspect_reason")
                                           : text(*r, "invalid_reason")));
        break;
      }
    std::set<std::string> rules_named;  // one reason per rule: its repetitions say much the same
    for (const auto& v : broken)
      if (rules_named.insert(v.rule).second)
        (v.rule == "steady" ? limiting : impossible)
            .push_back(v.rule == "steady" ? "spread too wide to trust (" + v.reason + ")"
                                          : v.rule + ": " + v.reason);
    const double ceiling = number(row, std::string("ceiling_") + field);
    if (std::isfinite(ceiling) && ceiling > 0 && rate > verdict_limits::kCeilingSlack * ceiling)
      impossible.push_back(fmt::format("{} is above its ceiling {}", rate_text(rate, unit),
                                       rate_text(ceiling, unit)));
    const auto causes = verdict_causes::of_case(rows, context);
    limiting.insert(limiting.end(), causes.limiting.begin(), causes.limiting.end());
    contributing = causes.contributing;
    if (auto threads = all_threads_cause(row, rate, field, twins, context); !threads.empty())
      limiting.push_back(threads);

    // Evidence: the share of the ceiling, the reference's figure for the same case.
    std::vector<std::string> evidence, short_of;
    if (std::isfinite(ceiling) && ceiling > 0) {
      evidence.push_back(
          fmt::format("{:.0f}% of its ceiling {}", 100 * rate / ceiling, rate_text(ceiling, unit)));
      const double expected = number(row, "expected_share_of_ceiling");
      if (std::isfinite(expected) && rate < expected * ceiling)
        short_of.push_back(
            fmt::format("below the {:.0f}% of its ceiling expected", 100 * expected));
    }
    const auto key = device_key(row);
    if (!reference_of_device.count(key))
      reference_of_device[key] = key == "cpu"
                                     ? cpu_reference(results, references)
                                     : matching_reference(results, std::stoi(key), references);
    const auto* ref = reference_of_device[key];
    nlohmann::json reference = nullptr;
    if (ref) {
      if (!reference_rows.count(ref->file)) {
        reference_rows[ref->file] = rows_by_name(ref->doc);
        reference_violations[ref->file] = violations_by_name(ref->doc);
      }
      const auto& ref_by_name = reference_rows[ref->file];
      if (const auto it = ref_by_name.find(name); it != ref_by_name.end()) {
        const auto& ref_broken = reference_violations[ref->file][name];
        const auto ref_good = good_rows(it->second, ref_broken);
        const double ref_median = median_rate(ref_good, field),
                     ref_lowest = lowest_rate(ref_good, field);
        if (std::isfinite(ref_median)) {
          reference = {{"file", ref->file}, {"rate", ref_median}, {"lowest", ref_lowest}};
          evidence.push_back(fmt::format("reference {}", rate_text(ref_median, unit)));
          if (rate < (1 - verdict_limits::kReferenceMargin) * ref_lowest)
            short_of.push_back(fmt::format("{:.0f}% below the reference's slowest repetition {}",
                                           100 * (1 - rate / ref_lowest),
                                           rate_text(ref_lowest, unit)));
        }
      }
    }
    std::string verdict = "healthy";
    std::vector<std::string> why;
    if (!impossible.empty()) {
      verdict = "impossible";
      why = impossible;
    } else if (!limiting.empty() || !short_of.empty()) {
      verdict = "below expectation";
      why = limiting;
      if (!short_of.empty()) {
        why.insert(why.end(), contributing.begin(), contributing.end());
        if (why.empty()) why.push_back("cause not recorded by this run");
        evidence.insert(evidence.end(), short_of.begin(), short_of.end());
      }
    }
    std::string evidence_text;
    for (const auto& e : evidence) evidence_text += (evidence_text.empty() ? "" : "; ") + e;
    out.push_back(
        {{"label", label},
         {"name", name},
         {"device", key == "cpu" ? nlohmann::json("cpu") : nlohmann::json(std::stoi(key))},
         {"rate", std::isfinite(rate) ? nlohmann::json(rate) : nlohmann::json(nullptr)},
         {"unit", unit},
         {"verdict", verdict},
         {"causes", why},
         {"evidence", evidence_text},
         {"reference", reference}});
  }
  return out;
}

std::vector<std::string> machine_limits(const nlohmann::json& context) {
  std::vector<std::string> out;
  if (context.contains("cuda") && context["cuda"].contains("gpus") &&
      context["cuda"]["gpus"].is_array())
    for (const auto& g : context["cuda"]["gpus"]) {
      if (!g.is_object()) continue;
      const int index = g.value("index", -1);
      const auto& l = g.contains("pcie_link") ? g["pcie_link"] : nlohmann::json::object();
      const auto shortfall = verdict_causes::link_shortfall(
          l.value("current_generation", 0), l.value("current_width", 0),
          l.value("max_generation", 0), l.value("max_width", 0));
      if (!shortfall.empty())
        out.push_back(fmt::format(
            "GPU {}: this link will cap copies at {:.1f} GB/s: trained {} (if it stays so "
            "under load; an idle GPU may down-clock its link)",
            index, number(l, "theoretical_bytes_per_second") / 1e9, shortfall));
      nlohmann::json row = {{"device", index}};
      const auto found = verdict_causes::of_case({&row}, context);
      for (const auto& c : found.limiting) out.push_back(fmt::format("GPU {}: {}", index, c));
      for (const auto& c : found.contributing) out.push_back(fmt::format("GPU {}: {}", index, c));
    }
  nlohmann::json cpu_row = {{"device", "cpu"}, {"library", "OpenBLAS"}};
  const auto found = verdict_causes::of_case({&cpu_row}, context);
  for (const auto& c : found.limiting) out.push_back("CPU: " + c);
  for (const auto& c : found.contributing) out.push_back("CPU: " + c);
  const auto& host = context.contains("host") ? context["host"] : nlohmann::json::object();
  if (text(host, "thp_enabled") == "never")
    out.push_back("host: THP off (transparent_hugepage never): pinning at scale maps 4 KiB pages");
  return out;
}

}  // namespace offloadbench
