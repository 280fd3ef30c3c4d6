#include "harness/regression/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <boost/math/distributions/poisson.hpp>
#include <fmt/format.h>

#include "harness/analysis/math_policy.h"
#include "harness/analysis/stats.h"
#include "harness/regression/detectable.h"
#include "harness/regression/signed_rank.h"
#include "harness/regression/welch.h"
#include "harness/results/results.h"

namespace offloadbench {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Row fields that describe what was measured (docs/results-schema.md); two rows with the same name
// but different values here are different benchmarks.
const char* const kParameterKeys[] = {
    "family", "op",          "device", "bytes",  "elements",      "m",    "n", "k",
    "batch",  "cpu_threads", "view",   "series", "compare_group", "sweep"};

double seconds_per_unit(const std::string& unit, const std::string& where) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1.0;
  throw ResultsError(fmt::format("{}: unknown time_unit '{}'", where, unit));
}

bool is_time_metric(const std::string& metric) {
  return metric == "real_time" || metric == "cpu_time";
}

double metric_value(const nlohmann::json& row, const std::string& metric,
                    const std::string& where) {
  if (!row.contains(metric)) throw ResultsError(fmt::format("{}: no '{}' field", where, metric));
  const auto& v = row[metric];
  if (v.is_null())
    throw ResultsError(
        fmt::format("{}: '{}' is null (NaN or infinity when measured)", where, metric));
  if (!v.is_number()) throw ResultsError(fmt::format("{}: '{}' is not a number", where, metric));
  const double value = v.get<double>();
  if (!std::isfinite(value) || value < 0)
    throw ResultsError(fmt::format("{}: '{}' is {}", where, metric, value));
  if (!is_time_metric(metric)) return value;
  return value * seconds_per_unit(row.value("time_unit", std::string("ns")), where);
}

nlohmann::json parameters_of(const nlohmann::json& row) {
  nlohmann::json parameters = nlohmann::json::object();
  for (const char* key : kParameterKeys)
    if (row.contains(key)) parameters[key] = row[key];
  return parameters;
}

// "bytes (1024 vs 2048)" for every parameter present on both sides with different values.
std::string parameter_differences(const nlohmann::json& base, const nlohmann::json& candidate) {
  std::string text;
  for (auto it = base.begin(); it != base.end(); ++it)
    if (candidate.contains(it.key()) && candidate[it.key()] != it.value())
      text += fmt::format("{}{} ({} vs {})", text.empty() ? "" : ", ", it.key(), it.value().dump(),
                          candidate[it.key()].dump());
  return text;
}

// "load average 16.9 vs 3.2" from Google Benchmark's context.load_avg (1-minute figure), when both
// have it.
std::string load_text(const nlohmann::json& base, const nlohmann::json& candidate) {
  auto first = [](const nlohmann::json& ctx) {
    const auto it = ctx.find("load_avg");
    return it != ctx.end() && it->is_array() && !it->empty() && (*it)[0].is_number()
               ? (*it)[0].get<double>()
               : -1.0;
  };
  const double a = first(base), b = first(candidate);
  return a >= 0 && b >= 0 ? fmt::format("; load average {:.1f} vs {:.1f}", a, b) : "";
}

// A shared machine shifts every benchmark together; a code change rarely does.
std::string machine_state_note(const Comparison& c, const nlohmann::json& base_context,
                               const nlohmann::json& new_context) {
  int up = 0, down = 0;
  for (const auto& row : c.rows) {
    if (!std::isfinite(row.slowdown)) continue;
    up += row.slowdown > 1 + c.options.delta_cpu;
    down += row.slowdown < 1 / (1 + c.options.delta_cpu);
  }
  const int moved = std::max(up, down), measured = static_cast<int>(c.rows.size());
  if (measured < 4 || moved < 0.75 * measured ||
      !(std::fabs(std::log(c.geomean_slowdown)) >= 2 * c.options.delta_cpu))
    return "";
  return fmt::format(
      "{} of {} benchmarks moved {} (geometric mean {}): suspect the machine's state (load, "
      "clocks, "
      "other tenants) before the code{}",
      moved, measured, up > down ? "slower" : "faster", format_percent(c.geomean_slowdown - 1),
      load_text(base_context, new_context));
}

