#include "harness/analysis/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/analysis/family_analysis.h"
#include "harness/analysis/verdicts.h"
#include "harness/results/results.h"
#include "harness/results/sizes.h"

namespace offloadbench {

namespace {

double median_of_values(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const auto n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Per case name in `names`: the values of `field_of(name)` over its non-skipped rows, in one pass
// (a 100,000-row file is read once, not once per name).
// Rows the analysis's self-checks left out: (name, repetition), -1 for every repetition.
using BrokenRows = std::set<std::pair<std::string, int>>;
BrokenRows broken_rows(const nlohmann::json& results) {
  BrokenRows broken;
  if (!results.contains("analysis") || !results["analysis"].contains("invariants")) return broken;
  const auto& section = results["analysis"]["invariants"];
  if (!section.is_object() || !section.contains("violations") || !section["violations"].is_array())
    return broken;
  for (const auto& v : section["violations"])
    if (v.is_object() && v.contains("name") && v["name"].is_string())
      broken.insert({v["name"].get<std::string>(),
                     v.contains("repetition_index") && v["repetition_index"].is_number_integer()
                         ? v["repetition_index"].get<int>()
                         : -1});
  return broken;
}

bool is_broken(const BrokenRows& broken, const std::string& name, const nlohmann::json& row) {
  return broken.count({name, -1}) || broken.count({name, row.value("repetition_index", 0)});
}

std::map<std::string, std::vector<double>> values_by_name(
    const nlohmann::json& results, const std::map<std::string, std::string>& field_by_name,
    const BrokenRows& broken = {}) {
  std::map<std::string, std::vector<double>> values;
  for (const auto* row_pointer : iteration_row_pointers(results)) {
    const auto& row = *row_pointer;
    const auto name = row.find("name");
    if (name == row.end() || !name->is_string() || row.value("skipped", false)) continue;
    if (!broken.empty() && is_broken(broken, name->get_ref<const std::string&>(), row)) continue;
    const auto wanted = field_by_name.find(name->get_ref<const std::string&>());
    if (wanted == field_by_name.end()) continue;
    const auto value = row.find(wanted->second);
    if (value != row.end() && value->is_number())
      values[wanted->first].push_back(value->get<double>());
  }
  return values;
}

}  // namespace

double median_of(const nlohmann::json& results, const std::string& name, const std::string& field) {
  return median_of_values(values_by_name(results, {{name, field}})[name]);
}

namespace {
// Each rule a row broke, with up to three of its rows and why (the rest are in
// analysis.invariants).
void print_self_checks(std::FILE* out, const nlohmann::json& results) {
  if (!results.contains("analysis") || !results["analysis"].contains("invariants")) return;
  const auto& section = results["analysis"]["invariants"];
  std::map<std::string, std::vector<const nlohmann::json*>> by_rule;
  if (!section.contains("violations") || !section["violations"].is_array()) return;
  for (const auto& v : section["violations"])
    if (v.is_object() && v.contains("invariant") && v["invariant"].is_string())
      by_rule[v["invariant"].get<std::string>()].push_back(&v);
  if (by_rule.empty()) return;
  fmt::print(out, "self-checks broken (rows left out of every finding):\n");
  for (const auto& [rule, rows] : by_rule) {
    fmt::print(out, "  {}: {} row(s)\n", printable(rule), rows.size());
    for (std::size_t i = 0; i < rows.size() && i < 3; ++i) {
      const auto& v = *rows[i];
      const bool one = v.contains("repetition_index") && v["repetition_index"].is_number_integer();
      const auto repetition =
          one ? fmt::format(" #{}", v["repetition_index"].get<int>()) : std::string();
      const auto field = [&](const char* key) {
        return v.contains(key) && v[key].is_string() ? v[key].get<std::string>() : std::string("?");
      };
      fmt::print(out, "    {}{}: {}\n", printable(field("name")), repetition,
                 printable(field("reason")));
    }
    if (rows.size() > 3) fmt::print(out, "    ... and {} more\n", rows.size() - 3);
  }
}

}  // namespace

void print_summary(std::FILE* out, const nlohmann::json& results,
                   const std::vector<FamilyAnalysis>& families, const SummaryOptions& options) {
  print_first_screen(out, results, options);
  if (!options.all) {
    const auto hint =
        "every table and finding: offloadbench summary --all " + printable(options.file);
    fmt::print(out, "{}\n",
               options.file.empty() || hint.size() > kSummaryColumns
                   ? std::string("every table and finding: offloadbench summary --all FILE")
                   : hint);
    return;
  }
  fmt::print(out, "\n--- every table and finding ---\n");
  // Headline rows: per label, the largest size measured.
  std::map<std::string, const nlohmann::json*> headline;
  std::map<std::string, int> skip_reasons;
  const auto broken = broken_rows(results);
  int rows = 0, skipped = 0, invalid = 0;
  for (const auto* row_pointer : iteration_row_pointers(results)) {
    const auto& row = *row_pointer;
    ++rows;
    if (row.value("skipped", false)) {
      ++skipped;
      ++skip_reasons[row.value("skip_reason", "")];
      continue;
    }
    if (row["validated"] == false) ++invalid;
    if (!row.contains("headline") ||
        (row.contains("name") && is_broken(broken, row["name"].get<std::string>(), row)))
      continue;
    const auto label = row["headline"].get<std::string>();
    auto& best = headline[label];
    if (!best || row.value("bytes", 0.0) > best->value("bytes", 0.0)) best = &row;
  }
  fmt::print(out, "headline throughputs ({} measurements, {} skipped, {} invalid):\n", rows,
             skipped, invalid);
  const auto rate_field = [](const nlohmann::json& row) {
    return row.contains("flop_per_second") ? "flop_per_second" : "bytes_per_second";
  };
  std::map<std::string, std::string> field_by_name;
  for (const auto& [label, best] : headline)
    field_by_name[(*best)["name"].get<std::string>()] = rate_field(*best);
  const auto rates = values_by_name(results, field_by_name, broken);
  for (const auto& [label, best] : headline) {
    const auto& row = *best;
    const auto name = row["name"].get<std::string>();
    const bool flops = row.contains("flop_per_second");
    const auto found = rates.find(name);
    const double rate = found == rates.end() ? std::numeric_limits<double>::quiet_NaN()
                                             : median_of_values(found->second);
    std::string line =
        fmt::format("  {:<34} {}", printable(label), rate_text(rate, flops ? "FLOP/s" : "B/s"));
    // Where the size is: the swept parameter when the row names one (n = 1024), else its bytes.
    const std::string sweep = row.value("sweep", "");
    if (!sweep.empty() && sweep != "bytes" && row.contains(sweep) && row[sweep].is_number())
      line += fmt::format(" at {} = {}", printable(sweep), row[sweep].dump());
    else if (row.contains("bytes"))
      line += fmt::format(" at {}", format_size(row["bytes"].get<std::uint64_t>()));
    const double ceiling = row.value("ceiling_bytes_per_second", 0.0);
    if (ceiling > 0 && !flops) {
      const bool link = row.value("op", "") == "device_copy";
      line += fmt::format(" ({:.0f}% of the {})", 100 * rate / ceiling,
                          link ? "link's theoretical rate" : "theoretical ceiling");
    }
    fmt::print(out, "{}\n", line);
  }
  for (const auto& family : families)
    if (family.print_summary) family.print_summary(out, results);
  for (const auto& [reason, count] : skip_reasons)
    fmt::print(out, "  skipped {:>4}: {}\n", count, printable(reason));
  print_self_checks(out, results);
  // The analysis's findings (crossovers, fits, overlap, ceilings), when the file has been analysed.
  if (results.contains("analysis") && results["analysis"].contains("headlines")) {
    fmt::print(out, "findings:\n");
    for (const auto& line : results["analysis"]["headlines"])
      fmt::print(out, "  {}\n", printable(line.get<std::string>()));
  }
}

}  // namespace offloadbench
