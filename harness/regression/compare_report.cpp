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
  return (row.verdict == Verdict::same || row.verdict == Verdict::inconclusive) &&
         !std::isnan(row.detectable);
}

bool one_process(const Comparison& c) { return c.base_processes < 2 || c.new_processes < 2; }

std::string could_see(const BenchmarkComparison& row, const Comparison& c) {
  return carries_figure(row) ? detectable_text(row.detectable, one_process(c)) : "";
}

// "could see ≥ 5%: 112 rows, 5–10%: 20, only > 10%: 30 (4 nothing)": the SAME/INCONCLUSIVE rows by
// their figure.
std::string could_see_counts(const Comparison& c) {
  int five = 0, ten = 0, more = 0, none = 0;
  for (const auto& row : c.rows) {
    if (!carries_figure(row)) continue;
    const double x = row.detectable;
    x <= 0.05 + 1e-12 ? ++five : x <= 0.10 + 1e-12 ? ++ten : ++more;
    none += std::isinf(x);
  }
  if (five + ten + more == 0) return "";
  return fmt::format(
      "; of the SAME/INCONCLUSIVE rows {} could see a 5% slowdown, {} only 5–10%, {} only more "
      "than 10%{}",
      five, ten, more, none ? fmt::format(" ({} none at all)", none) : "");
}

// How the verdicts were reached: the test, δ, Holm's alpha (the Markdown summary and --verbose).
std::string method_text(const Comparison& c) {
  const char* test =
      c.noise.floors ? "fastest process of each file, on log times" : "Welch on log times";
  return fmt::format("{}, δ {} CPU, {} GPU; Holm, family-wise alpha {}", test,
                     format_percent(c.options.delta_cpu).substr(1),
                     format_percent(c.options.delta_gpu).substr(1), c.options.alpha);
}

// What the run pair's noise was and how the test allowed for it.
std::string noise_text(const Comparison& c) {
  std::string noise = "too few benchmarks to learn the noise between the runs";
  if (c.noise.floors)
    noise = fmt::format(
        "between the runs the fastest processes moved {} together, allowed for; their spread "
        "scaled by "
        "{:.2f} (one-thread rows) and {:.2f} (the rest) to the pair's noise",
        format_percent(std::expm1(c.noise.common_shift)), c.noise.floor_scale_single_thread,
        c.noise.floor_scale_other);
  else if (c.noise.benchmarks > 0)
    noise = fmt::format(
        "between the runs the benchmarks moved {} together and ±{:.1f}% apart beyond their "
        "repetitions' "
        "spread, both allowed for",
        format_percent(std::expm1(c.noise.common_shift)), 100 * c.noise.between);
  if (c.options.floor_history_runs > 0)
    noise +=
        c.noise.floors
            ? fmt::format(
                  "; each floor's spread widened by how far it moved between {} earlier runs "
                  "(--history)",
                  c.options.floor_history_runs)
            : "; --history not used: it serves the test of files measured with run --processes";
  return noise;
}

std::string geomean_text(const Comparison& c) {
  return std::isfinite(c.geomean_slowdown) ? format_percent(c.geomean_slowdown - 1) : "—";
}

// The Markdown summary: counts, geometric mean, the method and the noise on one line.
std::string summary_line(const Comparison& c) {
  return fmt::format(
             "{} SLOWER, {} FASTER, {} SAME, {} INCONCLUSIVE; geometric-mean change {} "
             "({}, positive = slower; {}; {})",
             c.slower, c.faster, c.same, c.inconclusive, geomean_text(c), c.options.metric,
             method_text(c), noise_text(c)) +
         could_see_counts(c);
}

// Two files cannot separate a small change from the machine's drift between them; ab can.
constexpr const char* kAbAdvice =
    "for a verdict on the INCONCLUSIVE rows, measure both builds side by side: offloadbench ab "
    "BASE_BINARY NEW_BINARY";

// Repetitions from one process share its memory layout and its moment of the machine: what moves
// between runs is learned from the whole file, and single benchmarks can still jump between
// processes.
std::string one_process_note(const Comparison& c) {
  if ((c.base_processes > 1 && c.new_processes > 1) || c.slower + c.faster + c.inconclusive == 0)
    return "";
  const char* which = c.base_processes > 1  ? "NEW's"
                      : c.new_processes > 1 ? "BASE's"
                                            : "each file's";
  return fmt::format(
      "{} repetitions come from one process, so how much a benchmark moves between runs is "
      "estimated "
      "from the whole file, not seen; for verdicts that hold benchmark by benchmark, measure both "
      "with `offloadbench run --processes 5` (docs/regression.md)",
      which);
}

// "5 rows of family cpu_normalize moved slower together (+20.1% to +27.9%): ..." — one finding for
// them all.
std::string shared_shift_text(const SharedShift& s) {
  return fmt::format(
      "{} rows of family {} moved {} together ({} to {}, beyond the pair's common shift): a cause "
      "they share moved them, code they share or the machine; offloadbench ab BASE_BINARY "
      "NEW_BINARY "
      "on them tells which",
      s.names.size(), printable(s.family), s.slower ? "slower" : "faster", format_percent(s.low),
      format_percent(s.high));
}

}  // namespace

