// The summary's first screen (summary.h): the verdicts per GPU (and for the CPU rows), the invalid
// rows' reasons, the self-checks in one line, and one crossover line per compare group.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/analysis/invariants.h"
#include "harness/analysis/summary.h"
#include "harness/analysis/verdict_causes.h"
#include "harness/analysis/verdicts.h"
#include "harness/results/results.h"

namespace offloadbench {

std::string fit_columns(const std::string& line, std::size_t columns) {
  std::size_t points = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;  // a continuation byte
    if (++points == columns) {
      std::size_t end = i + 1;
      while (end < line.size() && (static_cast<unsigned char>(line[end]) & 0xC0) == 0x80) ++end;
      return end >= line.size() ? line : line.substr(0, i) + "…";
    }
  }
  return line;
}

namespace {

constexpr std::size_t kVerdictLinesPerDevice = 6;  // the rest are behind --all

// Cut to the screen's width on the first screen; whole with --all.
void print_line(std::FILE* out, const std::string& line, bool whole = false) {
  fmt::print(out, "{}\n", whole ? line : fit_columns(line));
}

std::string text_of(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>()
                                                                : std::string();
}

void print_counts(std::FILE* out, const nlohmann::json& results, bool all) {
  int rows = 0, skipped = 0, invalid = 0;
  std::map<std::string, int> reasons;
  for (const auto* row : iteration_row_pointers(results)) {
    ++rows;
    if (row->value("skipped", false))
      ++skipped;
    else if (row->value("validated", nlohmann::json()) == false) {
      ++invalid;
      const auto reason = text_of(*row, "invalid_reason").empty() ? text_of(*row, "suspect_reason")
                                                                  : text_of(*row, "invalid_reason");
      ++reasons[fmt::format("{}: {}", text_of(*row, "name"),
                            reason.empty() ? "failed its own validation" : reason)];
    }
  }
  print_line(out, fmt::format("offloadbench: {} measurements, {} skipped, {} invalid", rows,
                              skipped, invalid));
  std::size_t shown = 0;
  for (const auto& [reason, count] : reasons) {
    if (++shown > 2 && !all) {
      print_line(out, fmt::format("  ... and {} more invalid case(s): --all", reasons.size() - 2));
      break;
    }
    print_line(out, fmt::format("  invalid ×{} {}", count, printable(reason)), all);
  }
}

std::string device_title(const nlohmann::json& results, const std::string& device) {
  const auto& context = results.contains("context") ? results["context"] : nlohmann::json::object();
  if (device == "cpu") {
    const auto& host = context.contains("host") ? context["host"] : nlohmann::json::object();
    return fmt::format("CPU {}", text_of(host, "cpu_model").empty()
                                     ? "rows"
                                     : printable(text_of(host, "cpu_model")));
  }
  const auto& gpu = verdict_causes::gpu_context(context, std::stoi(device));
  std::string title = fmt::format("GPU {} {}", device, printable(text_of(gpu, "name")));
  if (gpu.is_object() && gpu.contains("pcie_link") && gpu["pcie_link"].is_object()) {
    const auto& l = gpu["pcie_link"];
    if (l.value("max_generation", 0) > 0)
      title +=
          fmt::format(", PCIe Gen{} x{}", l.value("max_generation", 0), l.value("max_width", 0));
  }
  return title;
}

void print_verdicts(std::FILE* out, const nlohmann::json& results, const SummaryOptions& options) {
  static const std::vector<ReferenceRun> none;
  const auto verdicts = judge_headlines(results, options.references ? *options.references : none);
  std::map<std::string, std::vector<const nlohmann::json*>> by_device;  // "0", "1", ..., "cpu" last
  for (const auto& v : verdicts)
    by_device[v["device"].is_string() ? "~cpu" : v["device"].dump()].push_back(&v);
  for (const auto& [key, list] : by_device) {
    const auto device = key == "~cpu" ? std::string("cpu") : key;
    std::map<std::string, int> counts;
    std::string reference;
    for (const auto* v : list) {
      ++counts[(*v)["verdict"].get<std::string>()];
      if (reference.empty() && (*v)["reference"].is_object())
        reference = (*v)["reference"]["file"].get<std::string>();
    }
    print_line(out, fmt::format("{}: {} healthy, {} below expectation, {} impossible",
                                device_title(results, device), counts["healthy"],
                                counts["below expectation"], counts["impossible"]));
    print_line(out, reference.empty()
                        ? fmt::format("  no reference run of this {}: judged by ceilings alone",
                                      device == "cpu" ? "CPU model" : "GPU model and link")
                        : "  compared with the reference run " + printable(reference));
    std::size_t shown = 0, left = 0;
    for (const char* kind : {"impossible", "below expectation"})
      for (const auto* v : list) {
        if ((*v)["verdict"] != kind) continue;
        if (shown == kVerdictLinesPerDevice && !options.all) {
          ++left;
          continue;
        }
        ++shown;
        std::string why;
        for (const auto& c : (*v)["causes"])
          why += (why.empty() ? "" : "; ") + c.get<std::string>();
        const auto rate =
            (*v)["rate"].is_number()
                ? rate_text((*v)["rate"].get<double>(), (*v)["unit"].get<std::string>().c_str())
                : std::string("?");
        const auto line = std::string(kind) == "impossible"
                              ? fmt::format("  IMPOSSIBLE {}: {}",
                                            printable((*v)["label"].get<std::string>()), why)
                              : fmt::format("  below {} {}: {}",
                                            printable((*v)["label"].get<std::string>()), rate, why);
        print_line(out, line, options.all);
        if (options.all && !(*v)["evidence"].get<std::string>().empty())
          fmt::print(out, "      evidence: {}\n", printable((*v)["evidence"].get<std::string>()));
      }
    if (left) print_line(out, fmt::format("  ... and {} more: --all", left));
  }
}

// The self-checks in one line, the rules most broken first (their rows and reasons are behind
// --all).
void print_self_check_line(std::FILE* out, const nlohmann::json& results, bool all) {
  if (!results.contains("analysis") || !results["analysis"].contains("invariants")) return;
  const auto& section = results["analysis"]["invariants"];
  if (!section.is_object() || !section.contains("violations") ||
      !section["violations"].is_array() || !section.contains("rules") ||
      !section["rules"].is_array())
    return;
  if (section["violations"].empty()) {
    print_line(out, fmt::format("self-checks: all {} rules hold", section["rules"].size()));
    return;
  }
  std::vector<std::pair<std::size_t, std::string>> broken;
  for (const auto& rule : section["rules"])
    if (rule.is_object() && rule.value("cases_broken", std::size_t{0}) > 0)
      broken.push_back({rule.value("cases_broken", std::size_t{0}), text_of(rule, "id")});
  std::sort(broken.begin(), broken.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string rules;
  for (const auto& [cases, id] : broken)
    rules += fmt::format("{}{} {}", rules.empty() ? "" : ", ", printable(id), cases);
  print_line(out,
             fmt::format("self-checks: {} rows broke a rule, left out of every figure (cases: {})",
                         section["violations"].size(), rules),
             all);
}

// ---- one crossover line per compare group ----

int view_rank(const std::string& view) {
  static const std::vector<std::string> order = {"gpu_pinned", "gpu_pageable", "gpu_pinned_overlap",
                                                 "gpu_kernel"};
  const auto it = std::find(order.begin(), order.end(), view);
  return static_cast<int>(it - order.begin());
}

const char* view_words(const std::string& view) {
  if (view == "gpu_pinned") return "pinned copies";
  if (view == "gpu_pageable") return "pageable copies";
  if (view == "gpu_pinned_overlap") return "overlapped copies";
  return "kernel only";
}

// How good a crossover is for the GPU: wins everywhere, then the earliest crossover, then the best
// speedup at the largest size.
std::tuple<int, double> gpu_rank(const nlohmann::json& c) {
  const auto kind = text_of(c, "kind");
  if (kind == "gpu_wins_all") return {0, 0.0};
  if (kind == "crossover") return {1, c["size"].is_number() ? c["size"].get<double>() : INFINITY};
  return {2, -c.value("speedup_at_largest", 0.0)};
}

std::string crossover_outcome(const nlohmann::json& c) {
  const auto sweep = text_of(c, "sweep");
  const auto size = [&](const char* key) {
    return format_sweep_size(sweep,
                             c.contains(key) && c[key].is_number() ? c[key].get<double>() : NAN);
  };
  const auto kind = text_of(c, "kind");
  if (kind == "crossover") {
    // A point only once located (analysis.h): between two measured sizes far apart nothing is
    // known.
    if (c.value("located", false)) return fmt::format("wins from {} ≈ {}", sweep, size("size"));
    const auto low =
        c.contains("low") && c["low"].is_number() ? size("low") : "below " + size("smallest_size");
    const auto high = c.contains("high") && c["high"].is_number()
                          ? size("high")
                          : "beyond " + size("largest_size");
    return fmt::format("wins from {} in {}–{}", sweep, low, high);
  }
  if (kind == "gpu_wins_all")
    return fmt::format("wins at every {} ({}–{})", sweep, size("smallest_size"),
                       size("largest_size"));
  return fmt::format("never wins up to {} {} ({:.2f}×)", sweep, size("largest_size"),
                     c.value("speedup_at_largest", 0.0));
}

void print_crossovers(std::FILE* out, const nlohmann::json& results, bool all) {
  if (!results.contains("analysis") || !results["analysis"].contains("crossovers")) return;
  // Per group: the first GPU view in view_rank order that it has; per series, the CPU row strongest
  // against it (lowest speedup at the largest size); then the series best for the GPU.
  std::map<std::string, std::vector<const nlohmann::json*>> by_group;
  for (const auto& c : results["analysis"]["crossovers"])
    if (c.is_object() && !is_anchor_row(c) && c.contains("compare_group"))
      by_group[text_of(c, "compare_group")].push_back(&c);
  if (by_group.empty()) return;
  print_line(out,
             "where the GPU wins, per compare group, against the strongest CPU rows measured:");
  for (const auto& [group, list] : by_group) {
    int best_view = 99;
    for (const auto* c : list) best_view = std::min(best_view, view_rank(text_of(*c, "view")));
    std::map<std::string, const nlohmann::json*> strongest_cpu;  // per series
    for (const auto* c : list) {
      if (view_rank(text_of(*c, "view")) != best_view) continue;
      auto& slot = strongest_cpu[text_of(*c, "series")];
      if (!slot || c->value("speedup_at_largest", 0.0) < slot->value("speedup_at_largest", 0.0))
        slot = c;
    }
    const nlohmann::json* chosen = nullptr;
    for (const auto& [series, c] : strongest_cpu)
      if (!chosen || gpu_rank(*c) < gpu_rank(*chosen)) chosen = c;
    if (!chosen) continue;
    const auto series = text_of(*chosen, "series");
    const auto library = text_of(*chosen, "cpu_library");
    print_line(out,
               fmt::format("  {}{}, {}: {} vs {}{}", printable(group),
                           series.empty() ? "" : " " + printable(series),
                           view_words(text_of(*chosen, "view")), crossover_outcome(*chosen),
                           printable(text_of(*chosen, "cpu_view")),
                           library.empty() ? "" : " (" + printable(library) + ")"),
               all);
  }
}

}  // namespace

void print_first_screen(std::FILE* out, const nlohmann::json& results,
                        const SummaryOptions& options) {
  print_counts(out, results, options.all);
  print_verdicts(out, results, options);
  print_self_check_line(out, results, options.all);
  // A file without GPU rows says why on the first screen (the analysis's line, with the file's
  // reason).
  if (results.contains("analysis") && results["analysis"].contains("headlines") &&
      results["analysis"]["headlines"].is_array())
    for (const auto& line : results["analysis"]["headlines"])
      if (line.is_string() && line.get<std::string>().rfind("no GPU measurements", 0) == 0)
        print_line(out, "  " + printable(line.get<std::string>()), options.all);
  print_crossovers(out, results, options.all);
}

}  // namespace offloadbench
