// The copy-idiom and pinning-at-scale sections of the analysis block and their headline lines:
// PyTorch's copy idioms side by side at each batch (which is fastest, by how much, with the range
// the repetitions allow), pinning at scale (pin cost and the copies after which it pays, per method
// and huge-page choice) and the host half, first touch with and without transparent huge pages.
#include "benchmarks/transfer/transfer_analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"

namespace offloadbench::detail {

namespace {

// Median, smallest and largest of a numeric field over a case's repetitions (NaN when none has it).
struct Spread {
  double median = NAN, low = NAN, high = NAN;
};
Spread field_spread(const Measured& c, const std::string& key) {
  std::vector<double> values;
  for (const auto* row : c.rows)
    if (double v = number(*row, key); std::isfinite(v)) values.push_back(v);
  if (values.empty()) return {};
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  return {offloadbench::median(values), *low, *high};
}
Spread seconds_spread(const Measured& c, double per) {
  const auto [low, high] = std::minmax_element(c.seconds.begin(), c.seconds.end());
  return {offloadbench::median(c.seconds) / per, *low / per, *high / per};
}

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

bool on_gpu(const nlohmann::json& row) {
  return row.contains("device") && row["device"].is_number_integer();
}

}  // namespace

void add_torch_idioms(const std::vector<Measured>& cases, nlohmann::json& out) {
  // (device, direction, bytes, gpu_step_s) -> the idioms measured there.
  std::map<std::tuple<int, std::string, double, double>, nlohmann::json> groups;
  for (const auto& c : cases) {
    const auto& row = c.row();
    if (text(row, "op") != "torch_idiom" || !on_gpu(row) || !std::isfinite(number(row, "bytes")))
      continue;
    const double per_call = std::max(1.0, std::isfinite(number(row, "batches_per_call"))
                                              ? number(row, "batches_per_call")
                                              : 1.0);
    const double step = std::isfinite(number(row, "gpu_step_s")) ? number(row, "gpu_step_s") : 0.0;
    auto& group =
        groups[{row["device"].get<int>(), text(row, "direction"), number(row, "bytes"), step}];
    if (group.is_null()) {
      group = {{"device", row["device"]},
               {"direction", text(row, "direction")},
               {"bytes", number(row, "bytes")},
               {"gpu_step_s", step},
               {"idioms", nlohmann::json::array()}};
      for (const char* key : {"batch_images", "image_shape"})
        if (row.contains(key)) group[key] = row[key];
    }
    const auto s = seconds_spread(c, per_call);  // per batch (batch idioms) or per call (results)
    group["idioms"].push_back({{"method", text(row, "method")},
                               {"idiom", text(row, "idiom")},
                               {"seconds", s.median},
                               {"seconds_low", s.low},
                               {"seconds_high", s.high},
                               {"name", c.name}});
  }
  for (auto& [key, group] : groups) {
    auto& idioms = group["idioms"];
    std::sort(idioms.begin(), idioms.end(), [](const auto& a, const auto& b) {
      return a["seconds"].template get<double>() < b["seconds"].template get<double>();
    });
    const auto& fastest = idioms[0];
    group["fastest"] = fastest["method"];
    if (idioms.size() > 1) {
      const auto& next = idioms[1];
      group["runner_up"] = next["method"];
      group["margin"] = next["seconds"].get<double>() / fastest["seconds"].get<double>();
      // The margin the repetitions allow: slowest fastest vs quickest runner-up .. the other way
      // round.
      group["margin_low"] =
          next["seconds_low"].get<double>() / fastest["seconds_high"].get<double>();
      group["margin_high"] =
          next["seconds_high"].get<double>() / fastest["seconds_low"].get<double>();
    }
    for (const auto& idiom : idioms)
      if (idiom["method"] == "to_from_pageable" || idiom["method"] == "result_to_pageable")
        group["speedup_over_pageable"] =
            idiom["seconds"].get<double>() / fastest["seconds"].get<double>();
    out["torch_idioms"].push_back(group);
  }
}

void add_pinning_at_scale(const std::vector<Measured>& cases, nlohmann::json& out) {
  for (const auto& c : cases) {
    const auto& row = c.row();
    const auto op = text(row, "op");
    if (op == "pin_at_scale" && on_gpu(row)) {
      const double pin = field_spread(c, "pin_time_s").median,
                   pageable = field_spread(c, "pageable_copy_s").median,
                   pinned = field_spread(c, "pinned_copy_s").median;
      const auto n = pinning_break_even(pin, pageable, pinned);
      out["pinning_at_scale"].push_back(
          {{"device", row["device"]},
           {"method", text(row, "method")},
           {"pin_operation", text(row, "pin_operation")},
           {"huge_pages", text(row, "huge_pages")},
           {"bytes", number(row, "bytes")},
           {"pin_seconds", finite_or_null(pin)},
           {"unpin_seconds", finite_or_null(field_spread(c, "unpin_time_s").median)},
           {"touch_seconds", finite_or_null(field_spread(c, "touch_time_s").median)},
           {"pageable_copy_seconds", finite_or_null(pageable)},
           {"pinned_copy_seconds", finite_or_null(pinned)},
           {"break_even_copies", n ? nlohmann::json(*n) : nullptr},
           {"huge_page_fraction", finite_or_null(field_spread(c, "huge_page_fraction").median)},
           {"thp_enabled", text(row, "thp_enabled")}});
    } else if (op == "first_touch_at_scale") {
      const double bytes = number(row, "bytes");
      const auto s = seconds_spread(c, 1.0);
      out["first_touch_at_scale"].push_back(
          {{"huge_pages", text(row, "huge_pages")},
           {"bytes", bytes},
           {"seconds", s.median},
           {"seconds_low", s.low},
           {"seconds_high", s.high},
           {"bytes_per_second", bytes / s.median},
           {"ms_per_gib", s.median * 1e3 / (bytes / (1ull << 30))},
           {"huge_page_fraction", finite_or_null(field_spread(c, "huge_page_fraction").median)},
           {"thp_enabled", text(row, "thp_enabled")},
           {"thp_defrag", text(row, "thp_defrag")}});
    }
  }
}

namespace {

std::string ms(double seconds) {
  if (seconds >= 1) return fmt::format("{:.2f} s", seconds);
  return seconds < 1e-3 ? fmt::format("{:.1f} µs", seconds * 1e6)
                        : fmt::format("{:.2f} ms", seconds * 1e3);
}

std::string idiom_phrase(const std::string& method) {
  static const std::map<std::string, std::string> phrases = {
      {"to_from_pageable", "x.to(device) from pageable"},
      {"pin_memory_fresh", "pin_memory() afresh + non_blocking copy"},
      {"pin_memory_cached", "pin_memory() (cached) + non_blocking copy"},
      {"pin_memory_cached_item", "pin_memory() (cached) + .item() every step"},
      {"pin_thread_pipeline", "a DataLoader pin thread"},
      {"already_pinned", "a batch already pinned"},
      {"result_to_pageable", "into pageable memory"},
      {"result_to_pinned", "into pinned memory"}};
  const auto it = phrases.find(method);
  return it == phrases.end() ? method : it->second;
}

std::string pin_label(const nlohmann::json& e) {
  static const std::map<std::string, std::string> labels = {
      {"host_alloc", "cudaHostAlloc"},
      {"register_fresh", "register untouched"},
      {"register_touched", "register"},
      {"register_chunks", "register in chunks"}};
  const auto method = e.value("method", std::string());
  const auto it = labels.find(method);
  return (it == labels.end() ? method : it->second) +
         (e.value("huge_pages", std::string()) == "madvise" ? "+THP" : "");
}

// The analysis's list `key` (an empty one when absent): by reference, so pointers into it stay
// valid.
const nlohmann::json& section(const nlohmann::json& analysis, const char* key) {
  static const nlohmann::json empty = nlohmann::json::array();
  return analysis.contains(key) && analysis[key].is_array() ? analysis[key] : empty;
}

}  // namespace

void idiom_lines(const nlohmann::json& analysis, std::vector<std::string>& out) {
  for (const auto& g : section(analysis, "torch_idioms")) {
    const auto& fastest = g["idioms"][0];
    const auto size = format_sweep_size("bytes", g["bytes"].get<double>());
    if (g["direction"] == "h2d") {
      std::string line =
          fmt::format("torch idioms, batch of {} ({}), {} GPU step: {} fastest, {} per batch",
                      g.contains("batch_images") ? g["batch_images"].dump() : "?", size,
                      ms(g["gpu_step_s"].get<double>()), idiom_phrase(fastest["method"]),
                      ms(fastest["seconds"].get<double>()));
      if (g.contains("margin"))
        line += fmt::format(", {:.2f}× ahead of {} (range {:.2f}–{:.2f}×)",
                            g["margin"].get<double>(), idiom_phrase(g["runner_up"]),
                            g["margin_low"].get<double>(), g["margin_high"].get<double>());
      if (g.contains("speedup_over_pageable") && fastest["method"] != "to_from_pageable")
        line += fmt::format(", {:.2f}× over x.to(device) from pageable",
                            g["speedup_over_pageable"].get<double>());
      out.push_back(line);
    } else if (fastest["method"] == "item") {
      out.push_back(fmt::format(
          "loss.item(): {} per call (a 4-byte D2H and the stream synchronize it forces)",
          ms(fastest["seconds"].get<double>())));
    } else if (g.contains("margin")) {
      out.push_back(
          fmt::format("result D2H of {}: {} fastest, {} per copy, {:.2f}× faster than {} (range "
                      "{:.2f}–{:.2f}×)",
                      size, idiom_phrase(fastest["method"]), ms(fastest["seconds"].get<double>()),
                      g["margin"].get<double>(), idiom_phrase(g["runner_up"]),
                      g["margin_low"].get<double>(), g["margin_high"].get<double>()));
    }
  }
  // Pinning at scale: one line per (device, size), every method's break-even.
  std::map<std::pair<int, double>, std::vector<const nlohmann::json*>> by_size;
  for (const auto& e : section(analysis, "pinning_at_scale"))
    by_size[{e["device"].get<int>(), e["bytes"].get<double>()}].push_back(&e);
  const std::vector<std::string> method_order = {"host_alloc", "register_fresh", "register_touched",
                                                 "register_chunks"};
  auto rank = [&](const nlohmann::json* e) {
    const auto method =
        std::find(method_order.begin(), method_order.end(), e->value("method", std::string()));
    return std::make_pair(method - method_order.begin(),
                          e->value("huge_pages", std::string()) == "madvise");
  };
  for (auto& [key, entries] : by_size) {
    std::stable_sort(entries.begin(), entries.end(),
                     [&](const auto* a, const auto* b) { return rank(a) < rank(b); });
    std::string line = fmt::format(
        "pinning {} on GPU {} pays after:", format_sweep_size("bytes", key.second), key.first);
    bool first = true;
    for (const auto* e : entries) {
      const auto& n = (*e)["break_even_copies"];
      line += fmt::format(
          "{} {} {} (pin {})", first ? "" : ";", pin_label(*e),
          n.is_number()
              ? fmt::format("{} cop{}", n.get<long long>(), n.get<long long>() == 1 ? "y" : "ies")
              : std::string("never"),
          (*e)["pin_seconds"].is_number() ? ms((*e)["pin_seconds"].get<double>()) : "?");
      first = false;
    }
    out.push_back(line);
  }
  // The host half: per size, first touch with 4 KiB pages vs with huge pages asked for.
  std::map<double, std::map<std::string, const nlohmann::json*>> touch;
  for (const auto& e : section(analysis, "first_touch_at_scale"))
    touch[e["bytes"].get<double>()][e["huge_pages"].get<std::string>()] = &e;
  for (const auto& [bytes, kinds] : touch) {
    std::string line = fmt::format("first touch of {}:", format_sweep_size("bytes", bytes));
    const char* separator = " ";
    for (const char* kind : {"none", "madvise"}) {
      const auto it = kinds.find(kind);
      if (it == kinds.end()) continue;
      const auto& e = *it->second;
      line += separator;
      separator = " · ";
      line += fmt::format("{} {:.0f} ms/GiB ({:.1f} GB/s",
                          std::string(kind) == "none" ? "4 KiB pages" : "madvise(MADV_HUGEPAGE)",
                          e["ms_per_gib"].get<double>(), e["bytes_per_second"].get<double>() / 1e9);
      if (e["huge_page_fraction"].is_number())
        line += fmt::format(", {:.0f}% in huge pages", 100 * e["huge_page_fraction"].get<double>());
      line += ")";
    }
    if (kinds.count("none") && kinds.count("madvise")) {
      const auto& huge = *kinds.at("madvise");
      line +=
          fmt::format(": {:.2f}× with huge pages", kinds.at("none")->at("seconds").get<double>() /
                                                       huge["seconds"].get<double>());
      if (huge["huge_page_fraction"].is_number() && huge["huge_page_fraction"].get<double>() < 0.5)
        line += fmt::format(" (madvise mostly did not take; THP enabled: {})",
                            huge.value("thp_enabled", std::string("?")));
    }
    out.push_back(line);
  }
}

}  // namespace offloadbench::detail