namespace {

// Columns a line takes on a terminal: UTF-8 code points (≥, δ, ±, — are one column each).
std::size_t columns(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char ch : text) n += (ch & 0xC0) != 0x80;
  return n;
}

// `text` after `prefix`, broken at spaces into lines under kTextColumns, continuations indented.
std::string wrapped(const std::string& prefix, const std::string& text,
                    const std::string& indent = "  ") {
  std::string out = prefix;
  std::size_t used = columns(prefix);
  bool first_word = true;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto space = text.find(' ', at);
    const auto word = text.substr(at, space == std::string::npos ? std::string::npos : space - at);
    at = space == std::string::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    if (!first_word && used + 1 + columns(word) >= kTextColumns) {
      out += "\n" + indent + word;
      used = columns(indent) + columns(word);
    } else {
      out += (first_word ? "" : " ") + word;
      used += (first_word ? 0 : 1) + columns(word);
    }
    first_word = false;
  }
  return out + "\n";
}

// "compare: 1 SLOWER, 0 FASTER, 7 SAME, 12 INCONCLUSIVE of 20 rows; geometric-mean change +6.1%"
std::string verdict_line(const Comparison& c) {
  return fmt::format(
      "compare: {} SLOWER, {} FASTER, {} SAME, {} INCONCLUSIVE of {} rows; geometric-mean change "
      "{}",
      c.slower, c.faster, c.same, c.inconclusive, c.rows.size(), geomean_text(c));
}

// What to do about the verdict: confirm a change side by side, or measure files that can show one.
std::vector<std::string> next_steps(const Comparison& c) {
  std::vector<std::string> steps;
  if (c.slower > 0)
    steps.push_back("confirm the SLOWER rows side by side: offloadbench ab BASE_EXE NEW_EXE");
  else if (c.inconclusive > 0)
    steps.push_back("for a verdict on the INCONCLUSIVE rows: offloadbench ab BASE_EXE NEW_EXE");
  else if (c.faster > 0)
    steps.push_back("confirm the FASTER rows side by side: offloadbench ab BASE_EXE NEW_EXE");
  if (one_process(c) && c.slower + c.faster + c.inconclusive > 0) {
    const char* which = c.base_processes > 1 ? "NEW" : c.new_processes > 1 ? "BASE" : "each file";
    steps.push_back(fmt::format(
        "{} ran in one process: remeasure with run --repetitions 10 --processes 10", which));
  }
  if (steps.empty()) steps.push_back("nothing to do; every row is SAME");
  return steps;
}

// A row's figure for its column, without the one-process advice (the next: line gives it once).
std::string could_see_short(const BenchmarkComparison& row) {
  if (!carries_figure(row)) return "";
  if (std::isinf(row.detectable)) return "none";
  if (row.detectable > 10) return "> 1000%";
  return detectable_text(row.detectable, false).substr(std::string("could see ").size());
}

// "label  name", or the name whole on a line of its own where both would not fit.
std::string with_name(const std::string& label, const std::string& name,
                      const std::string& gap = "  ") {
  return label + (columns(label) + columns(gap) + columns(name) >= kTextColumns ? "\n    " : gap) +
         name + "\n";
}

void print_row(std::FILE* out, const BenchmarkComparison& row, const Comparison& c, bool verbose) {
  // A name too long for the row goes whole on a line of its own: a --benchmark_filter needs all of
  // it.
  fmt::print(out, "{}",
             with_name(fmt::format("{:<12} {:>8} {:>9}", verdict_name(row.verdict),
                                   change_text(row), could_see_short(row)),
                       printable(row.name)));
  if (!verbose) return;
  std::string detail = fmt::format("{}/{} repetitions", row.base_count, row.new_count);
  if (!row.test.empty() && row.reason.find("p=") == std::string::npos)
    detail += ", p " + format_p(row.p_value);
  if (!row.reason.empty()) detail += ": " + printable(row.reason);
  if (one_process(c) && carries_figure(row)) detail += "; " + could_see(row, c);
  fmt::print(out, "{}", wrapped("    ", detail, "    "));
}

}  // namespace