// A benchmark's standard error with the run pair's between-runs term, and its degrees of freedom
// (Welch–Satterthwaite for the sum: the term is learned from every benchmark of the pair).
std::pair<double, double> total_error(const BenchmarkComparison& r, const RunPairNoise& noise) {
  const double own = r.standard_error * r.standard_error, drift = noise.between * noise.between;
  const double total = own + drift;
  if (!(drift > 0)) return {r.standard_error, r.df};
  const double df = total * total /
                    (own * own / r.df + drift * drift / static_cast<double>(noise.benchmarks - 1));
  return {std::sqrt(total), df};
}

// The one-sided tests of a benchmark against ±δ, relative to the run pair's common shift and with
// the between-runs term in its standard error.
void test_against_delta(BenchmarkComparison& r, const RunPairNoise& noise, double alpha) {
  const double margin = std::log1p(r.delta), shift = r.log_shift - noise.common_shift;
  const auto [se, df] = total_error(r, noise);
  const auto upper =
      [&](double difference) {  // P(T > difference / se): evidence that difference > 0
        if (se > 0) return student_t_upper_tail(difference / se, df);
        return difference > 0 ? 0.0 : difference < 0 ? 1.0 : 0.5;
      };
  r.p_slower = upper(shift - margin);
  r.p_faster = upper(-shift - margin);
  // Two one-sided tests: below +δ and above −δ, each at alpha, make the change equivalent to none.
  r.inside = upper(margin - shift) < alpha && upper(shift + margin) < alpha;
}

// A mean of logs can be carried by one wild repetition; the verdict also needs the medians to have
// moved by more than δ and the interquartile ranges not to overlap, in the direction of the test.
std::string gate_failure(const BenchmarkComparison& r, bool slower, double common_shift) {
  const double margin = std::log1p(r.delta);
  const double median_shift = r.new_log_median - common_shift - r.base_log_median;
  if ((slower ? median_shift : -median_shift) <= margin)
    return fmt::format("the medians moved by less than {}", format_percent(r.delta).substr(1));
  const bool apart =
      slower ? r.new_q1 - common_shift > r.base_q3 : r.new_q3 - common_shift < r.base_q1;
  return apart ? "" : "the repetitions' interquartile ranges overlap";
}

// The opposite tail as a witness. A slowdown moves benchmarks one way; the noise between two runs
// moves them both ways. Benchmarks far out on the faster side (one-sided p below kTailP against −δ)
// beyond what the model expects of that many benchmarks (the Poisson count that is exceeded with
// probability under alpha) say the pair's noise has heavier tails than the test assumes — on a
// loaded machine, multi-threaded rows whose threads were preempted — so no verdict the other way
// can be trusted either (lab/records/regression.md).
constexpr double kTailP = 0.001;

// Beyond this spread between the runs (RunPairNoise::between, log units ≈ ±10%) even a 50% change
// is within 4 standard deviations of the noise, and pairs that noisy have heavy tails besides
// (single rows shifted 3x and more with nothing changed): two files cannot support a verdict, so
// none is given.
constexpr double kMaxBetween = 0.10;

int tail_allowance(std::size_t tested, double alpha) {
  if (tested == 0) return 0;
  const boost::math::poisson_distribution<double, MathPolicy> far_out(kTailP *
                                                                      static_cast<double>(tested));
  int k = 0;  // the smallest k with P(X > k) ≤ alpha
  while (boost::math::cdf(boost::math::complement(far_out, k)) > alpha) ++k;
  return k;
}

struct TailWitness {
  int slower = 0, faster = 0,
      allowance = 0;   // benchmarks far out on each side, and how many the model allows
  double between = 0;  // the run pair's spread between the runs
};

