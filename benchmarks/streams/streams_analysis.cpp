// The streams family's analysis: per case, the speedup over serial, the bound for its device and
// the overlap efficiency (the `overlap` section), and the headline of the best pipeline.
#include "benchmarks/streams/streams_analysis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "harness/analysis/stats.h"

namespace offloadbench {

namespace {

using detail::Measured;
using detail::number;
using detail::text;

// Median over the repetitions of the first of `keys` the rows hold as a number (the streams
// family names its own fields; these are the names issue 3 describes), else of the first numeric
// field whose name contains both `part` and `also` (e.g. "two_engine_bound_speedup").
double median_field(const Measured& c, std::initializer_list<const char*> keys,
                    const char* part = nullptr, const char* also = "") {
  std::vector<std::string> candidates(keys.begin(), keys.end());
  if (part)
    for (auto it = c.row().begin(); it != c.row().end(); ++it)
      if (it.key().find(part) != std::string::npos && it.key().find(also) != std::string::npos &&
          it.value().is_number())
        candidates.push_back(it.key());
  for (const auto& key : candidates) {
    std::vector<double> values;
    for (const auto* row : c.rows)
      if (double v = number(*row, key); std::isfinite(v)) values.push_back(v);
    if (!values.empty()) return median(values);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// Per streams case: the achieved speedup over serial, the bound for this device, the efficiency
// (achieved gain / bound gain, computed here when the row does not carry it).
void add_overlap(const std::vector<Measured>& cases, nlohmann::json& out) {
  static const char* parameters[] = {"op",          "case",           "case_kind",   "kind",
                                     "streams",     "chunks",         "order",       "issue_order",
                                     "host_memory", "workload_ratio", "ratio",       "bytes",
                                     "device",      "copy_engines",   "bound_model", "series"};
  for (const auto& c : cases) {
    if (text(c.row(), "family") != "streams") continue;
    const double s = median_field(c, {"speedup_over_serial", "speedup_vs_serial", "speedup"});
    const double b =
        median_field(c, {"bound_speedup", "speedup_bound", "bound"}, "bound", "speedup");
    double e = median_field(c, {"overlap_efficiency", "efficiency"}, "efficiency");
    if (!std::isfinite(s) && !std::isfinite(b)) continue;
    if (!std::isfinite(e) && std::isfinite(s) && std::isfinite(b) && b > 1) e = (s - 1) / (b - 1);
    nlohmann::json j = {{"name", c.name},
                        {"seconds", median(c.seconds)},
                        {"speedup_vs_serial", s},
                        {"bound_speedup", b},
                        {"overlap_efficiency", e}};
    if (double shared = median_field(c, {"shared_link_efficiency"}); std::isfinite(shared))
      j["shared_link_efficiency"] = shared;
    for (const char* key : parameters)
      if (c.row().contains(key)) j[key] = c.row()[key];
    out["overlap"].push_back(j);
  }
}

void overlap_lines(const nlohmann::json& analysis, std::vector<std::string>& out) {
  const nlohmann::json* best = nullptr;
  double best_pageable = NAN;
  for (const auto& o : analysis["overlap"]) {
    if (!o["speedup_vs_serial"].is_number()) continue;
    if (o.value("host_memory", std::string()) == "pageable") {
      const double s = o["speedup_vs_serial"].get<double>();
      best_pageable = std::isnan(best_pageable) ? s : std::max(best_pageable, s);
      continue;
    }
    if (!best || o["speedup_vs_serial"].get<double>() > (*best)["speedup_vs_serial"].get<double>())
      best = &o;
  }
  if (best) {
    std::string line = fmt::format("streams: best pipeline {:.2f}× over serial",
                                   (*best)["speedup_vs_serial"].get<double>());
    if ((*best)["bound_speedup"].is_number())
      line +=
          fmt::format(" (bound {:.2f}×", (*best)["bound_speedup"].get<double>()) +
          ((*best)["overlap_efficiency"].is_number()
               ? fmt::format(", {:.0f}% efficiency",
                             100 * (*best)["overlap_efficiency"].get<double>())
               : "") +
          (best->contains("shared_link_efficiency") && (*best)["shared_link_efficiency"].is_number()
               ? fmt::format("; {:.0f}% of the bound with H2D and D2H sharing the link",
                             100 * (*best)["shared_link_efficiency"].get<double>())
               : "") +
          ")";
    out.push_back(line + fmt::format(": {}", (*best)["name"].get<std::string>()));
  }
  if (!std::isnan(best_pageable))
    out.push_back(
        fmt::format("streams: pageable pipelines at most {:.2f}× over serial", best_pageable));
}

// ---- self-checks ----

// The rows that share one calibration: the same device, host memory, workload ratio and bytes.
using CalibrationKey = std::tuple<std::string, std::string, double, double>;
std::map<CalibrationKey, std::vector<const Measured*>> calibration_groups(
    const std::vector<Measured>& cases) {
  std::map<CalibrationKey, std::vector<const Measured*>> groups;
  for (const auto& c : cases) {
    const auto& row = c.row();
    if (text(row, "family") != "streams" || !std::isfinite(number(row, "serial_time_s"))) continue;
    groups[{row.contains("device") ? row["device"].dump() : "", text(row, "host_memory"),
            number(row, "workload_ratio"), number(row, "bytes")}]
        .push_back(&c);
  }
  return groups;
}

std::string ms(double seconds) { return fmt::format("{:.3g} ms", seconds * 1e3); }

// A case's calibration (each stage timed alone, before the case, to size the kernel and compute
// the bound) against the same work measured as a plain row of the same run: the serial case's own
// time for serial_time_s, the fastest calibration of the same copy for h2d/d2h_time_s. A stage
// timed during a slowdown sizes the kernel wrongly and inflates the bound (efficiency above 100%).
std::vector<BrokenRow> calibration_matches_plain(const std::vector<Measured>& cases,
                                                 const nlohmann::json&) {
  namespace limits = invariant_limits;
  const auto groups = calibration_groups(cases);
  // Per (device, host memory, bytes) and stage: the fastest calibration of that copy and its group.
  std::map<std::tuple<std::string, std::string, double, std::string>, std::pair<double, double>>
      fastest;
  for (const auto& [key, members] : groups)
    for (const char* stage : {"h2d_time_s", "d2h_time_s"}) {
      const double t = median_field(*members.front(), {stage});
      auto& slot = fastest[{std::get<0>(key), std::get<1>(key), std::get<3>(key), stage}];
      if (std::isfinite(t) && (slot.first == 0 || t < slot.first)) slot = {t, std::get<2>(key)};
    }
  std::vector<BrokenRow> out;
  for (const auto& [key, members] : groups) {
    std::string why;
    const double serial_calibrated = median_field(*members.front(), {"serial_time_s"});
    for (const auto* c : members)
      if (text(c->row(), "op") == "serial") {
        const double measured = median(c->seconds);
        if (std::max(measured, serial_calibrated) >
            limits::kStageTime * std::min(measured, serial_calibrated))
          why = fmt::format("serial_time_s {} from the calibration, but the serial case took {}",
                            ms(serial_calibrated), ms(measured));
      }
    for (const char* stage : {"h2d_time_s", "d2h_time_s"}) {
      const double t = median_field(*members.front(), {stage});
      const auto& [best, best_ratio] =
          fastest[{std::get<0>(key), std::get<1>(key), std::get<3>(key), stage}];
      if (why.empty() && std::isfinite(t) && t > limits::kStageTime * best)
        why = fmt::format("{} {} where the same copy was calibrated at {} (workload ratio {:g})",
                          stage, ms(t), ms(best), best_ratio);
    }
    if (why.empty()) continue;
    for (const auto* c : members)
      out.push_back({c->name, -1, "calibrated during a slowdown: " + why});
  }
  return out;
}

// The best pipeline is the fastest of the shapes it searched: never slower than a fixed shape of
// the same group measured beside it.
std::vector<BrokenRow> best_not_slower_than_fixed(const std::vector<Measured>& cases,
                                                  const nlohmann::json&) {
  std::vector<BrokenRow> out;
  for (const auto& [key, members] : calibration_groups(cases))
    for (const auto* best : members) {
      if (text(best->row(), "op") != "pipelined_best") continue;
      const double best_s = median(best->seconds);
      for (const auto* fixed : members)
        if (text(fixed->row(), "op") == "pipelined" &&
            best_s > invariant_limits::kEfficiency * median(fixed->seconds)) {
          out.push_back(
              {best->name, -1,
               fmt::format("the best pipeline ({}) is {:.2f}× slower than {} ({}), one of "
                           "the shapes it chose among",
                           ms(best_s), best_s / median(fixed->seconds), fixed->name,
                           ms(median(fixed->seconds)))});
          break;
        }
    }
  return out;
}

}  // namespace

FamilyAnalysis streams_analysis() {
  FamilyAnalysis family;
  family.family = "streams";
  family.sections = {"overlap"};
  family.gpu_sections = {"overlap"};
  family.analyze = [](const std::vector<Measured>& cases, const nlohmann::json&,
                      nlohmann::json& out) { add_overlap(cases, out); };
  family.lines = overlap_lines;
  family.invariants = {
      {"streams_calibration",
       "a stage time in a streams calibration is within 10% of the same work measured plainly",
       calibration_matches_plain, true},
      {"streams_best_not_slower",
       "the best pipeline is not slower (5% slack) than a shape it chose among",
       best_not_slower_than_fixed, true},
  };
  return family;
}

}  // namespace offloadbench
