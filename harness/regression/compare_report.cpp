// compare's output: the terminal table, the Markdown table for CI job summaries, and JSON.
#include <cmath>

#include <fmt/format.h>

#include "harness/regression/compare.h"
#include "harness/regression/detectable.h"
#include "harness/results/results.h"

namespace offloadbench {

std::string format_metric(double value, const std::string& metric) {
  if (!std::isfinite(value)) return "—";
  if (higher_is_better(metric)) {
    if (value >= 1e9) return fmt::format("{:.3f} G/s", value / 1e9);
    if (value >= 1e6) return fmt::format("{:.3f} M/s", value / 1e6);
    return fmt::format("{:.4g} /s", value);
  }
  if (metric != "real_time" && metric != "cpu_time") return fmt::format("{:.4g}", value);
  if (value >= 1) return fmt::format("{:.3f} s", value);
  if (value >= 1e-3) return fmt::format("{:.3f} ms", value * 1e3);
  if (value >= 1e-6) return fmt::format("{:.3f} us", value * 1e6);
  return fmt::format("{:.1f} ns", value * 1e9);
}

namespace {

std::string change_text(const BenchmarkComparison& row) {
  return std::isfinite(row.change) ? format_percent(row.change) : "—";
}

// SAME and INCONCLUSIVE rows carry the smallest slowdown they could have shown (detectable.h).
bool carries_figure(const BenchmarkComparison& row) {
  return (row.verdict == Verdict::same || row.verdict == Verdict::inconclusive) && !std::isnan(row.detectable);
}

bool one_process(const Comparison& c) { return c.base_processes < 2 || c.new_processes < 2; }

std::string could_see(const BenchmarkComparison& row, const Comparison& c) {
  return carries_figure(row) ? detectable_text(row.detectable, one_process(c)) : "";
}

// "could see ≥ 5%: 112 rows, 5–10%: 20, only > 10%: 30 (4 nothing)": the SAME/INCONCLUSIVE rows by their figure.
std::string could_see_counts(const Comparison& c) {
  int five = 0, ten = 0, more = 0, none = 0;
  for (const auto& row : c.rows) {
    if (!carries_figure(row)) continue;
    const double x = row.detectable;
    x <= 0.05 + 1e-12 ? ++five : x <= 0.10 + 1e-12 ? ++ten : ++more;
    none += std::isinf(x);
  }
  if (five + ten + more == 0) return "";
  return fmt::format("; of the SAME/INCONCLUSIVE rows {} could see a 5% slowdown, {} only 5–10%, {} only more than 10%{}",
                     five, ten, more, none ? fmt::format(" ({} none at all)", none) : "");
}

std::string summary_line(const Comparison& c) {
  std::string noise = "too few benchmarks to learn the noise between the runs";
  if (c.noise.floors)
    noise = fmt::format("between the runs the fastest processes moved {} together, allowed for; their spread scaled by "
                        "{:.2f} (one-thread rows) and {:.2f} (the rest) to the pair's noise",
                        format_percent(std::expm1(c.noise.common_shift)), c.noise.floor_scale_single_thread,
                        c.noise.floor_scale_other);
  else if (c.noise.benchmarks > 0)
    noise = fmt::format("between the runs the benchmarks moved {} together and ±{:.1f}% apart beyond their repetitions' "
                        "spread, both allowed for",
                        format_percent(std::expm1(c.noise.common_shift)), 100 * c.noise.between);
  if (c.options.floor_history_runs > 0)
    noise += c.noise.floors
                 ? fmt::format("; each floor's spread widened by how far it moved between {} earlier runs (--history)",
                               c.options.floor_history_runs)
                 : "; --history not used: it serves the test of files measured with run --processes";
  const char* test = c.noise.floors ? "fastest process of each file, on log times" : "Welch on log times";
  return fmt::format("{} SLOWER, {} FASTER, {} SAME, {} INCONCLUSIVE; geometric-mean change {} "
                     "({}, positive = slower; {}, δ {} CPU, {} GPU; Holm, family-wise alpha {}; {})",
                     c.slower, c.faster, c.same, c.inconclusive,
                     std::isfinite(c.geomean_slowdown) ? format_percent(c.geomean_slowdown - 1) : "—", c.options.metric,
                     test, format_percent(c.options.delta_cpu).substr(1), format_percent(c.options.delta_gpu).substr(1),
                     c.options.alpha, noise) + could_see_counts(c);
}

// Two files cannot separate a small change from the machine's drift between them; ab can.
constexpr const char* kAbAdvice =
    "for a verdict on the INCONCLUSIVE rows, measure both builds side by side: offloadbench ab BASE_BINARY NEW_BINARY";

// Repetitions from one process share its memory layout and its moment of the machine: what moves
// between runs is learned from the whole file, and single benchmarks can still jump between processes.
std::string one_process_note(const Comparison& c) {
  if ((c.base_processes > 1 && c.new_processes > 1) || c.slower + c.faster + c.inconclusive == 0) return "";
  const char* which = c.base_processes > 1 ? "NEW's" : c.new_processes > 1 ? "BASE's" : "each file's";
  return fmt::format("{} repetitions come from one process, so how much a benchmark moves between runs is estimated "
                     "from the whole file, not seen; for verdicts that hold benchmark by benchmark, measure both "
                     "with `offloadbench run --processes 5` (docs/regression.md)", which);
}

// "5 rows of family cpu_normalize moved slower together (+20.1% to +27.9%): ..." — one finding for them all.
std::string shared_shift_text(const SharedShift& s) {
  return fmt::format("{} rows of family {} moved {} together ({} to {}, beyond the pair's common shift): a cause "
                     "they share moved them, code they share or the machine; offloadbench ab BASE_BINARY NEW_BINARY "
                     "on them tells which",
                     s.names.size(), printable(s.family), s.slower ? "slower" : "faster", format_percent(s.low),
                     format_percent(s.high));
}

}  // namespace

void print_comparison(std::FILE* out, const Comparison& c) {
  fmt::print(out, "{:<13} {:>8} {:>9} {:>7}  {}\n", "verdict", "change", "p", "reps", "benchmark");
  for (const auto& row : c.rows) {
    fmt::print(out, "{:<13} {:>8} {:>9} {:>7}  {}", verdict_name(row.verdict), change_text(row),
               row.test.empty() ? "—" : format_p(row.p_value), fmt::format("{}/{}", row.base_count, row.new_count),
               printable(row.name));
    const auto figure = could_see(row, c);
    if (row.verdict != Verdict::same) fmt::print(out, "  [{}{}]", printable(row.reason), figure.empty() ? "" : "; " + figure);
    else if (!figure.empty()) fmt::print(out, "  [{}]", figure);
    fmt::print(out, "\n");
  }
  for (const auto& name : c.only_in_base) fmt::print(out, "only in BASE: {}\n", printable(name));
  for (const auto& name : c.only_in_new) fmt::print(out, "only in NEW:  {}\n", printable(name));
  if (!c.skipped_in_both.empty()) fmt::print(out, "{} benchmark(s) skipped in both files\n", c.skipped_in_both.size());
  fmt::print(out, "compare: {}\n", summary_line(c));
  for (const auto& shift : c.shared) {
    fmt::print(out, "compare: shared shift: {}:\n", shared_shift_text(shift));
    for (const auto& name : shift.names) fmt::print(out, "  {}\n", printable(name));
  }
  if (c.inconclusive > 0) fmt::print(out, "compare: {}\n", kAbAdvice);
  if (const auto note = one_process_note(c); !note.empty()) fmt::print(out, "compare: note: {}\n", note);
  if (!c.machine_note.empty()) fmt::print(out, "compare: note: {}\n", printable(c.machine_note));
}

std::string comparison_markdown(const Comparison& c, const std::string& base_label, const std::string& new_label) {
  std::string md = fmt::format("### offloadbench compare\n\n{} → {}\n\n**{}**\n\n",
                               markdown_code(base_label, false), markdown_code(new_label, false), summary_line(c));
  if (!c.machine_note.empty()) md += fmt::format("> **Note:** {}\n\n", markdown_cell(c.machine_note));
  for (const auto& shift : c.shared) {
    md += fmt::format("> **Shared shift:** {}:", markdown_cell(shared_shift_text(shift)));
    for (const auto& name : shift.names) md += fmt::format(" {}", markdown_code(name));
    md += "\n\n";
  }
  if (c.inconclusive > 0) md += fmt::format("{}\n\n", kAbAdvice);
  if (const auto note = one_process_note(c); !note.empty()) md += fmt::format("> {}\n\n", note);
  md += "| verdict | benchmark | base median | new median | change | p | reps | could see | why |\n";
  md += "|---|---|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& row : c.rows)
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {}/{} | {} | {} |\n", verdict_name(row.verdict),
                      markdown_code(row.name),
                      format_metric(row.base_median, c.options.metric), format_metric(row.new_median, c.options.metric),
                      change_text(row), row.test.empty() ? "—" : format_p(row.p_value), row.base_count, row.new_count,
                      carries_figure(row) ? could_see(row, c).substr(std::string("could see ").size()) : "—",
                      markdown_cell(row.reason));
  if (!c.only_in_base.empty() || !c.only_in_new.empty())
    md += fmt::format("\n{} benchmark(s) only in BASE, {} only in NEW.\n", c.only_in_base.size(),
                      c.only_in_new.size());
  for (const auto& name : c.only_in_base) md += fmt::format("- only in BASE: {}\n", markdown_code(name, false));
  for (const auto& name : c.only_in_new) md += fmt::format("- only in NEW: {}\n", markdown_code(name, false));
  if (!c.skipped_in_both.empty())
    md += fmt::format("\n{} benchmark(s) skipped in both files (not compared).\n", c.skipped_in_both.size());
  return md;
}