// Why Welch's verdict is withheld although its test rejected ("" when it stands); see
// compare_samples.
std::string welch_gate(const BenchmarkComparison& r, bool slower, double common_shift,
                       const TailWitness& tails) {
  std::string gate = gate_failure(r, slower, common_shift);
  if (gate.empty() && tails.between > kMaxBetween)
    gate = fmt::format(
        "the benchmarks moved ±{:.0f}% apart between these runs, more than the ±{:.0f}% within "
        "which "
        "two files can support a verdict",
        100 * tails.between, 100 * kMaxBetween);
  if (gate.empty() && (slower ? tails.faster : tails.slower) > tails.allowance)
    gate = fmt::format(
        "{} benchmarks moved {} just as far (the model allows {}): the noise between these runs "
        "has heavier tails than the test assumes",
        slower ? tails.faster : tails.slower, slower ? "faster" : "slower", tails.allowance);
  return gate;
}

// The floors' counterpart of gate_failure: the floor moved by more than δ, and past the other
// file's processes up to floor_gate_rank (NEW's fastest slower than BASE's slowest with 5 processes
// a side, or the reverse). When all of a file's processes land on a benchmark's upper level, its
// floor jumps by that level's height; a gate at the faster half alone lets such jumps through as
// false alarms in most pairs of unchanged files from such a machine (lab/records/regression.md).
std::string floor_gate(const BenchmarkComparison& r, bool slower, double common_shift) {
  const double shift = r.new_floor.fastest() - common_shift - r.base_floor.fastest();
  if ((slower ? shift : -shift) <= std::log1p(r.delta))
    return fmt::format("the fastest processes moved by less than {}",
                       format_percent(r.delta).substr(1));
  const std::size_t nb = r.base_floor.sorted.size(), nn = r.new_floor.sorted.size();
  const bool apart =
      slower ? r.new_floor.fastest() - common_shift > r.base_floor.slowest(floor_gate_rank(nb, nn))
             : r.base_floor.fastest() > r.new_floor.slowest(floor_gate_rank(nn, nb)) - common_shift;
  return apart ? "" : "the two files' processes overlap";
}

// "median +9.8%", and for the floors' test also where the fastest process went, in the metric's
// terms.
std::string change_words(const BenchmarkComparison& r, bool rate) {
  if (r.test != "floor") return fmt::format("median {}", format_percent(r.change));
  const double floor_shift = r.new_floor.fastest() - r.base_floor.fastest();  // in log slowness
  return fmt::format("median {}, fastest {}", format_percent(r.change),
                     format_percent(std::expm1(rate ? -floor_shift : floor_shift)));
}

// The verdict from a (Holm-adjusted) directional p-value and, when it rejected, the gate's
// objection.
void decide(BenchmarkComparison& r, double p_adjusted, double alpha, const std::string& gate,
            bool rate) {
  r.p_value = p_adjusted;
  const std::string delta = format_percent(r.delta).substr(1);
  const bool slower = r.p_slower < r.p_faster;
  const std::string change = change_words(r, rate);
  const char* says = r.test == "floor" ? "the fastest processes say" : "the means say";
  if (p_adjusted < alpha && gate.empty()) {
    r.verdict = slower ? Verdict::slower : Verdict::faster;
    r.reason = fmt::format("{}: {} by more than {} (p={})", change, slower ? "slower" : "faster",
                           delta, format_p(p_adjusted));
  } else if (r.inside) {
    r.verdict = Verdict::same;
    r.reason = fmt::format("{}, within ±{}", change, delta);
  } else if (p_adjusted < alpha) {
    r.verdict = Verdict::inconclusive;
    r.reason = fmt::format("{}: {} {} by more than {} (p={}), but {}", change, says,
                           slower ? "slower" : "faster", delta, format_p(p_adjusted), gate);
  } else {
    r.verdict = Verdict::inconclusive;
    r.reason = fmt::format(
        "{}, but {} cannot tell it from ±{} (p={})", change,
        r.test == "floor" ? "the spread of the faster processes" : "the repetitions' spread", delta,
        format_p(p_adjusted));
  }
}

