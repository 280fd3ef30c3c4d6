// analyze(): the `analysis` block of a results file, from its per-repetition rows. Rows that were
// skipped or failed validation are left out; every section is computed from whatever families and
// fields the file holds, so a CPU-only, partial or single-family file gives empty sections.
#include "harness/analysis/analysis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "harness/analysis/analysis_detail.h"
#include "harness/analysis/family_analysis.h"
#include "harness/analysis/invariants.h"
#include "harness/results/results.h"

namespace offloadbench {

namespace detail {

std::vector<Measured> measured_cases(const nlohmann::json& results) {
  std::map<std::string, std::size_t> index;
  std::vector<Measured> cases;
  for (const auto* row_pointer : iteration_row_pointers(results)) {
    const auto& row = *row_pointer;
    if (row.value("skipped", false) || row.value("error_occurred", false)) continue;
    if (row.contains("validated") && row["validated"] == false) continue;
    if (!row.contains("name") || !row["name"].is_string()) continue;
    const double seconds = row_seconds(row);
    if (!std::isfinite(seconds) || seconds <= 0) continue;
    const auto name = row["name"].get<std::string>();
    auto [it, added] = index.emplace(name, cases.size());
    if (added) cases.push_back({name, &row, {}, {}});
    cases[it->second].seconds.push_back(seconds);
    cases[it->second].rows.push_back(&row);
  }
  return cases;
}

double number(const nlohmann::json& row, const std::string& key) {
  if (row.contains(key) && row[key].is_number()) return row[key].get<double>();
  return std::numeric_limits<double>::quiet_NaN();
}

std::string text(const nlohmann::json& row, const std::string& key) {
  return row.contains(key) && row[key].is_string() ? row[key].get<std::string>() : std::string();
}

}  // namespace detail

nlohmann::json crossover_json(const Crossover& c) {
  nlohmann::json j = {{"kind", to_string(c.kind)},
                      {"gpu_wins_somewhere_below", c.gpu_wins_somewhere_below}};
  const bool crossing = c.kind == CrossoverKind::crossover;
  j["size"] = crossing ? nlohmann::json(c.size) : nlohmann::json(nullptr);
  j["bracket_low"] = crossing ? nlohmann::json(c.bracket_low) : nlohmann::json(nullptr);
  j["bracket_high"] = crossing ? nlohmann::json(c.bracket_high) : nlohmann::json(nullptr);
  j["located"] = c.located;
  j["low"] = c.low ? nlohmann::json(*c.low) : nlohmann::json(nullptr);
  j["high"] = c.high ? nlohmann::json(*c.high) : nlohmann::json(nullptr);
  return j;
}

namespace {

using detail::Measured;
using detail::number;
using detail::text;

bool is_gpu_view(const std::string& view) { return view.rfind("gpu_", 0) == 0; }

// What a CPU row ran, in a few words: its series, else its library when that is one word, else its
// label up to the first ';' or ',' ("GEMMs: all oneDNN"); "" when none says.
std::string cpu_library(const nlohmann::json& row) {
  if (const auto series = text(row, "series"); !series.empty()) return series;
  if (const auto library = text(row, "library");
      !library.empty() && library.find(' ') == std::string::npos)
    return library;
  const auto label = text(row, "label");
  return label.substr(0, label.find_first_of(";,"));
}

// (view, series, size) -> case, for the rows of one compare_group.
using ViewKey = std::tuple<std::string, std::string, double>;

// Speedups of every GPU (view, series) over every CPU view at each size both measured, and the
// crossover of each such curve.
void add_speedups(const std::vector<Measured>& cases, nlohmann::json& out) {
  std::map<std::string, std::map<ViewKey, const Measured*>> groups;
  for (const auto& c : cases) {
    const auto group = text(c.row(), "compare_group"), view = text(c.row(), "view"),
               sweep = text(c.row(), "sweep");
    if (group.empty() || view.empty() || sweep.empty()) continue;
    const double size = number(c.row(), sweep);
    if (!std::isfinite(size) || size <= 0) continue;
    groups[group].emplace(ViewKey{view, text(c.row(), "series"), size}, &c);
  }
  for (const auto& [group, by_key] : groups) {
    std::set<std::pair<std::string, std::string>> gpu_curves;
    std::set<std::string> cpu_views;
    for (const auto& [key, c] : by_key) {
      const auto& [view, series, size] = key;
      if (is_gpu_view(view))
        gpu_curves.insert({view, series});
      else
        cpu_views.insert(view);
    }
    for (const auto& [view, series] : gpu_curves)
      for (const auto& cpu_view : cpu_views) {
        std::vector<SpeedupPoint> points;
        std::set<std::string> libraries;  // the CPU rows the curve used, named
        const Measured* any = nullptr;
        for (const auto& [key, gpu] : by_key) {
          if (std::get<0>(key) != view || std::get<1>(key) != series) continue;
          const double size = std::get<2>(key);
          // The CPU row of the same size: the same series if the CPU has one, else the fastest of
          // its series (OpenBLAS or oneDNN, or an anchor such as PyTorch merged in): a speedup over
          // a CPU library slower than another one measured beside it would flatter the GPU.
          const Measured* cpu = nullptr;
          bool same_series = false;
          for (const auto& [ckey, candidate] : by_key) {
            if (std::get<0>(ckey) != cpu_view || std::get<2>(ckey) != size || same_series) continue;
            if (std::get<1>(ckey) == series)
              cpu = candidate, same_series = true;
            else if (!cpu || median(candidate->seconds) < median(cpu->seconds))
              cpu = candidate;
          }
          if (!cpu) continue;
          any = gpu;
          if (const auto library = cpu_library(cpu->row()); !library.empty())
            libraries.insert(library);
          const auto [gmin, gmax] = std::minmax_element(gpu->seconds.begin(), gpu->seconds.end());
          const auto [cmin, cmax] = std::minmax_element(cpu->seconds.begin(), cpu->seconds.end());
          const double gpu_s = median(gpu->seconds), cpu_s = median(cpu->seconds);
          SpeedupPoint p{size, cpu_s / gpu_s, *cmin / *gmax, *cmax / *gmin};
          points.push_back(p);
          out["speedups"].push_back({{"compare_group", group},
                                     {"family", text(gpu->row(), "family")},
                                     {"view", view},
                                     {"series", series},
                                     {"cpu_view", cpu_view},
                                     {"sweep", text(gpu->row(), "sweep")},
                                     {"size", size},
                                     {"gpu_seconds", gpu_s},
                                     {"cpu_seconds", cpu_s},
                                     {"speedup", p.speedup},
                                     {"speedup_low", p.speedup_low},
                                     {"speedup_high", p.speedup_high},
                                     {"gpu_name", gpu->name},
                                     {"cpu_name", cpu->name},
                                     {"cpu_library", cpu_library(cpu->row())}});
        }
        if (!any) continue;
        auto c = crossover_json(find_crossover(points));  // by_key is sorted by size within a curve
        std::string named;
        for (const auto& library : libraries) named += (named.empty() ? "" : "/") + library;
        c["cpu_library"] = named;
        c.update({{"compare_group", group},
                  {"family", text(any->row(), "family")},
                  {"view", view},
                  {"series", series},
                  {"cpu_view", cpu_view},
                  {"sweep", text(any->row(), "sweep")},
                  {"smallest_size", points.front().size},
                  {"largest_size", points.back().size},
                  {"speedup_at_largest", points.back().speedup}});
        out["crossovers"].push_back(c);
      }
  }
}

}  // namespace

nlohmann::json analyze(const nlohmann::json& results, const FamilyAnalyses& families) {
  nlohmann::json out = {{"schema_version", 1},
                        {"speedups", nlohmann::json::array()},
                        {"crossovers", nlohmann::json::array()}};
  for (const auto& family : families)
    for (const auto& section : family.sections) out[section] = nlohmann::json::array();
  const auto& context = results.contains("context") ? results["context"] : nlohmann::json::object();
  // Self-checks first: a row that breaks one is in no speedup, fit or headline. Speedups keep the
  // anchors' rows (labelled by their series, drawn beside ours); fits and findings use ours only.
  const auto measured = detail::measured_cases(results);
  auto checked = check_invariants(measured, context, families);
  out["invariants"] = std::move(checked.section);
  const auto cases = without_broken(measured, checked.broken, false);
  const auto ours = without_broken(measured, checked.broken, true);
  add_speedups(cases, out);
  for (const auto& family : families)
    if (family.analyze) family.analyze(ours, context, out);
  out["ceilings"] = detail::check_ceilings(results);
  out["headlines"] = detail::headlines(results, ours, out, families);
  return out;
}

}  // namespace offloadbench
