#include "harness/regression/ab.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/analysis/stats.h"
#include "harness/regression/signed_rank.h"
#include "harness/results/results.h"

namespace offloadbench {

namespace {

// The rounds whose log-ratio lies within kOutlierSigmas robust standard deviations of the median.
// On a shared machine a burst of another tenant's work often slows one process of a round and not
// the other, and that round's ratio lands tens of percent away from the rest, either way (as often
// below as above). A rank test counts each such round as a full vote, so a few of them can hide a
// +5% slowdown that every clean round shows. Setting them aside for the tests only — the interval
// keeps every round, so SAME still needs all of them inside ±δ — means an intermittent slowdown
// that hits a minority of rounds is not called SLOWER, but is never called SAME either.
std::vector<double> without_outlying_rounds(const std::vector<double>& d) {
  const double centre = median(d), sigma = robust_sigma(d);
  if (!(sigma > 0)) return d;
  std::vector<double> kept;
  for (double v : d)
    if (std::abs(v - centre) <= kOutlierSigmas * sigma) kept.push_back(v);
  return kept;
}

AbRow row_statistics(const AbSeries& s, const AbOptions& o) {
  AbRow r;
  r.name = s.name;
  r.gpu = s.gpu;
  r.delta = s.gpu ? o.delta_gpu : o.delta_cpu;
  r.rounds = s.pairs.size();
  r.dropped_throttled = s.dropped_throttled;
  if (s.pairs.empty()) return r;
  std::vector<double> base, candidate, d;
  for (const auto& p : s.pairs) {
    base.push_back(p.base);
    candidate.push_back(p.candidate);
    d.push_back(std::log(p.candidate / p.base));
  }
  r.base_median = median(base);
  r.new_median = median(candidate);
  const auto shift = hodges_lehmann(d, o.confidence);
  r.change = std::expm1(shift.estimate);
  r.low = std::expm1(shift.low);
  r.high = std::expm1(shift.high);
  r.bounded = shift.bounded;
  r.confidence = shift.bounded ? shift.confidence : 0;
  const double margin = std::log1p(r.delta);
  const auto tested = without_outlying_rounds(d);
  r.rounds_set_aside = d.size() - tested.size();
  std::vector<double> above, below;
  for (double v : tested) {
    above.push_back(v - margin);
    below.push_back(v + margin);
  }
  r.p_slower = wilcoxon_signed_rank(above, Alternative::greater).p_value;
  r.p_faster = wilcoxon_signed_rank(below, Alternative::less).p_value;
  return r;
}

std::string set_aside_note(const AbRow& r) {
  return r.rounds_set_aside == 0 ? ""
                                 : fmt::format("; {} outlying round(s) of {} left out of the test",
                                               r.rounds_set_aside, r.rounds);
}

}  // namespace

std::string format_interval(const AbRow& r) {
  if (r.rounds == 0) return "—";
  if (!r.bounded) return format_percent(r.change) + " [unbounded]";
  return fmt::format("{} [{}, {}]", format_percent(r.change), format_percent(r.low),
                     format_percent(r.high));
}

AbOutcome ab_verdicts(const std::vector<AbSeries>& series, const AbOptions& o) {
  AbOutcome out;
  out.options = o;
  std::vector<double> directional;
  for (const auto& s : series) {
    out.rows.push_back(row_statistics(s, o));
    const auto& r = out.rows.back();
    directional.push_back(std::min(1.0, 2 * std::min(r.p_slower, r.p_faster)));
  }
  const auto adjusted = holm_adjust(directional);
  for (std::size_t i = 0; i < out.rows.size(); ++i) {
    auto& r = out.rows[i];
    r.p_holm = adjusted[i];
    const std::string delta = format_percent(r.delta).substr(1);
    if (r.rounds == 0) {
      r.reason = "not measured by both sides in any round";
    } else if (r.p_holm < o.alpha) {
      r.verdict = r.p_slower < r.p_faster ? Verdict::slower : Verdict::faster;
      r.reason = fmt::format("{} by more than {} (Holm p={}{})",
                             r.verdict == Verdict::slower ? "slower" : "faster", delta,
                             format_p(r.p_holm), set_aside_note(r));
    } else if (r.bounded && r.low >= -r.delta / (1 + r.delta) && r.high <= r.delta) {
      r.verdict = Verdict::same;
      r.reason = fmt::format("interval within ±{}", delta);
    } else {
      r.reason = r.bounded ? fmt::format("interval reaches beyond ±{} (Holm p={}{})", delta,
                                         format_p(r.p_holm), set_aside_note(r))
                           : fmt::format("{} round(s): too few for a {:.0f}% interval", r.rounds,
                                         100 * o.confidence);
    }
    out.slower += r.verdict == Verdict::slower;
    out.faster += r.verdict == Verdict::faster;
    out.same += r.verdict == Verdict::same;
    out.inconclusive += r.verdict == Verdict::inconclusive;
  }
  return out;
}

void print_ab(std::FILE* out, const AbOutcome& c) {
  fmt::print(out, "{:<13} {:>30} {:>7} {:>9}  {}\n", "verdict", "change [interval]", "rounds",
             "Holm p", "benchmark");
  for (const auto& r : c.rows)
    fmt::print(out, "{:<13} {:>30} {:>7} {:>9}  {}{}\n", verdict_name(r.verdict),
               format_interval(r), r.rounds, format_p(r.p_holm), printable(r.name),
               r.verdict == Verdict::same ? "" : fmt::format("  [{}]", printable(r.reason)));
  fmt::print(
      out,
      "ab: {} SLOWER, {} FASTER, {} SAME, {} INCONCLUSIVE (δ {} CPU, {} GPU; family-wise alpha {}, "
      "{:.0f}% intervals)\n",
      c.slower, c.faster, c.same, c.inconclusive, format_percent(c.options.delta_cpu).substr(1),
      format_percent(c.options.delta_gpu).substr(1), c.options.alpha, 100 * c.options.confidence);
}

std::string ab_markdown(const AbOutcome& c, const std::vector<std::string>& notes) {
  std::string md = fmt::format(
      "### offloadbench ab\n\n**{} SLOWER, {} FASTER, {} SAME, {} INCONCLUSIVE** "
      "(δ {} on CPU rows, {} on GPU rows; Holm, family-wise alpha {})\n\n",
      c.slower, c.faster, c.same, c.inconclusive, format_percent(c.options.delta_cpu).substr(1),
      format_percent(c.options.delta_gpu).substr(1), c.options.alpha);
  for (const auto& note : notes) md += fmt::format("> **Note:** {}\n\n", markdown_cell(note));
  md += fmt::format(
      "| verdict | benchmark | BASE | NEW | change [{:.0f}% interval] | rounds | Holm p | why |\n",
      100 * c.options.confidence);
  md += "|---|---|---:|---:|---:|---:|---:|---|\n";
  std::vector<const AbRow*> order;
  for (const auto& r : c.rows) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(),
                   [](const AbRow* a, const AbRow* b) { return a->change > b->change; });
  for (const auto* r : order)
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", verdict_name(r->verdict),
                      markdown_code(r->name), format_metric(r->base_median, "real_time"),
                      format_metric(r->new_median, "real_time"), format_interval(*r), r->rounds,
                      format_p(r->p_holm), markdown_cell(r->reason));
  return md;
}

}  // namespace offloadbench