// Welch's counterpart of the floors' figure (detectable.h): its gate is the interquartile ranges
// apart, about one range's width; past kMaxBetween, or with more far-out benchmarks the other way
// than the model allows, the pair supports no SLOWER at all.
double welch_detectable(const BenchmarkComparison& r, const RunPairNoise& noise,
                        const TailWitness& tails, std::size_t tests, double alpha) {
  if (tails.between > kMaxBetween || tails.faster > tails.allowance)
    return std::numeric_limits<double>::infinity();
  const auto [se, df] = total_error(r, noise);
  const double gate = ((r.base_q3 - r.base_q1) + (r.new_q3 - r.new_q1)) / 2;
  return std::expm1(detectable_log_slowdown(std::log1p(r.delta), se, df, tests, alpha, gate));
}

// The noise between the two runs, learned from every tested benchmark (see RunPairNoise).
RunPairNoise run_pair_noise(const std::vector<BenchmarkComparison>& rows) {
  RunPairNoise noise;
  std::vector<const BenchmarkComparison*> tested;
  for (const auto& row : rows)
    if (!row.test.empty()) tested.push_back(&row);
  if (tested.size() < kMinBenchmarksForRunPairNoise) return noise;
  std::vector<double> shifts;
  for (const auto* row : tested) shifts.push_back(row->log_shift);
  noise.common_shift = median(shifts);
  noise.benchmarks = tested.size();
  // The median standardised shift relative to its null median (the upper quartile of the row's t),
  // as a function of τ: it falls as τ grows; τ is where it reaches 1 (0 when it starts below).
  const auto standardised = [&](double tau) {
    RunPairNoise trial = noise;
    trial.between = tau;
    std::vector<double> z;
    for (const auto* row : tested) {
      const auto [se, df] = total_error(*row, trial);
      if (se > 0)
        z.push_back(std::fabs(row->log_shift - noise.common_shift) / se /
                    student_t_upper_quantile(0.25, df));
    }
    return z.empty() ? 0.0 : median(z);
  };
  if (standardised(0) <= 1) return noise;
  double low = 0, high = 1e-3;
  while (standardised(high) > 1 && high < 1e3) high *= 2;
  for (int i = 0; i < 60 && high - low > 1e-6 * high; ++i) {
    const double middle = (low + high) / 2;
    (standardised(middle) > 1 ? low : high) = middle;
  }
  noise.between = high;
  return noise;
}

