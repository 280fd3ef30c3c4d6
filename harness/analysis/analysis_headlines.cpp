// The headline findings of an analysed file, one short line each: link rates, where the GPU starts
// to win (or that it never does in the measured range), when pinning pays, how much overlap buys,
// and whether anything is above its ceiling. Shown by `run`, `summary` and report.html.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/analysis/analysis_detail.h"
#include "harness/analysis/family_analysis.h"
#include "harness/analysis/invariants.h"
#include "harness/results/sizes.h"

namespace offloadbench {

namespace {
std::string binary_multiple(double value, const char* suffix) {
  const char* units[] = {"", "Ki", "Mi", "Gi", "Ti"};
  int u = 0;
  while (value >= 1024 && u < 4) {
    value /= 1024;
    ++u;
  }
  const bool whole = std::fabs(value - std::round(value)) < 1e-9;
  return whole ? fmt::format("{:.0f} {}{}", value, units[u], suffix)
               : fmt::format("{:.3g} {}{}", value, units[u], suffix);
}
}  // namespace

std::string format_sweep_size(const std::string& sweep, double size) {
  if (!std::isfinite(size)) return "?";
  if (sweep == "bytes") return binary_multiple(size, "B");
  if (sweep == "elements") return binary_multiple(size, "");
  return size >= 10 ? fmt::format("{:.0f}", size) : fmt::format("{:.3g}", size);
}

namespace detail {

namespace {

std::string view_phrase(const std::string& view) {
  if (view == "gpu_pinned") return "GPU incl. pinned transfers";
  if (view == "gpu_pageable") return "GPU incl. pageable transfers";
  if (view == "gpu_pinned_overlap") return "GPU, pinned transfers overlapped";
  if (view == "gpu_kernel") return "GPU kernel only";
  return view;
}

std::string cpu_phrase(const std::string& view) {
  if (view == "cpu_all") return "CPU all threads";
  if (view == "cpu_1t") return "CPU 1 thread";
  return view;
}

int rank(const std::vector<std::string>& order, const std::string& value) {
  const auto it = std::find(order.begin(), order.end(), value);
  return it == order.end() ? static_cast<int>(order.size()) : static_cast<int>(it - order.begin());
}

std::string crossover_line(const nlohmann::json& c) {
  const auto sweep = c.value("sweep", std::string());
  const auto series = c.value("series", std::string());
  std::string who =
      fmt::format("{}{}: {}", c.value("compare_group", std::string()),
                  series.empty() ? "" : " " + series, view_phrase(c.value("view", std::string())));
  const auto library = c.value("cpu_library", std::string());
  const auto vs = cpu_phrase(c.value("cpu_view", std::string())) +
                  (library.empty() ? "" : " (" + library + ")");
  const auto kind = c.value("kind", std::string());
  auto size = [&](const char* key) {
    return format_sweep_size(sweep, c[key].is_number() ? c[key].get<double>() : NAN);
  };
  if (kind == "crossover") {
    const auto low = c["low"].is_number() ? size("low") : "below " + size("smallest_size");
    const auto high = c["high"].is_number() ? size("high") : "beyond " + size("largest_size");
    // Only a located crossover gets a point: between two measured sizes far apart nothing is known.
    if (c.value("located", false))
      return fmt::format("{} wins from {} ≈ {} (range {}–{}) vs {}", who, sweep, size("size"), low,
                         high, vs);
    return fmt::format("{} wins from {} somewhere in {}–{} (not measured in between) vs {}", who,
                       sweep, low, high, vs);
  }
  if (kind == "gpu_wins_all")
    return fmt::format("{} wins at every measured size ({} {}–{}) vs {}", who, sweep,
                       size("smallest_size"), size("largest_size"), vs);
  return fmt::format("{} never wins up to {} {} ({:.2f}× at the largest) vs {}", who, sweep,
                     size("largest_size"), c.value("speedup_at_largest", 0.0), vs);
}

// Per (group, series): the first GPU view of gpu_order, against the CPU view strongest against it
// (the lowest speedup at the largest size: all threads, unless they lost to one thread on this
// machine).
void crossover_lines(const nlohmann::json& analysis, std::vector<std::string>& out) {
  const std::vector<std::string> gpu_order = {"gpu_pinned", "gpu_pageable", "gpu_pinned_overlap",
                                              "gpu_kernel"};
  std::map<std::pair<std::string, std::string>, const nlohmann::json*> best;  // (group, series)
  for (const auto& c : analysis["crossovers"]) {
    if (is_anchor_row(c)) continue;  // another tool's rows: drawn beside ours, not our finding
    auto& slot = best[{c["compare_group"].get<std::string>(), c["series"].get<std::string>()}];
    auto better = [&](const nlohmann::json& a, const nlohmann::json& b) {
      const auto ka =
          std::make_pair(rank(gpu_order, a["view"]), a.value("speedup_at_largest", 0.0));
      const auto kb =
          std::make_pair(rank(gpu_order, b["view"]), b.value("speedup_at_largest", 0.0));
      return ka < kb;
    };
    if (!slot || better(c, *slot)) slot = &c;
  }
  for (const auto& [key, c] : best) out.push_back(crossover_line(*c));
}

// One line on the self-checks: how many rows broke which rules (they are in no finding below).
void invariant_line(const nlohmann::json& analysis, std::vector<std::string>& out) {
  if (!analysis.contains("invariants")) return;
  const auto& section = analysis["invariants"];
  if (section["violations"].empty()) {
    out.push_back(fmt::format("self-checks: all {} rules hold", section["rules"].size()));
    return;
  }
  std::string broken;
  for (const auto& rule : section["rules"])
    if (rule["cases_broken"].get<std::size_t>() > 0)
      broken += fmt::format("{}{} {}", broken.empty() ? "" : ", ", rule["id"].get<std::string>(),
                            rule["cases_broken"].get<std::size_t>());
  out.push_back(
      fmt::format("SELF-CHECK: {} rows broke a rule and are left out of every finding (cases: {})",
                  section["violations"].size(), broken));
}

}  // namespace

std::vector<std::string> headlines(const nlohmann::json& results, const std::vector<Measured>& ours,
                                   const nlohmann::json& analysis, const FamilyAnalyses& families) {
  std::vector<std::string> out;
  invariant_line(analysis, out);
  const auto& context = results.contains("context") ? results["context"] : nlohmann::json::object();
  for (const auto& family : families)
    if (family.lead_lines) family.lead_lines(ours, context, analysis, out);
  crossover_lines(analysis, out);
  for (const auto& family : families)
    if (family.lines) family.lines(analysis, out);
  const auto& ceilings = analysis["ceilings"];
  if (!ceilings["suspects"].empty())
    out.push_back(fmt::format("SUSPECT: {} throughput(s) above their physical ceiling, e.g. {}",
                              ceilings["suspects"].size(),
                              ceilings["suspects"][0]["name"].get<std::string>()));
  else if (ceilings["checked"].get<int>() > 0)
    out.push_back(
        fmt::format("ceilings: all {} checked throughputs are below their physical limits",
                    ceilings["checked"].get<int>()));
  bool any_gpu = !analysis["speedups"].empty();
  for (const auto& family : families)
    for (const auto& section : family.gpu_sections)
      any_gpu = any_gpu || (analysis.contains(section) && !analysis[section].empty());
  if (!any_gpu) {
    const bool has_cuda = results.contains("context") && results["context"].contains("cuda");
    const auto reason =
        has_cuda ? text(results["context"]["cuda"], "unavailable_reason") : std::string();
    out.push_back(reason.empty() ? "no GPU measurements in this file"
                                 : "no GPU measurements: " + reason);
  }
  return out;
}

}  // namespace detail
}  // namespace offloadbench
