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

namespace {

using detail::Measured;
using detail::number;
using detail::text;

bool is_gpu_view(const std::string& view) { return view.rfind("gpu_", 0) == 0; }

// (view, series, size) -> case, for the rows of one compare_group.
using ViewKey = std::tuple<std::string, std::string, double>;

nlohmann::json crossover_json(const Crossover& c) {
  nlohmann::json j = {{"kind", to_string(c.kind)}, {"gpu_wins_somewhere_below", c.gpu_wins_somewhere_below}};
  j["size"] = c.kind == CrossoverKind::crossover ? nlohmann::json(c.size) : nlohmann::json(nullptr);
  j["low"] = c.low ? nlohmann::json(*c.low) : nlohmann::json(nullptr);
  j["high"] = c.high ? nlohmann::json(*c.high) : nlohmann::json(nullptr);
  return j;
}

// Speedups of every GPU (view, series) over every CPU view at each size both measured, and the
// crossover of each such curve.
void add_speedups(const std::vector<Measured>& cases, nlohmann::json& out) {
  std::map<std::string, std::map<ViewKey, const Measured*>> groups;
  for (const auto& c : cases) {
    const auto group = text(c.row(), "compare_group"), view = text(c.row(), "view"), sweep = text(c.row(), "sweep");
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
      if (is_gpu_view(view)) gpu_curves.insert({view, series});
      else cpu_views.insert(view);
    }
    for (const auto& [view, series] : gpu_curves)
      for (const auto& cpu_view : cpu_views) {
        std::vector<SpeedupPoint> points;
        const Measured* any = nullptr;
        for (const auto& [key, gpu] : by_key) {
          if (std::get<0>(key) != view || std::get<1>(key) != series) continue;
          const double size = std::get<2>(key);
          // The CPU row of the same size: the same series if the CPU has one, else the fastest of its
          // series (OpenBLAS or oneDNN, or an anchor such as PyTorch merged in): a speedup over a CPU
          // library slower than another one measured beside it would flatter the GPU.
          const Measured* cpu = nullptr;
          bool same_series = false;
          for (const auto& [ckey, candidate] : by_key) {
            if (std::get<0>(ckey) != cpu_view || std::get<2>(ckey) != size || same_series) continue;
            if (std::get<1>(ckey) == series) cpu = candidate, same_series = true;
            else if (!cpu || median(candidate->seconds) < median(cpu->seconds)) cpu = candidate;
          }
          if (!cpu) continue;
          any = gpu;
          const auto [gmin, gmax] = std::minmax_element(gpu->seconds.begin(), gpu->seconds.end());
          const auto [cmin, cmax] = std::minmax_element(cpu->seconds.begin(), cpu->seconds.end());
          const double gpu_s = median(gpu->seconds), cpu_s = median(cpu->seconds);
          SpeedupPoint p{size, cpu_s / gpu_s, *cmin / *gmax, *cmax / *gmin};
          points.push_back(p);
          out["speedups"].push_back({{"compare_group", group}, {"family", text(gpu->row(), "family")},
                                     {"view", view}, {"series", series}, {"cpu_view", cpu_view},
                                     {"sweep", text(gpu->row(), "sweep")}, {"size", size},
                                     {"gpu_seconds", gpu_s}, {"cpu_seconds", cpu_s}, {"speedup", p.speedup},
                                     {"speedup_low", p.speedup_low}, {"speedup_high", p.speedup_high},
                                     {"gpu_name", gpu->name}, {"cpu_name", cpu->name}});
        }
        if (!any) continue;
        auto c = crossover_json(find_crossover(points));  // by_key is sorted by size within a curve
        c.update({{"compare_group", group}, {"family", text(any->row(), "family")}, {"view", view},
                  {"series", series}, {"cpu_view", cpu_view}, {"sweep", text(any->row(), "sweep")},
                  {"smallest_size", points.front().size}, {"largest_size", points.back().size},
                  {"speedup_at_largest", points.back().speedup}});
        out["crossovers"].push_back(c);
      }
  }
}

// A transfer row of `op` on a GPU with a byte count (sizes are map keys: never NaN), its host memory
// placed as by default (--host-numa local): the fits compare like with like.
bool gpu_transfer_row(const nlohmann::json& row, const char* op) {
  const auto placement = text(row, "host_numa");
  return text(row, "op") == op && row.contains("device") && row["device"].is_number_integer() &&
         std::isfinite(number(row, "bytes")) && (placement.empty() || placement == "local");
}

int directions_of(const nlohmann::json& row) { return text(row, "direction") == "bidirectional" ? 2 : 1; }

// One latency/bandwidth fit per (device, direction, host memory) over every repetition.
void add_transfer_model(const std::vector<Measured>& cases, const nlohmann::json& context, nlohmann::json& out) {
  std::map<std::tuple<int, std::string, std::string>, std::pair<std::vector<double>, std::vector<double>>> series;
  for (const auto& c : cases) {
    if (!gpu_transfer_row(c.row(), "device_copy")) continue;
    const double counted = number(c.row(), "bytes") * directions_of(c.row());
    auto& [x, t] = series[{c.row()["device"].get<int>(), text(c.row(), "direction"), text(c.row(), "host_memory")}];
    for (double s : c.seconds) {
      x.push_back(counted);
      t.push_back(s);
    }
  }
  for (const auto& [key, xt] : series) {
    const auto& [device, direction, memory] = key;
    const auto fit = fit_transfer_model(xt.first, xt.second);
    nlohmann::json j = {{"device", device}, {"direction", direction}, {"host_memory", memory},
                        {"points", fit.points}, {"ok", fit.ok}};
    if (fit.ok) {
      j.update({{"alpha_seconds", fit.alpha_seconds}, {"beta_bytes_per_second", fit.beta_bytes_per_second},
                {"r_squared", fit.r_squared}});
      j["half_bandwidth_bytes"] = fit.half_bandwidth_bytes ? nlohmann::json(*fit.half_bandwidth_bytes) : nullptr;
      const double link = detail::link_bytes_per_second(context, device) * (direction == "bidirectional" ? 2 : 1);
      if (link > 0) j.update({{"link_bytes_per_second", link}, {"beta_fraction_of_link", fit.beta_bytes_per_second / link}});
    }
    out["transfer_model"].push_back(j);
  }
}

