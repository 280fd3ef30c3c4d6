// The generic self-checks (invariants.h) and the pass that runs them with each family's own.
#include "harness/analysis/invariants.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "harness/analysis/family_analysis.h"
#include "harness/analysis/stats.h"

namespace offloadbench {

namespace {

using detail::Measured;
using detail::number;
using detail::text;
namespace limits = invariant_limits;

int repetition_of(const Measured& c, std::size_t i) {
  const double r = number(*c.rows[i], "repetition_index");
  return std::isfinite(r) ? static_cast<int>(r) : static_cast<int>(i);
}

std::string ms(double seconds) { return fmt::format("{:.3g} ms", seconds * 1e3); }

// A copy's (or any device-timed row's) device time against the host's wall time of the same
// operation: the host clock around a call includes the call, so it cannot be shorter.
std::vector<BrokenRow> device_within_host(const std::vector<Measured>& cases,
                                          const nlohmann::json&) {
  std::vector<BrokenRow> out;
  for (const auto& c : cases)
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
      const double device = number(*c.rows[i], "device_time_s"),
                   host = number(*c.rows[i], "host_time_s");
      if (std::isfinite(device) && std::isfinite(host) && host > 0 &&
          device > limits::kDeviceOverHost * host)
        out.push_back(
            {c.name, repetition_of(c, i),
             fmt::format("device time {} is {:.2f}× the host's wall time {} for the same operation",
                         ms(device), device / host, ms(host))});
    }
  return out;
}

// Every efficiency against its bound, and every rate against the ceiling the row carries.
std::vector<BrokenRow> efficiency_within_bound(const std::vector<Measured>& cases,
                                               const nlohmann::json&) {
  std::vector<BrokenRow> out;
  for (const auto& c : cases)
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
      const auto& row = *c.rows[i];
      std::vector<std::string> over;
      for (auto it = row.begin(); it != row.end(); ++it) {
        const auto& key = it.key();
        const bool efficiency =
            key.size() > 11 && key.compare(key.size() - 11, 11, "_efficiency") == 0;
        if (efficiency && it->is_number() && it->get<double>() > limits::kEfficiency)
          over.push_back(fmt::format("{} {:.2f}", key, it->get<double>()));
      }
      if (double p = number(row, "percent_of_peak");
          std::isfinite(p) && p > 100 * limits::kEfficiency)
        over.push_back(fmt::format("percent_of_peak {:.0f}", p));
      for (const auto& [rate, ceiling] :
           {std::pair{"bytes_per_second", "ceiling_bytes_per_second"},
            std::pair{"flop_per_second", "ceiling_flop_per_second"}}) {
        const double r = number(row, rate), limit = number(row, ceiling);
        if (std::isfinite(r) && std::isfinite(limit) && limit > 0 &&
            r > limits::kEfficiency * limit)
          over.push_back(fmt::format("{} {:.2f}× its {}", rate, r / limit, ceiling));
      }
      if (!over.empty()) {
        std::string reason = "above its bound (limit 1.05):";
        for (const auto& o : over) reason += " " + o;
        out.push_back({c.name, repetition_of(c, i), reason});
      }
    }
  return out;
}

bool is_gpu_view(const std::string& view) { return view.rfind("gpu_", 0) == 0; }

// Within a compare_group, series, size and device: a view that includes transfers takes at least as
// long as the kernel-only view, which is its lower bound. Faster means one of them timed something
// else (a warm cache after the copy against a flushed one): both are left out.
std::vector<BrokenRow> transfers_not_faster_than_kernel(const std::vector<Measured>& cases,
                                                        const nlohmann::json&) {
  using Key = std::tuple<std::string, std::string, double, std::string>;
  std::map<Key, std::map<std::string, const Measured*>> groups;
  for (const auto& c : cases) {
    const auto group = text(c.row(), "compare_group"), view = text(c.row(), "view"),
               sweep = text(c.row(), "sweep");
    if (group.empty() || !is_gpu_view(view) || sweep.empty() || is_anchor_row(c.row())) continue;
    const double size = number(c.row(), sweep);
    if (!std::isfinite(size)) continue;
    groups[{group, text(c.row(), "series"), size,
            c.row().contains("device") ? c.row()["device"].dump() : ""}][view] = &c;
  }
  std::vector<BrokenRow> out;
  for (const auto& [key, by_view] : groups) {
    const auto kernel = by_view.find("gpu_kernel");
    if (kernel == by_view.end()) continue;
    const double kernel_s = median(kernel->second->seconds);
    for (const auto& [view, c] : by_view) {
      const double s = median(c->seconds);
      if (view == "gpu_kernel" || !(s * limits::kViewSlack < kernel_s)) continue;
      const auto why =
          fmt::format("{} ({}) is {:.2f}× faster than the kernel alone ({}, {}), its lower bound",
                      view, ms(s), kernel_s / s, kernel->second->name, ms(kernel_s));
      out.push_back({c->name, -1, why});
      out.push_back({kernel->second->name, -1, why});
    }
  }
  return out;
}