void print_comparison(std::FILE* out, const Comparison& c, bool verbose) {
  fmt::print(out, "{}\n", verdict_line(c));
  for (const auto& step : next_steps(c)) fmt::print(out, "{}", wrapped("next: ", step));
  if (!c.machine_note.empty()) fmt::print(out, "{}", wrapped("note: ", printable(c.machine_note)));
  if (verbose) {
    fmt::print(out, "{}",
               wrapped("method: ",
                       fmt::format("{}, positive = slower; {}", c.options.metric, method_text(c))));
    fmt::print(out, "{}", wrapped("noise: ", noise_text(c)));
    if (const auto counts = could_see_counts(c); !counts.empty())
      fmt::print(out, "{}", wrapped("could see: ", counts.substr(2)));
  }
  for (const auto& shift : c.shared) {
    const auto finding =
        fmt::format("{} rows of family {} moved {} together ({} to {})", shift.names.size(),
                    printable(shift.family), shift.slower ? "slower" : "faster",
                    format_percent(shift.low), format_percent(shift.high));
    fmt::print(out, "{}", wrapped("shared shift: ", verbose ? shared_shift_text(shift) : finding));
    if (verbose)
      for (const auto& name : shift.names) fmt::print(out, "  {}\n", printable(name));
  }
  fmt::print(out, "{:<12} {:>8} {:>9}  {}\n", "verdict", "change", "could see", "benchmark");
  for (const auto& row : c.rows) print_row(out, row, c, verbose);
  for (const auto& name : c.only_in_base)
    fmt::print(out, "{}", with_name("only in BASE:", printable(name), " "));
  for (const auto& name : c.only_in_new)
    fmt::print(out, "{}", with_name("only in NEW: ", printable(name), " "));
  if (!c.skipped_in_both.empty())
    fmt::print(out, "{} benchmark(s) skipped in both files\n", c.skipped_in_both.size());
}

std::string comparison_markdown(const Comparison& c, const std::string& base_label,
                                const std::string& new_label) {
  std::string md = fmt::format("### offloadbench compare\n\n{} → {}\n\n**{}**\n\n",
                               markdown_code(base_label, false), markdown_code(new_label, false),
                               summary_line(c));
  if (!c.machine_note.empty())
    md += fmt::format("> **Note:** {}\n\n", markdown_cell(c.machine_note));
  for (const auto& shift : c.shared) {
    md += fmt::format("> **Shared shift:** {}:", markdown_cell(shared_shift_text(shift)));
    for (const auto& name : shift.names) md += fmt::format(" {}", markdown_code(name));
    md += "\n\n";
  }
  if (c.inconclusive > 0) md += fmt::format("{}\n\n", kAbAdvice);
  if (const auto note = one_process_note(c); !note.empty()) md += fmt::format("> {}\n\n", note);
  md +=
      "| verdict | benchmark | base median | new median | change | p | reps | could see | why |\n";
  md += "|---|---|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& row : c.rows)
    md += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {}/{} | {} | {} |\n", verdict_name(row.verdict),
        markdown_code(row.name), format_metric(row.base_median, c.options.metric),
        format_metric(row.new_median, c.options.metric), change_text(row),
        row.test.empty() ? "—" : format_p(row.p_value), row.base_count, row.new_count,
        carries_figure(row) ? could_see(row, c).substr(std::string("could see ").size()) : "—",
        markdown_cell(row.reason));
  if (!c.only_in_base.empty() || !c.only_in_new.empty())
    md += fmt::format("\n{} benchmark(s) only in BASE, {} only in NEW.\n", c.only_in_base.size(),
                      c.only_in_new.size());
  for (const auto& name : c.only_in_base)
    md += fmt::format("- only in BASE: {}\n", markdown_code(name, false));
  for (const auto& name : c.only_in_new)
    md += fmt::format("- only in NEW: {}\n", markdown_code(name, false));
  if (!c.skipped_in_both.empty())
    md += fmt::format("\n{} benchmark(s) skipped in both files (not compared).\n",
                      c.skipped_in_both.size());
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
    rows.push_back(
        {{"name", r.name},
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
         {"base_fastest",
          r.test.empty() ? nlohmann::json() : nlohmann::json(fastest(r.base_floor, c))},
         {"new_fastest",
          r.test.empty() ? nlohmann::json() : nlohmann::json(fastest(r.new_floor, c))},
         {"history_spread",
          r.history_spread < 0 ? nlohmann::json() : nlohmann::json(r.history_spread)},
         // The smallest slowdown the rule would have flagged here (null: none at all, or no test).
         {"could_see",
          std::isfinite(r.detectable) ? nlohmann::json(r.detectable) : nlohmann::json()},
         {"could_see_text", could_see(r, c)},
         {"test", r.test}});
  nlohmann::json shared = nlohmann::json::array();
  for (const auto& s : c.shared)
    shared.push_back({{"family", s.family},
                      {"direction", s.slower ? "slower" : "faster"},
                      {"rows", s.names},
                      {"low", s.low},
                      {"high", s.high}});
  return without_non_finite(
      {{"metric", c.options.metric},
       {"higher_is_better", higher_is_better(c.options.metric)},
       {"delta_cpu", c.options.delta_cpu},
       {"delta_gpu", c.options.delta_gpu},
       {"alpha", c.options.alpha},
       {"min_repetitions", c.options.min_repetitions},
       {"counts",
        {{"SLOWER", c.slower},
         {"FASTER", c.faster},
         {"SAME", c.same},
         {"INCONCLUSIVE", c.inconclusive}}},
       {"geomean_slowdown", c.geomean_slowdown},
       {"processes", {{"base", c.base_processes}, {"new", c.new_processes}}},
       {"run_pair_noise",
        {{"common_shift", std::expm1(c.noise.common_shift)},
         {"between", c.noise.between},
         {"test", c.noise.floors ? "floor" : "welch"},
         {"floor_scale", c.noise.floors
                             ? nlohmann::json({{"single_thread", c.noise.floor_scale_single_thread},
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
