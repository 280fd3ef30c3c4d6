// The transfer family's analysis: one latency/bandwidth fit per GPU, direction and host memory
// (transfer_model), the copies after which pinning once pays (pinning_break_even), the tensor count
// from which packing small tensors pays (small_tensors_packing), PyTorch's copy idioms and pinning
// at scale (transfer_idioms_analysis.cpp), and their headline lines (link rates first).
#include "benchmarks/transfer/transfer_analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/analysis/stats.h"

namespace offloadbench {

namespace {

using detail::link_bytes_per_second;
using detail::Measured;
using detail::number;
using detail::text;

// A transfer row of `op` on a GPU with a byte count (sizes are map keys: never NaN), its host
// memory placed as by default (--host-numa local): the fits compare like with like.
bool gpu_transfer_row(const nlohmann::json& row, const char* op) {
  const auto placement = text(row, "host_numa");
  return text(row, "op") == op && row.contains("device") && row["device"].is_number_integer() &&
         std::isfinite(number(row, "bytes")) && (placement.empty() || placement == "local");
}

int directions_of(const nlohmann::json& row) {
  return text(row, "direction") == "bidirectional" ? 2 : 1;
}

// One latency/bandwidth fit per (device, direction, host memory) over every repetition.
void add_transfer_model(const std::vector<Measured>& cases, const nlohmann::json& context,
                        nlohmann::json& out) {
  std::map<std::tuple<int, std::string, std::string>,
           std::pair<std::vector<double>, std::vector<double>>>
      series;
  for (const auto& c : cases) {
    if (!gpu_transfer_row(c.row(), "device_copy")) continue;
    const double counted = number(c.row(), "bytes") * directions_of(c.row());
    auto& [x, t] = series[{c.row()["device"].get<int>(), text(c.row(), "direction"),
                           text(c.row(), "host_memory")}];
    for (double s : c.seconds) {
      x.push_back(counted);
      t.push_back(s);
    }
  }
  for (const auto& [key, xt] : series) {
    const auto& [device, direction, memory] = key;
    const auto fit = fit_transfer_model(xt.first, xt.second);
    nlohmann::json j = {{"device", device},
                        {"direction", direction},
                        {"host_memory", memory},
                        {"points", fit.points},
                        {"ok", fit.ok}};
    if (fit.ok) {
      j.update({{"alpha_seconds", fit.alpha_seconds},
                {"beta_bytes_per_second", fit.beta_bytes_per_second},
                {"r_squared", fit.r_squared}});
      j["half_bandwidth_bytes"] =
          fit.half_bandwidth_bytes ? nlohmann::json(*fit.half_bandwidth_bytes) : nullptr;
      const double link =
          detail::link_bytes_per_second(context, device) * (direction == "bidirectional" ? 2 : 1);
      if (link > 0)
        j.update({{"link_bytes_per_second", link},
                  {"beta_fraction_of_link", fit.beta_bytes_per_second / link}});
    }
    out["transfer_model"].push_back(j);
  }
}

// Per pin operation, direction and size: copies after which pinning once beats pageable copies.
void add_pinning_break_even(const std::vector<Measured>& cases, nlohmann::json& out) {
  std::map<std::tuple<int, std::string, std::string, double>, double>
      copy_seconds;  // device, dir, memory, bytes
  for (const auto& c : cases)
    if (gpu_transfer_row(c.row(), "device_copy"))
      copy_seconds[{c.row()["device"].get<int>(), text(c.row(), "direction"),
                    text(c.row(), "host_memory"), number(c.row(), "bytes")}] = median(c.seconds);
  for (const auto& c : cases) {
    if (!gpu_transfer_row(c.row(), "pin_cost")) continue;
    const auto operation = text(c.row(), "pin_operation");
    const std::string memory =
        operation.rfind("cudaHostRegister", 0) == 0 ? "registered" : "pinned";
    const int device = c.row()["device"].get<int>();
    const double bytes = number(c.row(), "bytes"), pin = median(c.seconds);
    for (const char* direction : {"h2d", "d2h"}) {
      const auto pageable = copy_seconds.find({device, direction, "pageable", bytes});
      const auto pinned = copy_seconds.find({device, direction, memory, bytes});
      if (pageable == copy_seconds.end() || pinned == copy_seconds.end()) continue;
      const auto n = pinning_break_even(pin, pageable->second, pinned->second);
      out["pinning_break_even"].push_back(
          {{"device", device},
           {"pin_operation", operation},
           {"host_memory", memory},
           {"direction", direction},
           {"bytes", bytes},
           {"pin_seconds", pin},
           {"pageable_copy_seconds", pageable->second},
           {"pinned_copy_seconds", pinned->second},
           {"break_even_copies", n ? nlohmann::json(*n) : nullptr}});
    }
  }
}

// "PCIe Gen5 x16" from the context, or "the link" when the file does not say.
std::string link_label(const nlohmann::json& context, int device) {
  if (context.contains("cuda") && context["cuda"].contains("gpus"))
    for (const auto& gpu : context["cuda"]["gpus"])
      if (gpu.is_object() && gpu.value("index", -1) == device && gpu.contains("pcie_link")) {
        const double generation = number(gpu["pcie_link"], "current_generation");
        const double width = number(gpu["pcie_link"], "current_width");
        if (generation > 0 && width > 0)
          return fmt::format("PCIe Gen{:.0f} x{:.0f}", generation, width);
      }
  return "the link";
}

std::string gb_per_s(double v) { return fmt::format("{:.1f} GB/s", v / 1e9); }

// The measured 1-byte round trip of `direction` on `device` (latency probe rows), in seconds; NaN
// when the file has none. The fit's alpha is a per-copy overhead of large copies, not this latency.
double round_trip_seconds(const std::vector<Measured>& cases, int device,
                          const std::string& direction) {
  for (const auto& c : cases) {
    if (text(c.row(), "op") != "latency" ||
        text(c.row(), "probe") != "round_trip_" + direction + "_pinned")
      continue;
    if (c.row().contains("device") && c.row()["device"].is_number_integer() &&
        c.row()["device"].get<int>() != device)
      continue;
    std::vector<double> ns;
    for (const auto* row : c.rows)
      if (double v = number(*row, "latency_ns"); std::isfinite(v)) ns.push_back(v);
    if (!ns.empty()) return median(ns) * 1e-9;
  }
  return NAN;
}

void transfer_lines(const std::vector<Measured>& cases, const nlohmann::json& context,
                    const nlohmann::json& analysis, std::vector<std::string>& out) {
  // Per (device, direction): the median rate at the largest size, per host memory kind.
  std::map<std::pair<int, std::string>, std::map<std::string, std::pair<double, double>>> rates;
  for (const auto& c : cases) {
    if (text(c.row(), "op") != "device_copy" || !c.row().contains("device") ||
        !c.row()["device"].is_number_integer())
      continue;
    std::vector<double> bps;
    for (const auto* row : c.rows)
      if (double v = number(*row, "bytes_per_second"); std::isfinite(v)) bps.push_back(v);
    auto& slot = rates[{c.row()["device"].get<int>(), text(c.row(), "direction")}]
                      [text(c.row(), "host_memory")];
    const double bytes = number(c.row(), "bytes");
    if (bytes >= slot.first && !bps.empty()) slot = {bytes, median(bps)};
  }
  std::vector<std::pair<int, std::string>> order;  // per device: H2D, D2H, then both at once
  for (const auto& [key, unused] : rates) order.push_back(key);
  auto direction_rank = [](const std::string& d) { return d == "h2d" ? 0 : d == "d2h" ? 1 : 2; };
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return std::make_pair(a.first, direction_rank(a.second)) <
           std::make_pair(b.first, direction_rank(b.second));
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
      const double link =
          link_bytes_per_second(context, device) * (direction == "bidirectional" ? 2 : 1);
      if (first && link > 0)
        line += fmt::format(" ({:.0f}% of {})", 100 * it->second.second / link,
                            link_label(context, device));
      first = false;
    }
    for (const auto& fit : analysis["transfer_model"])
      if (fit["device"] == device && fit["direction"] == direction &&
          fit["host_memory"] == "pinned" && fit.value("ok", false) &&
          fit["half_bandwidth_bytes"].is_number())
        line += fmt::format(" · pinned per-copy overhead {:.1f} µs (fit), half bandwidth at {}",
                            fit["alpha_seconds"].get<double>() * 1e6,
                            format_sweep_size("bytes", fit["half_bandwidth_bytes"].get<double>()));
    if (const double trip = round_trip_seconds(cases, device, direction); std::isfinite(trip))
      line += fmt::format(" · 1-byte round trip {:.2f} µs (measured)", trip * 1e6);
    out.push_back(line);
  }
  // Pinning: the largest size measured, H2D, cudaHostAlloc.
  const nlohmann::json* largest = nullptr;
  for (const auto& b : analysis["pinning_break_even"])
    if (b["direction"] == "h2d" && b["host_memory"] == "pinned" &&
        (!largest || b["bytes"] > (*largest)["bytes"]))
      largest = &b;
  if (largest) {
    const auto size = format_sweep_size("bytes", (*largest)["bytes"].get<double>());
    out.push_back(
        (*largest)["break_even_copies"].is_number()
            ? fmt::format("pinning {} once pays after {} H2D copies", size,
                          (*largest)["break_even_copies"].get<long long>())
            : fmt::format("pinning {} never pays: pinned H2D copies are not faster", size));
  }
}