namespace {
// A floor back in the metric's units (seconds for times): its fastest process.
double fastest(const Floor& floor, const Comparison& c) {
  return std::exp(higher_is_better(c.options.metric) ? -floor.fastest() : floor.fastest());
}
}  // namespace

nlohmann::json to_json(const Comparison& c) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : c.rows)
    rows.push_back({{"name", r.name},
                    {"verdict", verdict_name(r.verdict)},
                    {"reason", r.reason},
                    {"base_repetitions", r.base_count},
                    {"new_repetitions", r.new_count},
                    {"base_median", r.base_median},
                    {"new_median", r.new_median},
                    {"change", r.change},
                    {"slowdown", r.slowdown},
                    {"delta", r.delta},
                    {"p_value", r.test.empty() ? nlohmann::json() : nlohmann::json(r.p_value)},
                    {"p_slower", r.test.empty() ? nlohmann::json() : nlohmann::json(r.p_slower)},
                    {"p_faster", r.test.empty() ? nlohmann::json() : nlohmann::json(r.p_faster)},
                    {"log_shift", r.test.empty() ? nlohmann::json() : nlohmann::json(r.log_shift)},
                    {"standard_error", r.test.empty() ? nlohmann::json() : nlohmann::json(r.standard_error)},
                    {"base_fastest", r.test.empty() ? nlohmann::json() : nlohmann::json(fastest(r.base_floor, c))},
                    {"new_fastest", r.test.empty() ? nlohmann::json() : nlohmann::json(fastest(r.new_floor, c))},
                    {"history_spread", r.history_spread < 0 ? nlohmann::json() : nlohmann::json(r.history_spread)},
                    // The smallest slowdown the rule would have flagged here (null: none at all, or no test).
                    {"could_see", std::isfinite(r.detectable) ? nlohmann::json(r.detectable) : nlohmann::json()},
                    {"could_see_text", could_see(r, c)},
                    {"test", r.test}});
  nlohmann::json shared = nlohmann::json::array();
  for (const auto& s : c.shared)
    shared.push_back({{"family", s.family}, {"direction", s.slower ? "slower" : "faster"}, {"rows", s.names},
                      {"low", s.low}, {"high", s.high}});
  return without_non_finite({{"metric", c.options.metric},
                             {"higher_is_better", higher_is_better(c.options.metric)},
                             {"delta_cpu", c.options.delta_cpu},
                             {"delta_gpu", c.options.delta_gpu},
                             {"alpha", c.options.alpha},
                             {"min_repetitions", c.options.min_repetitions},
                             {"counts",
                              {{"SLOWER", c.slower}, {"FASTER", c.faster}, {"SAME", c.same},
                               {"INCONCLUSIVE", c.inconclusive}}},
                             {"geomean_slowdown", c.geomean_slowdown},
                             {"processes", {{"base", c.base_processes}, {"new", c.new_processes}}},
                             {"run_pair_noise",
                              {{"common_shift", std::expm1(c.noise.common_shift)},
                               {"between", c.noise.between},
                              {"test", c.noise.floors ? "floor" : "welch"},
                              {"floor_scale", c.noise.floors ? nlohmann::json({{"single_thread", c.noise.floor_scale_single_thread},
                                                                                {"other", c.noise.floor_scale_other}})
                                                             : nlohmann::json()},
                               {"far_slower", c.tails_slower},
                               {"far_faster", c.tails_faster},
                               {"far_allowed", c.tail_allowance},
                               {"benchmarks", c.noise.benchmarks},
                              {"history_runs", c.options.floor_history_runs}}},
                             {"rows", rows},
                             {"only_in_base", c.only_in_base},
                             {"only_in_new", c.only_in_new},
                             {"skipped_in_both", c.skipped_in_both},
                             {"machine_note", c.machine_note},
                             {"shared_shifts", shared}});
}

}  // namespace offloadbench