// The floors' test over a file pair whose repetitions each ran in a process of their own
// (floor_significance.h); false when the files are not such a pair or have too few tested
// benchmarks to learn its scale.
bool floor_verdicts(Comparison& c) {
  if (c.base_processes < 2 || c.new_processes < 2) return false;
  std::vector<BenchmarkComparison*> tested;
  for (auto& row : c.rows)
    if (!row.test.empty()) tested.push_back(&row);
  if (tested.size() < kMinBenchmarksForRunPairNoise) return false;
  RunPairNoise noise;
  noise.floors = true;
  noise.benchmarks = tested.size();
  std::vector<double> shifts;
  for (auto* row : tested) {
    row->test = "floor";
    row->log_shift = row->new_floor.fastest() - row->base_floor.fastest();
    shifts.push_back(row->log_shift);
  }
  noise.common_shift = median(shifts);
  const auto uncertainty = [&c](BenchmarkComparison& row) {
    const auto it = c.options.floor_history.find(row.name);
    row.history_spread = it == c.options.floor_history.end() ? -1 : it->second;
    return floor_uncertainty(row.base_floor, row.new_floor, std::max(0.0, row.history_spread));
  };
  std::vector<FloorRow> single, other, all;
  std::vector<std::size_t> in_group;  // each tested row's place in its group's rows
  for (auto* row : tested) {
    const double u = uncertainty(*row);  // sets history_spread
    row->df = floor_df(row->single_thread, row->history_spread >= 0);
    auto& group = row->single_thread ? single : other;
    in_group.push_back(group.size());
    group.push_back({row->log_shift, u, row->df});
    all.push_back(group.back());
  }
  const bool split = single.size() >= kMinFloorRows && other.size() >= kMinFloorRows;
  if (split) {
    noise.floor_scale_single_thread = floor_scale(single, noise.common_shift);
    noise.floor_scale_other = floor_scale(other, noise.common_shift);
  } else {
    noise.floor_scale_single_thread = noise.floor_scale_other =
        floor_scale(all, noise.common_shift);
  }
  c.noise = noise;
  std::vector<double> p;
  for (auto* row : tested) {
    row->standard_error =
        (row->single_thread ? noise.floor_scale_single_thread : noise.floor_scale_other) *
        uncertainty(*row);
    test_against_delta(*row, RunPairNoise{noise.common_shift, 0, 0}, c.options.alpha);
    p.push_back(std::min(1.0, 2 * std::min(row->p_slower, row->p_faster)));
  }
  const auto adjusted = holm_adjust(p);
  const bool rate = higher_is_better(c.options.metric);
  // How far this pair's rows of each kind moved, in their standard errors (the figure's power
  // term).
  std::vector<double> moves_single, moves_other;
  for (const auto* row : tested)
    if (row->standard_error > 0)
      (row->single_thread || !split ? moves_single : moves_other)
          .push_back((row->log_shift - noise.common_shift) / row->standard_error);
  const double power_z_single = power_quantile_of_moves(moves_single);
  const double power_z_other = split ? power_quantile_of_moves(moves_other) : power_z_single;
  for (std::size_t i = 0; i < tested.size(); ++i) {
    auto& row = *tested[i];
    const bool slower = row.p_slower < row.p_faster;
    decide(row, adjusted[i], c.options.alpha,
           adjusted[i] < c.options.alpha ? floor_gate(row, slower, noise.common_shift) : "", rate);
    // The gate a slowdown must pass: NEW's fastest process beyond BASE's k-th slowest.
    const auto& b = row.base_floor;
    const double gate =
        b.slowest(floor_gate_rank(b.sorted.size(), row.new_floor.sorted.size())) - b.fastest();
    // Had this row alone slowed, the common shift and its scale would have moved with it (one order
    // statistic each), and its verdict would have been judged by those: so is its figure.
    auto moved_shifts = shifts;
    moved_shifts[i] = std::numeric_limits<double>::infinity();
    const double moved_common = median(moved_shifts);
    const double moved_scale =
        split ? floor_scale_if_moved(row.single_thread ? single : other, moved_common, in_group[i])
              : floor_scale_if_moved(all, moved_common, i);
    const double moved_se = std::max(row.standard_error, moved_scale * uncertainty(row));
    row.detectable =
        std::expm1(moved_common - noise.common_shift +
                   detectable_log_slowdown(std::log1p(row.delta), moved_se, row.df, tested.size(),
                                           c.options.alpha, gate,
                                           row.single_thread ? power_z_single : power_z_other));
  }
  return true;
}

// Holm across every benchmark that was tested: many benchmarks at once must not multiply false
// alarms.
void holm_verdicts(Comparison& c) {
  if (floor_verdicts(c)) return;
  c.noise = run_pair_noise(c.rows);
  std::vector<BenchmarkComparison*> tested;
  std::vector<double> p;
  for (auto& row : c.rows)
    if (!row.test.empty()) {
      test_against_delta(row, c.noise, c.options.alpha);
      tested.push_back(&row);
      p.push_back(std::min(1.0, 2 * std::min(row.p_slower, row.p_faster)));
    }
  TailWitness tails;
  if (c.noise.benchmarks > 0) {
    for (const auto* row : tested) {
      tails.slower += row->p_slower < kTailP;
      tails.faster += row->p_faster < kTailP;
    }
    tails.allowance = tail_allowance(tested.size(), c.options.alpha);
    tails.between = c.noise.between;
  } else {
    tails.allowance = static_cast<int>(tested.size());  // too few benchmarks to witness anything
  }
  c.tails_slower = tails.slower;
  c.tails_faster = tails.faster;
  c.tail_allowance = tails.allowance;
  const auto adjusted = holm_adjust(p);
  const bool rate = higher_is_better(c.options.metric);
  for (std::size_t i = 0; i < tested.size(); ++i) {
    auto& row = *tested[i];
    const bool slower = row.p_slower < row.p_faster;
    decide(
        row, adjusted[i], c.options.alpha,
        adjusted[i] < c.options.alpha ? welch_gate(row, slower, c.noise.common_shift, tails) : "",
        rate);
    row.detectable = welch_detectable(row, c.noise, tails, tested.size(), c.options.alpha);
  }
}

}  // namespace