// Many small tensors host→device: per GPU and method, the count N from which packing them into one
// pinned staging buffer (packing included) beats that method — find_crossover over N, with
// speedup = the method's median time / the packed median time (the plots draw this section).
void add_small_tensors_packing(const std::vector<Measured>& cases, nlohmann::json& out) {
  constexpr const char* kPacked = "packed_pinned";
  std::map<std::pair<int, std::string>, std::map<double, const Measured*>>
      series;  // (device, method) -> N -> case
  for (const auto& c : cases) {
    const auto& row = c.row();
    if (text(row, "op") != "small_tensors" || !row.contains("device") ||
        !row["device"].is_number_integer())
      continue;
    const double n = number(row, "tensors");
    if (std::isfinite(n) && n > 0) series[{row["device"].get<int>(), text(row, "method")}][n] = &c;
  }
  for (const auto& [key, by_count] : series) {
    const auto& [device, method] = key;
    const auto packed = series.find({device, kPacked});
    if (method == kPacked || packed == series.end()) continue;
    std::vector<SpeedupPoint> points;
    for (const auto& [n, packed_case] : packed->second) {
      const auto other = by_count.find(n);
      if (other == by_count.end()) continue;
      const auto [pmin, pmax] =
          std::minmax_element(packed_case->seconds.begin(), packed_case->seconds.end());
      const auto [omin, omax] =
          std::minmax_element(other->second->seconds.begin(), other->second->seconds.end());
      points.push_back({n, median(other->second->seconds) / median(packed_case->seconds),
                        *omin / *pmax, *omax / *pmin});
    }
    if (points.empty()) continue;
    auto j = crossover_json(find_crossover(points));
    j.update({{"device", device},
              {"versus", method},
              {"smallest_tensors", points.front().size},
              {"largest_tensors", points.back().size},
              {"speedup_at_largest", points.back().speedup}});
    out["small_tensors_packing"].push_back(j);
  }
}

void analyze_transfer(const std::vector<Measured>& cases, const nlohmann::json& context,
                      nlohmann::json& out) {
  add_transfer_model(cases, context, out);
  add_pinning_break_even(cases, out);
  add_small_tensors_packing(cases, out);
  detail::add_torch_idioms(cases, out);
  detail::add_pinning_at_scale(cases, out);
}

}  // namespace

FamilyAnalysis transfer_analysis() {
  FamilyAnalysis family;
  family.family = "transfer";
  family.sections = {"transfer_model", "pinning_break_even", "small_tensors_packing",
                     "torch_idioms",   "pinning_at_scale",   "first_touch_at_scale"};
  family.gpu_sections = {"transfer_model"};
  family.analyze = analyze_transfer;
  family.lead_lines = transfer_lines;
  family.lines = detail::idiom_lines;
  return family;
}

}  // namespace offloadbench
