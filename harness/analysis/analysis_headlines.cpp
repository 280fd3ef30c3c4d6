// The headline findings of an analysed file, one short line each: link rates, where the GPU starts
// to win (or that it never does in the measured range), when pinning pays, how much overlap buys,
// and whether anything is above its ceiling. Shown by `run`, `summary` and report.html.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/analysis/analysis_detail.h"
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
  return whole ? fmt::format("{:.0f} {}{}", value, units[u], suffix) : fmt::format("{:.3g} {}{}", value, units[u], suffix);
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

// "PCIe Gen5 x16" from the context, or "the link" when the file does not say.
std::string link_label(const nlohmann::json& context, int device) {
  if (context.contains("cuda") && context["cuda"].contains("gpus"))
    for (const auto& gpu : context["cuda"]["gpus"])
      if (gpu.is_object() && gpu.value("index", -1) == device && gpu.contains("pcie_link")) {
        const double generation = number(gpu["pcie_link"], "current_generation");
        const double width = number(gpu["pcie_link"], "current_width");
        if (generation > 0 && width > 0) return fmt::format("PCIe Gen{:.0f} x{:.0f}", generation, width);
      }
  return "the link";
}

std::string gb_per_s(double v) { return fmt::format("{:.1f} GB/s", v / 1e9); }

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
  std::string who = fmt::format("{}{}: {}", c.value("compare_group", std::string()), series.empty() ? "" : " " + series,
                                view_phrase(c.value("view", std::string())));
  const auto vs = cpu_phrase(c.value("cpu_view", std::string()));
  const auto kind = c.value("kind", std::string());
  auto size = [&](const char* key) { return format_sweep_size(sweep, c[key].is_number() ? c[key].get<double>() : NAN); };
  if (kind == "crossover") {
    std::string range = fmt::format(" (range {}–{})", c["low"].is_number() ? size("low") : "below " + size("smallest_size"),
                                    c["high"].is_number() ? size("high") : "beyond " + size("largest_size"));
    return fmt::format("{} wins from {} ≈ {}{} vs {}", who, sweep, size("size"), range, vs);
  }
  if (kind == "gpu_wins_all")
    return fmt::format("{} wins at every measured size ({} {}–{}) vs {}", who, sweep, size("smallest_size"),
                       size("largest_size"), vs);
  return fmt::format("{} never wins up to {} {} ({:.2f}× at the largest) vs {}", who, sweep, size("largest_size"),
                     c.value("speedup_at_largest", 0.0), vs);
}

void transfer_lines(const nlohmann::json& results, const nlohmann::json& analysis, std::vector<std::string>& out) {
  const auto& context = results.contains("context") ? results["context"] : nlohmann::json::object();
  // Per (device, direction): the median rate at the largest size, per host memory kind.
  std::map<std::pair<int, std::string>, std::map<std::string, std::pair<double, double>>> rates;
  for (const auto& c : measured_cases(results)) {
    if (text(c.row(), "op") != "device_copy" || !c.row().contains("device") || !c.row()["device"].is_number_integer())
      continue;
    std::vector<double> bps;
    for (const auto* row : c.rows)
      if (double v = number(*row, "bytes_per_second"); std::isfinite(v)) bps.push_back(v);
    auto& slot = rates[{c.row()["device"].get<int>(), text(c.row(), "direction")}][text(c.row(), "host_memory")];
    const double bytes = number(c.row(), "bytes");
    if (bytes >= slot.first && !bps.empty()) slot = {bytes, median(bps)};
  }
  std::vector<std::pair<int, std::string>> order;  // per device: H2D, D2H, then both at once
  for (const auto& [key, unused] : rates) order.push_back(key);
  auto direction_rank = [](const std::string& d) { return d == "h2d" ? 0 : d == "d2h" ? 1 : 2; };
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return std::make_pair(a.first, direction_rank(a.second)) < std::make_pair(b.first, direction_rank(b.second));
  });
  for (const auto& key : order) {
    const auto& by_memory = rates.at(key);
    const auto& [device, direction] = key;
    const char* label = direction == "h2d" ? "H2D" : direction == "d2h" ? "D2H" : "H2D+D2H";
    std::string line = fmt::format("GPU {} {}", device, label);
    bool first = true;
    for (const char* memory : {"pinned", "pageable", "registered", "write_combined"}) {
      const auto it = by_memory.find(memory);
      if (it == by_memory.end()) continue;
      line += fmt::format("{}{} {}", first ? " " : " · ", memory, gb_per_s(it->second.second));
      const double link = link_bytes_per_second(context, device) * (direction == "bidirectional" ? 2 : 1);
      if (first && link > 0)
        line += fmt::format(" ({:.0f}% of {})", 100 * it->second.second / link, link_label(context, device));
      first = false;
    }
    for (const auto& fit : analysis["transfer_model"])
      if (fit["device"] == device && fit["direction"] == direction && fit["host_memory"] == "pinned" &&
          fit.value("ok", false) && fit["half_bandwidth_bytes"].is_number())
        line += fmt::format(" · pinned latency {:.1f} µs, half bandwidth at {}", fit["alpha_seconds"].get<double>() * 1e6,
                            format_sweep_size("bytes", fit["half_bandwidth_bytes"].get<double>()));
    out.push_back(line);
  }
  // Pinning: the largest size measured, H2D, cudaHostAlloc.
  const nlohmann::json* largest = nullptr;
  for (const auto& b : analysis["pinning_break_even"])
    if (b["direction"] == "h2d" && b["host_memory"] == "pinned" && (!largest || b["bytes"] > (*largest)["bytes"]))
      largest = &b;
  if (largest) {
    const auto size = format_sweep_size("bytes", (*largest)["bytes"].get<double>());
    out.push_back((*largest)["break_even_copies"].is_number()
                      ? fmt::format("pinning {} once pays after {} H2D copies", size,
                                    (*largest)["break_even_copies"].get<long long>())
                      : fmt::format("pinning {} never pays: pinned H2D copies are not faster", size));
  }
}