std::string format_percent(double fraction) {
  const double percent = 100 * fraction;
  if (std::isfinite(percent) && std::abs(percent) < 1e6) return fmt::format("{:+.1f}%", percent);
  // A time of 1e308 against a real one: a factor, never "+inf%" nor a 300-digit percentage.
  return std::isfinite(fraction) ? fmt::format("×{:.3g}", 1 + fraction) : "—";
}

std::string format_p(double p) {
  return p < 1e-4 ? fmt::format("{:.1e}", p) : fmt::format("{:.4f}", p);
}

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::slower:
      return "SLOWER";
    case Verdict::faster:
      return "FASTER";
    case Verdict::same:
      return "SAME";
    case Verdict::inconclusive:
      return "INCONCLUSIVE";
  }
  return "INCONCLUSIVE";
}

double log_slowness(double value, bool rate) { return rate ? -std::log(value) : std::log(value); }

int processes_of(const nlohmann::json& doc) {
  const auto& ob = doc["context"].value("offloadbench", nlohmann::json::object());
  const auto it = ob.find("processes");
  return it != ob.end() && it->is_number_integer() && it->get<int>() > 1 ? it->get<int>() : 1;
}

bool higher_is_better(const std::string& metric) {
  const std::string suffix = "_per_second";
  return metric.size() > suffix.size() &&
         metric.compare(metric.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<BenchmarkSamples> benchmark_samples(const nlohmann::json& doc,
                                                const std::string& metric,
                                                const std::string& origin) {
  std::vector<BenchmarkSamples> out;
  std::map<std::string, std::size_t> index;
  for (const auto& row : doc.at("benchmarks")) {
    const auto name = row.at("name").get<std::string>();
    const auto where = fmt::format("{}: benchmark '{}'", origin, name);
    try {
      if (row.at("run_type").get<std::string>() != "iteration") continue;
      auto [it, inserted] = index.emplace(name, out.size());
      if (inserted)
        out.push_back(BenchmarkSamples{name, {}, false, "", nlohmann::json::object(), 0, false});
      auto& samples = out[it->second];
      if (row.value("skipped", false)) {
        samples.skipped = true;
        samples.skip_reason = row.value("skip_reason", std::string());
        continue;
      }
      if (row.value("error_occurred", false)) continue;  // an invalid row's time means nothing
      samples.clocks_unlocked |= row.contains("clocks_locked") && row["clocks_locked"] == false;
      if (row.value("clock_throttled", false)) {
        ++samples.throttled;
        continue;
      }
      samples.values.push_back(metric_value(row, metric, where));
      if (samples.parameters.empty()) samples.parameters = parameters_of(row);
    } catch (const nlohmann::json::exception& e) {  // a field of the wrong type
      throw ResultsError(fmt::format("{}: {}", where, e.what()));
    }
  }
  return out;
}

BenchmarkComparison compare_samples(const std::string& name, const std::vector<double>& base,
                                    const std::vector<double>& candidate,
                                    const CompareOptions& options, bool gpu_row) {
  BenchmarkComparison r;
  r.name = name;
  r.base_count = base.size();
  r.new_count = candidate.size();
  r.delta = gpu_row ? options.delta_gpu : options.delta_cpu;
  r.base_median = base.empty() ? kNaN : median(base);
  r.new_median = candidate.empty() ? kNaN : median(candidate);
  const bool rate = higher_is_better(options.metric);
  r.change = r.new_median / r.base_median - 1;
  r.slowdown = rate ? r.base_median / r.new_median : r.new_median / r.base_median;
  if (!(r.base_median > 0) || !(r.new_median > 0)) {
    r.change = r.slowdown = kNaN;
    r.reason = "no positive median to compare";
    return r;
  }
  const auto minimum =
      static_cast<std::size_t>(std::max(2, options.min_repetitions));  // Welch needs two
  if (base.size() < minimum || candidate.size() < minimum) {
    r.reason = fmt::format("fewer than {} repetitions (base {}, new {})", options.min_repetitions,
                           base.size(), candidate.size());
    return r;
  }
  const auto not_positive = [](double v) { return !(v > 0); };
  if (std::any_of(base.begin(), base.end(), not_positive) ||
      std::any_of(candidate.begin(), candidate.end(), not_positive)) {
    r.reason = "a repetition measured 0, which has no logarithm";
    return r;
  }
  // Log time-equivalents (a rate's −log), so that larger is slower and δ is a ratio on either side.
  const auto slowness = [rate](const std::vector<double>& values) {
    std::vector<double> out;
    for (double v : values) out.push_back(log_slowness(v, rate));
    return out;
  };
  const auto b = slowness(base), n = slowness(candidate);
  const auto welch = welch_t(b, n);
  r.log_shift = welch.difference;
  r.standard_error = welch.standard_error;
  r.df = welch.df;
  r.base_q1 = quantile(b, 0.25);
  r.base_q3 = quantile(b, 0.75);
  r.new_q1 = quantile(n, 0.25);
  r.new_q3 = quantile(n, 0.75);
  r.base_log_median = median(b);
  r.new_log_median = median(n);
  r.base_floor = floor_of(b);
  r.new_floor = floor_of(n);
  r.test = "welch";
  test_against_delta(r, RunPairNoise{}, options.alpha);
  const double p = std::min(1.0, 2 * std::min(r.p_slower, r.p_faster));
  decide(
      r, p, options.alpha,
      p < options.alpha ? welch_gate(r, r.p_slower < r.p_faster, 0, TailWitness{0, 0, 1, 0}) : "",
      rate);
  r.detectable = welch_detectable(r, RunPairNoise{}, TailWitness{0, 0, 1, 0}, 1, options.alpha);
  return r;
}

std::vector<std::string> fingerprint_differences(const nlohmann::json& base,
                                                 const nlohmann::json& candidate) {
  std::vector<std::string> differences;
  std::vector<std::string> keys;
  for (const auto* side : {&base, &candidate})
    for (auto it = side->begin(); it != side->end(); ++it)
      if (it.key() != "id" && std::find(keys.begin(), keys.end(), it.key()) == keys.end())
        keys.push_back(it.key());
  for (const auto& key : keys) {
    const auto a = base.contains(key) ? base[key] : nlohmann::json();
    const auto b = candidate.contains(key) ? candidate[key] : nlohmann::json();
    if (a != b) differences.push_back(fmt::format("{} ({} vs {})", key, a.dump(), b.dump()));
  }
  return differences;
}

nlohmann::json load_for_comparison(const std::string& path) {
  auto doc = load_results(path);
  if (doc["benchmarks"].empty())
    throw ResultsError(fmt::format("{}: no benchmarks (empty 'benchmarks' list)", path));
  const auto& ctx = doc["context"];
  if (!ctx.contains("machine_fingerprint") || !ctx["machine_fingerprint"].is_object())
    throw ResultsError(fmt::format("{}: missing 'context.machine_fingerprint'", path));
  return doc;
}

Comparison compare_results(const nlohmann::json& base, const nlohmann::json& candidate,
                           const CompareOptions& options, const std::string& base_origin,
                           const std::string& new_origin) {
  const auto differences = fingerprint_differences(
      base["context"].value("machine_fingerprint", nlohmann::json::object()),
      candidate["context"].value("machine_fingerprint", nlohmann::json::object()));
  if (!differences.empty() && !options.allow_different_machines) {
    std::string fields;
    for (const auto& d : differences) fields += (fields.empty() ? "" : "; ") + d;
    throw ResultsError(fmt::format(
        "{} and {} come from different machines: {}; pass --allow-different-machines to "
        "compare anyway",
        base_origin, new_origin, fields));
  }
  Comparison c;
  c.options = options;
  c.base_processes = processes_of(base);
  c.new_processes = processes_of(candidate);
  const auto base_samples = benchmark_samples(base, options.metric, base_origin);
  const auto new_samples = benchmark_samples(candidate, options.metric, new_origin);
  std::map<std::string, const BenchmarkSamples*> by_name;
  for (const auto& s : new_samples) by_name[s.name] = &s;
  std::map<std::string, bool> in_base;
  for (const auto& b : base_samples) {
    in_base[b.name] = true;
    const auto found = by_name.find(b.name);
    if (found == by_name.end()) {
      c.only_in_base.push_back(b.name);
      continue;
    }
    const auto& n = *found->second;
    if (b.values.empty() && n.values.empty()) {
      c.skipped_in_both.push_back(b.name);
      continue;
    }
    const bool gpu_row =
        b.parameters.contains("device") && b.parameters["device"].is_number_integer();
    auto row = compare_samples(b.name, b.values, n.values, options, gpu_row);
    row.single_thread = !gpu_row && b.parameters.value("cpu_threads", nlohmann::json()) == 1;
    if (const auto family = b.parameters.find("family");
        family != b.parameters.end() && family->is_string())
      row.family = family->get<std::string>();
    if (b.values.empty() || n.values.empty()) {
      row.verdict = Verdict::inconclusive;
      row.test.clear();
      row.detectable = kNaN;
      const auto& missing = b.values.empty() ? b : n;
      row.reason = fmt::format("not measured in {}{}", b.values.empty() ? "BASE" : "NEW",
                               missing.skip_reason.empty() ? "" : ": " + missing.skip_reason);
    } else if (const auto diff = parameter_differences(b.parameters, n.parameters); !diff.empty()) {
      row.verdict = Verdict::inconclusive;
      row.test.clear();
      row.detectable = kNaN;
      row.reason = "same name but parameters differ: " + diff;
    }
    c.rows.push_back(row);
  }
  for (const auto& n : new_samples)
    if (!in_base.count(n.name)) c.only_in_new.push_back(n.name);
  holm_verdicts(c);

  double log_sum = 0;
  int logs = 0;
  for (const auto& row : c.rows) {
    c.slower += row.verdict == Verdict::slower;
    c.faster += row.verdict == Verdict::faster;
    c.same += row.verdict == Verdict::same;
    c.inconclusive += row.verdict == Verdict::inconclusive;
    if (row.base_count > 0 && row.new_count > 0 && std::isfinite(row.slowdown)) {
      log_sum += std::log(row.slowdown);
      ++logs;
    }
  }
  c.geomean_slowdown = logs ? std::exp(log_sum / logs) : kNaN;
  c.machine_note = machine_state_note(c, base["context"], candidate["context"]);
  c.shared = shared_shifts(c.rows, c.noise.common_shift);
  std::stable_sort(c.rows.begin(), c.rows.end(), [](const auto& a, const auto& b) {
    const double x = std::isfinite(a.slowdown) ? a.slowdown : -1,
                 y = std::isfinite(b.slowdown) ? b.slowdown : -1;
    return x > y;
  });
  return c;
}

std::vector<std::string> slower_names(const Comparison& comparison) {
  std::vector<std::string> names;
  for (const auto& row : comparison.rows)
    if (row.verdict == Verdict::slower) names.push_back(row.name);
  return names;
}

}  // namespace offloadbench