// A case whose repetitions spread by more than 20% (sample cv): its median can land on either of
// two modes, so no finding rests on it.
std::vector<BrokenRow> steady(const std::vector<Measured>& cases, const nlohmann::json&) {
  std::vector<BrokenRow> out;
  for (const auto& c : cases) {
    const auto cv = unsteady_cv(c);
    if (!cv) continue;
    const auto [low, high] = std::minmax_element(c.seconds.begin(), c.seconds.end());
    out.push_back({c.name, -1,
                   fmt::format("unsteady: cv {:.2f} over {} repetitions ({} .. {})", *cv,
                               c.seconds.size(), ms(*low), ms(*high))});
  }
  return out;
}

// The traffic a CPU row's kernel moves per iteration when it is a plain copy (N bytes read, N
// written), else 0. Rows say so with traffic_pattern "copy"; files from before that field name the
// op "copy" or "host_memcpy". A first-touch copy also takes page faults: not the same traffic.
double copy_traffic(const Measured& c) {
  const auto& row = c.row();
  const auto pattern = text(row, "traffic_pattern"), op = text(row, "op");
  const bool copy = pattern.empty() ? op == "copy" || op == "host_memcpy" : pattern == "copy";
  if (!copy || (row.contains("device") && row["device"].is_number()) || is_anchor_row(row))
    return 0;
  if (const auto touch = text(row, "touch"); !touch.empty() && touch != "pretouched") return 0;
  std::vector<double> traffic;
  for (std::size_t i = 0; i < c.rows.size(); ++i)
    if (double bps = number(*c.rows[i], "bytes_per_second"); std::isfinite(bps))
      traffic.push_back(bps * c.seconds[i]);
  // Smaller copies run from a cache, where two implementations' overheads differ for good reasons.
  const double bytes = traffic.empty() ? 0 : median(traffic);
  return bytes >= limits::kDramTrafficBytes ? bytes : 0;
}

// Two CPU copies of the same bytes (past the caches) on the same number of threads reach the same
// rate: DRAM bounds both, so one of them is not measuring the copy (a cold start, threads not
// spread over the cores or the memory nodes).
std::vector<BrokenRow> same_traffic_same_rate(const std::vector<Measured>& cases,
                                              const nlohmann::json&) {
  std::map<std::pair<long long, double>, std::vector<const Measured*>> groups;  // (MiB·16, threads)
  for (const auto& c : cases)
    if (const double traffic = copy_traffic(c); traffic > 0)
      groups[{std::llround(traffic / (1 << 16)), number(c.row(), "cpu_threads")}].push_back(&c);
  std::vector<BrokenRow> out;
  for (const auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    auto rate = [](const Measured* c) {
      std::vector<double> v;
      for (const auto* row : c->rows) v.push_back(number(*row, "bytes_per_second"));
      return median(v);
    };
    const auto fastest = *std::max_element(members.begin(), members.end(),
                                           [&](auto* a, auto* b) { return rate(a) < rate(b); });
    for (const auto* c : members)
      if (rate(c) * limits::kSameTraffic < rate(fastest)) {
        const auto why = fmt::format(
            "{:.3g} GB/s where {} moves the same bytes on as many threads at {:.3g} GB/s",
            rate(c) / 1e9, fastest->name, rate(fastest) / 1e9);
        out.push_back({c->name, -1, why});
        out.push_back({fastest->name, -1, "disagrees with " + c->name + ": " + why});
      }
  }
  return out;
}

}  // namespace