void crossover_lines(const nlohmann::json& analysis, std::vector<std::string>& out) {
  const std::vector<std::string> gpu_order = {"gpu_pinned", "gpu_pageable", "gpu_pinned_overlap", "gpu_kernel"};
  const std::vector<std::string> cpu_order = {"cpu_all", "cpu_1t"};
  std::map<std::pair<std::string, std::string>, const nlohmann::json*> best;  // (group, series)
  for (const auto& c : analysis["crossovers"]) {
    auto& slot = best[{c["compare_group"].get<std::string>(), c["series"].get<std::string>()}];
    auto better = [&](const nlohmann::json& a, const nlohmann::json& b) {
      const auto ka = std::make_pair(rank(gpu_order, a["view"]), rank(cpu_order, a["cpu_view"]));
      const auto kb = std::make_pair(rank(gpu_order, b["view"]), rank(cpu_order, b["cpu_view"]));
      return ka < kb;
    };
    if (!slot || better(c, *slot)) slot = &c;
  }
  for (const auto& [key, c] : best) out.push_back(crossover_line(*c));
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
    if (!best || o["speedup_vs_serial"].get<double>() > (*best)["speedup_vs_serial"].get<double>()) best = &o;
  }
  if (best) {
    std::string line = fmt::format("streams: best pipeline {:.2f}× over serial", (*best)["speedup_vs_serial"].get<double>());
    if ((*best)["bound_speedup"].is_number())
      line += fmt::format(" (bound {:.2f}×", (*best)["bound_speedup"].get<double>()) +
              ((*best)["overlap_efficiency"].is_number()
                   ? fmt::format(", {:.0f}% efficiency", 100 * (*best)["overlap_efficiency"].get<double>())
                   : "") +
              (best->contains("shared_link_efficiency") && (*best)["shared_link_efficiency"].is_number()
                   ? fmt::format("; {:.0f}% of the bound with H2D and D2H sharing the link",
                                 100 * (*best)["shared_link_efficiency"].get<double>())
                   : "") + ")";
    out.push_back(line + fmt::format(": {}", (*best)["name"].get<std::string>()));
  }
  if (!std::isnan(best_pageable)) out.push_back(fmt::format("streams: pageable pipelines at most {:.2f}× over serial", best_pageable));
}

}  // namespace

std::vector<std::string> headlines(const nlohmann::json& results, const nlohmann::json& analysis) {
  std::vector<std::string> out;
  transfer_lines(results, analysis, out);
  crossover_lines(analysis, out);
  overlap_lines(analysis, out);
  idiom_lines(analysis, out);
  batches_lines(analysis, out);
  const auto& ceilings = analysis["ceilings"];
  if (!ceilings["suspects"].empty())
    out.push_back(fmt::format("SUSPECT: {} throughput(s) above their physical ceiling, e.g. {}",
                              ceilings["suspects"].size(), ceilings["suspects"][0]["name"].get<std::string>()));
  else if (ceilings["checked"].get<int>() > 0)
    out.push_back(fmt::format("ceilings: all {} checked throughputs are below their physical limits",
                              ceilings["checked"].get<int>()));
  const bool any_gpu = !analysis["transfer_model"].empty() || !analysis["speedups"].empty() || !analysis["overlap"].empty() ||
                       (analysis.contains("batches") && !analysis["batches"].empty());
  if (!any_gpu) {
    const bool has_cuda = results.contains("context") && results["context"].contains("cuda");
    const auto reason = has_cuda ? text(results["context"]["cuda"], "unavailable_reason") : std::string();
    out.push_back(reason.empty() ? "no GPU measurements in this file" : "no GPU measurements: " + reason);
  }
  return out;
}

}  // namespace detail
}  // namespace offloadbench