// Per pin operation, direction and size: copies after which pinning once beats pageable copies.
void add_pinning_break_even(const std::vector<Measured>& cases, nlohmann::json& out) {
  std::map<std::tuple<int, std::string, std::string, double>, double> copy_seconds;  // device, dir, memory, bytes
  for (const auto& c : cases)
    if (gpu_transfer_row(c.row(), "device_copy"))
      copy_seconds[{c.row()["device"].get<int>(), text(c.row(), "direction"), text(c.row(), "host_memory"),
                    number(c.row(), "bytes")}] = median(c.seconds);
  for (const auto& c : cases) {
    if (!gpu_transfer_row(c.row(), "pin_cost")) continue;
    const auto operation = text(c.row(), "pin_operation");
    const std::string memory = operation.rfind("cudaHostRegister", 0) == 0 ? "registered" : "pinned";
    const int device = c.row()["device"].get<int>();
    const double bytes = number(c.row(), "bytes"), pin = median(c.seconds);
    for (const char* direction : {"h2d", "d2h"}) {
      const auto pageable = copy_seconds.find({device, direction, "pageable", bytes});
      const auto pinned = copy_seconds.find({device, direction, memory, bytes});
      if (pageable == copy_seconds.end() || pinned == copy_seconds.end()) continue;
      const auto n = pinning_break_even(pin, pageable->second, pinned->second);
      out["pinning_break_even"].push_back(
          {{"device", device}, {"pin_operation", operation}, {"host_memory", memory}, {"direction", direction},
           {"bytes", bytes}, {"pin_seconds", pin}, {"pageable_copy_seconds", pageable->second},
           {"pinned_copy_seconds", pinned->second}, {"break_even_copies", n ? nlohmann::json(*n) : nullptr}});
    }
  }
}

// Median over the repetitions of the first of `keys` the rows hold as a number (the streams
// family names its own fields; these are the names issue 3 describes), else of the first numeric
// field whose name contains both `part` and `also` (e.g. "two_engine_bound_speedup").
double median_field(const Measured& c, std::initializer_list<const char*> keys, const char* part = nullptr,
                    const char* also = "") {
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
  static const char* parameters[] = {"op", "case", "case_kind", "kind", "streams", "chunks", "order",
                                     "issue_order", "host_memory", "workload_ratio", "ratio", "bytes", "device", "copy_engines",
                                     "bound_model", "series"};
  for (const auto& c : cases) {
    if (text(c.row(), "family") != "streams") continue;
    const double s = median_field(c, {"speedup_over_serial", "speedup_vs_serial", "speedup"});
    const double b = median_field(c, {"bound_speedup", "speedup_bound", "bound"}, "bound", "speedup");
    double e = median_field(c, {"overlap_efficiency", "efficiency"}, "efficiency");
    if (!std::isfinite(s) && !std::isfinite(b)) continue;
    if (!std::isfinite(e) && std::isfinite(s) && std::isfinite(b) && b > 1) e = (s - 1) / (b - 1);
    nlohmann::json j = {{"name", c.name}, {"seconds", median(c.seconds)}, {"speedup_vs_serial", s},
                        {"bound_speedup", b}, {"overlap_efficiency", e}};
    if (double shared = median_field(c, {"shared_link_efficiency"}); std::isfinite(shared))
      j["shared_link_efficiency"] = shared;
    for (const char* key : parameters)
      if (c.row().contains(key)) j[key] = c.row()[key];
    out["overlap"].push_back(j);
  }
}

}  // namespace

nlohmann::json analyze(const nlohmann::json& results) {
  nlohmann::json out = {{"schema_version", 1},
                        {"speedups", nlohmann::json::array()},
                        {"crossovers", nlohmann::json::array()},
                        {"transfer_model", nlohmann::json::array()},
                        {"pinning_break_even", nlohmann::json::array()},
                        {"overlap", nlohmann::json::array()},
                        {"torch_idioms", nlohmann::json::array()},
                        {"pinning_at_scale", nlohmann::json::array()},
                        {"first_touch_at_scale", nlohmann::json::array()}};
  const auto cases = detail::measured_cases(results);
  const auto& context = results.contains("context") ? results["context"] : nlohmann::json::object();
  add_speedups(cases, out);
  add_transfer_model(cases, context, out);
  add_pinning_break_even(cases, out);
  add_overlap(cases, out);
  detail::add_torch_idioms(cases, out);
  detail::add_pinning_at_scale(cases, out);
  out["batches"] = detail::batches_crossovers(cases);
  out["ceilings"] = detail::check_ceilings(results);
  out["headlines"] = detail::headlines(results, out);
  return out;
}

}  // namespace offloadbench