std::optional<double> unsteady_cv(const Measured& c) {
  if (c.seconds.size() < 3) return std::nullopt;
  const double cv = coefficient_of_variation(c.seconds);
  return cv > limits::kUnsteadyCv ? std::optional<double>(cv) : std::nullopt;
}

bool is_anchor_row(const nlohmann::json& row) {
  if (row.value("anchor", false)) return true;
  const auto series = text(row, "series");
  return series == "pytorch" || series == "numpy";
}

const std::vector<Invariant>& generic_invariants() {
  static const std::vector<Invariant> rules = {
      {"device_within_host", "device time ≤ 1.1 × the host's wall time of the same operation",
       device_within_host},
      {"within_bound",
       "every *_efficiency ≤ 1.05, percent_of_peak ≤ 105, a rate ≤ 1.05 × the ceiling it carries",
       efficiency_within_bound},
      {"steady", "repetitions spread by at most 20% (coefficient of variation)", steady},
      {"transfers_not_faster_than_kernel",
       "a view that includes transfers is not faster than the kernel-only view of the same case "
       "(5% slack)",
       transfers_not_faster_than_kernel, true},
      {"same_traffic",
       "CPU copies of the same bytes (≥ 256 MiB moved) on the same threads agree within 10%",
       same_traffic_same_rate, true},
  };
  return rules;
}

InvariantReport check_invariants(const std::vector<Measured>& cases, const nlohmann::json& context,
                                 const std::vector<FamilyAnalysis>& families) {
  // Rules on single rows and cases first, then those that compare cases, over what passed.
  std::vector<const Invariant*> rules;
  for (bool compares : {false, true}) {
    for (const auto& rule : generic_invariants())
      if (rule.compares_cases == compares) rules.push_back(&rule);
    for (const auto& family : families)
      for (const auto& rule : family.invariants)
        if (rule.compares_cases == compares) rules.push_back(&rule);
  }
  InvariantReport report;
  report.section = {{"rules", nlohmann::json::array()}, {"violations", nlohmann::json::array()}};
  std::size_t rows = 0;
  for (const auto& c : cases) rows += c.rows.size();
  std::vector<Measured> passed;  // what the compared-case rules see
  bool comparing = false;
  for (const auto* rule : rules) {
    if (rule->compares_cases && !comparing) {
      passed = without_broken(cases, report.broken, false);
      comparing = true;
    }
    auto broken = rule->check(comparing ? passed : cases, context);
    // One entry per (row, reason): a pair rule may name a case twice.
    std::sort(broken.begin(), broken.end(), [](const BrokenRow& a, const BrokenRow& b) {
      return std::tie(a.name, a.repetition) < std::tie(b.name, b.repetition);
    });
    broken.erase(std::unique(broken.begin(), broken.end(),
                             [](const BrokenRow& a, const BrokenRow& b) {
                               return a.name == b.name && a.repetition == b.repetition;
                             }),
                 broken.end());
    std::set<std::string> case_names;
    for (const auto& b : broken) {
      report.broken.insert({b.name, b.repetition});
      case_names.insert(b.name);
      report.section["violations"].push_back(
          {{"invariant", rule->id},
           {"name", b.name},
           {"repetition_index",
            b.repetition < 0 ? nlohmann::json(nullptr) : nlohmann::json(b.repetition)},
           {"reason", b.reason}});
    }
    report.section["rules"].push_back({{"id", rule->id},
                                       {"rule", rule->rule},
                                       {"rows_checked", rows},
                                       {"cases_broken", case_names.size()}});
  }
  return report;
}

std::vector<Measured> without_broken(const std::vector<Measured>& cases,
                                     const std::set<std::pair<std::string, int>>& broken,
                                     bool ours_only) {
  std::vector<Measured> kept;
  for (const auto& c : cases) {
    if ((ours_only && is_anchor_row(c.row())) || broken.count({c.name, -1})) continue;
    Measured k{c.name, nullptr, {}, {}};
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
      if (broken.count({c.name, repetition_of(c, i)})) continue;
      k.seconds.push_back(c.seconds[i]);
      k.rows.push_back(c.rows[i]);
    }
    if (k.rows.empty()) continue;
    k.first_row = k.rows.front();
    kept.push_back(std::move(k));
  }
  return kept;
}

}  // namespace offloadbench
