// What compare says each row could have seen (harness/regression/detectable.h): the figure follows
// its parts, a row slowed by its own figure is flagged about as often as promised, one-process
// files say what would help, and a pair that supports no verdict says so; and a family's rows that
// moved together are named once (SharedShift).
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>

#include "harness/analysis/stats.h"
#include "harness/regression/compare.h"
#include "harness/regression/detectable.h"
#include "harness/regression/welch.h"
#include "harness/results/results.h"

namespace offloadbench {

namespace {

struct Row {
  std::string name, family;
  int threads;
  std::vector<double> ns;
};

nlohmann::json file_of(const std::vector<Row>& rows, int processes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.ns.size(); ++i)
      out.push_back({{"name", row.name},
                     {"family", row.family},
                     {"run_type", "iteration"},
                     {"repetition_index", i},
                     {"real_time", row.ns[i]},
                     {"time_unit", "ns"},
                     {"cpu_threads", row.threads},
                     {"skipped", false}});
  nlohmann::json machine = {
      {"gpu_models", nlohmann::json::array()}, {"driver", "none"}, {"cpu_model", "Test CPU"}};
  return {{"context",
           {{"offloadbench", {{"schema_version", kResultsSchemaVersion}, {"processes", processes}}},
            {"machine_fingerprint", machine}}},
          {"benchmarks", out}};
}

// A pair of files of `processes` processes (1: repetitions of one process) of `count` benchmarks,
// each with its own noise: every value is the floor plus noise that only adds (0-`jitter` always,
// and with probability 0.2 a value lands 5-40% above). The rows named in `slowed` are slower by
// `factor` in every value of NEW; the random stream does not depend on them, so a slowed pair is
// the A/A pair of the same seed with those rows scaled.
struct Pair {
  nlohmann::json base, candidate;
};
Pair simulated(unsigned seed, int count, int processes, const std::vector<std::string>& slowed = {},
               double factor = 1, const std::string& family_of_first_five = "") {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> time(1e3, 1e6), unit(0, 1), far_by(0.05, 0.4),
      jitter(0.002, 0.06);
  std::vector<Row> base, candidate;
  for (int i = 0; i < count; ++i) {
    const std::string name = "bench" + std::to_string(i);
    const double t = time(rng), spread = jitter(rng);
    const auto sample = [&](double floor) {
      std::vector<double> ns;
      for (int p = 0; p < (processes > 1 ? processes : 10); ++p)
        ns.push_back(floor * (1 + spread * unit(rng)) * (unit(rng) < 0.2 ? 1 + far_by(rng) : 1));
      return ns;
    };
    const bool slow = std::find(slowed.begin(), slowed.end(), name) != slowed.end();
    const std::string family = i < 5 && !family_of_first_five.empty()
                                   ? family_of_first_five
                                   : "family" + std::to_string(i);
    base.push_back({name, family, 1 + i % 2, sample(t)});
    candidate.push_back({name, family, 1 + i % 2, sample(t * (slow ? factor : 1))});
  }
  return {file_of(base, processes), file_of(candidate, processes)};
}

const BenchmarkComparison& row_of(const Comparison& c, const std::string& name) {
  for (const auto& row : c.rows)
    if (row.name == name) return row;
  throw std::runtime_error("no row " + name);
}

}  // namespace

TEST(Detectable, TheLargerOfTheTestsNeedAndTheGatesWidth) {
  const double margin = std::log1p(0.02);
  const double one = detectable_log_slowdown(margin, 0.01, 5, 1, 0.05, 0);
  EXPECT_GT(
      one,
      margin +
          0.01 * 2);  // above δ by more than two standard errors (one-sided 2.5% and 80% power)
  EXPECT_GT(detectable_log_slowdown(margin, 0.02, 5, 1, 0.05, 0), one);  // more noise
  EXPECT_GT(detectable_log_slowdown(margin, 0.01, 5, 100, 0.05, 0),
            one);  // Holm over more benchmarks
  EXPECT_GT(detectable_log_slowdown(margin, 0.01, 2, 1, 0.05, 0), one);        // heavier tails
  EXPECT_DOUBLE_EQ(detectable_log_slowdown(margin, 0, 5, 1, 0.05, 0.5), 0.5);  // the gate is wider
  EXPECT_GT(detectable_log_slowdown(margin, 0.01, 5, 1, 0.05, 0.5), 0.5);  // and needs power too
  EXPECT_DOUBLE_EQ(detectable_log_slowdown(margin, 0, 5, 1, 0.05, 0), margin);  // never below δ
}

// The figure itself at one benchmark, 5 degrees of freedom and se = 1: t_{0.975, 5} + Φ⁻¹(0.80)·√(1
// + t²/10) (the noncentral t's normal approximation), from mpmath at 40 digits.
TEST(Detectable, MatchesTheFormulaAtHighPrecision) {
  EXPECT_NEAR(detectable_log_slowdown(0, 1, 5, 1, 0.05, 0), 3.6551926403725675, 1e-14);
}

// The figure's power where it is used: a t test at Holm's level over 194 benchmarks, whose standard
// error is itself estimated (χ² at the row's degrees of freedom). A shift of the figure's size is
// flagged in about 80% of draws, and not far more. With Student's t₀.₈ as the power term it would
// be well short of 80%: at t ≈ 9 the standard error's own spread decides most misses, not the
// shift's.
TEST(Detectable, AShiftOfTheFiguresSizeIsFlaggedAsOftenAsPromisedWhenTheErrorIsEstimated) {
  std::mt19937 rng(11);
  std::normal_distribution<double> shift_noise(0, 1);
  const double margin = std::log1p(0.02), se = 0.01;
  for (const double df : {2.0, 5.0, 8.0}) {
    std::chi_squared_distribution<double> chi2(df);
    const double threshold = student_t_upper_quantile(0.05 / 2 / 194, df);
    const double figure = detectable_log_slowdown(margin, se, df, 194, 0.05, 0);
    int flagged = 0;
    const int draws = 100000;
    for (int i = 0; i < draws; ++i) {
      const double shift = figure - margin + se * shift_noise(rng),
                   estimated_se = se * std::sqrt(chi2(rng) / df);
      flagged += shift / estimated_se > threshold;
    }
    EXPECT_GE(flagged, 0.78 * draws) << "df " << df;
    EXPECT_LE(flagged, 0.92 * draws)
        << "df " << df;  // and not far more: the figure would say too little
  }
}

TEST(Detectable, TextRoundsUpAndSaysWhatWouldHelpFilesOfOneProcess) {
  EXPECT_EQ(detectable_text(0.061, false), "could see ≥ 7%");
  EXPECT_EQ(detectable_text(0.40, true),
            "could see ≥ 40%: one process a side, run with --processes 10");
  EXPECT_EQ(detectable_text(10.0, false), "could see ≥ 1000%");
  EXPECT_EQ(detectable_text(728056.55, false), "could see only > 1000%");
  EXPECT_EQ(detectable_text(INFINITY, false), "could see no change");
  EXPECT_EQ(detectable_text(NAN, false), "");
}

// The promise of the figure, on simulated pairs of ten processes a side: a row slowed by the figure
// its A/A pair gave it is SLOWER in about 80% of pairs (the power it is computed for), and a row
// slowed by a third of it almost never. 200 pairs, so that 80% is not within sampling noise of the
// 75% asked (sd 2.8 points). The figure takes the scale a slowed row itself moves: one computed
// from the unslowed row's scale alone would be flagged in well under half of the pairs.
TEST(Detectable, ARowSlowedByItsOwnFigureIsFlaggedAsOftenAsPromised) {
  int at_figure = 0, at_third = 0, tried = 0;
  for (unsigned seed = 1; seed <= 200; ++seed) {
    const auto aa = simulated(seed, 40, 10);
    const auto c = compare_results(aa.base, aa.candidate, CompareOptions{}, "b", "n");
    ASSERT_TRUE(c.noise.floors);
    const std::string name = "bench" + std::to_string(seed % 40);
    const double figure = row_of(c, name).detectable;
    ASSERT_TRUE(std::isfinite(figure)) << name;
    ++tried;
    const auto slowed = simulated(seed, 40, 10, {name}, 1 + figure);
    at_figure +=
        row_of(compare_results(slowed.base, slowed.candidate, CompareOptions{}, "b", "n"), name)
            .verdict == Verdict::slower;
    const auto third = simulated(seed, 40, 10, {name}, 1 + figure / 3);
    at_third +=
        row_of(compare_results(third.base, third.candidate, CompareOptions{}, "b", "n"), name)
            .verdict == Verdict::slower;
  }
  EXPECT_GE(at_figure, 0.75 * tried) << at_figure << " of " << tried;
  EXPECT_LE(at_third, 0.15 * tried) << at_third << " of " << tried;
}

TEST(Detectable, EverySameOrInconclusiveRowCarriesItsFigureInEveryOutput) {
  for (int processes : {1, 10}) {
    const auto pair = simulated(7, 30, processes);
    const auto c = compare_results(pair.base, pair.candidate, CompareOptions{}, "b", "n");
    const auto json = to_json(c);
    const auto md = comparison_markdown(c, "b", "n");
    int carried = 0;
    for (const auto& row : json["rows"]) {
      if (row["verdict"] != "SAME" && row["verdict"] != "INCONCLUSIVE") continue;
      ++carried;
      const auto text = row["could_see_text"].get<std::string>();
      EXPECT_EQ(text.rfind("could see ", 0), 0u) << text;
      EXPECT_EQ(text.find("one process a side") != std::string::npos, processes == 1) << text;
      if (row["could_see"].is_number()) { EXPECT_GE(row["could_see"].get<double>(), 0.02); }
    }
    EXPECT_EQ(carried, c.same + c.inconclusive);
    EXPECT_NE(md.find("| could see |"), std::string::npos);
    EXPECT_NE(md.find("could see a 5% slowdown"),
              std::string::npos);  // the summary line counts them
  }
}

TEST(Detectable, OneProcessASideCouldSeeLessThanTenProcessesOfTheSameNoise) {
  // The same benchmarks' noise, measured as ten repetitions of one process and as ten processes.
  const auto one = compare_results(simulated(3, 30, 1).base, simulated(3, 30, 1).candidate,
                                   CompareOptions{}, "b", "n");
  const auto ten = compare_results(simulated(3, 30, 10).base, simulated(3, 30, 10).candidate,
                                   CompareOptions{}, "b", "n");
  std::vector<double> a, b;
  for (const auto& row : one.rows) a.push_back(row.detectable);
  for (const auto& row : ten.rows) b.push_back(row.detectable);
  EXPECT_FALSE(one.noise.floors);
  EXPECT_TRUE(ten.noise.floors);
  EXPECT_GT(median(a), median(b));
}

TEST(Detectable, APairThatSupportsNoVerdictCouldSeeNoChange) {
  // Ten benchmarks of one process whose runs moved ±30% apart (past kMaxBetween): no SLOWER can
  // come of it.
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0, 0.3);
  std::vector<Row> base, candidate;
  for (int i = 0; i < 12; ++i) {
    std::vector<double> b, n;
    const double drift = std::exp(normal(rng));
    for (int r = 0; r < 5; ++r) {
      b.push_back(1000 * (1 + 0.001 * r));
      n.push_back(1000 * drift * (1 + 0.001 * r));
    }
    base.push_back({"bench" + std::to_string(i), "f", 1, b});
    candidate.push_back({"bench" + std::to_string(i), "f", 1, n});
  }
  const auto c =
      compare_results(file_of(base, 1), file_of(candidate, 1), CompareOptions{}, "b", "n");
  ASSERT_GT(c.noise.between, 0.10);
  for (const auto& row : c.rows) EXPECT_TRUE(std::isinf(row.detectable)) << row.name;
  const auto json = to_json(c);  // a range-for over to_json(c)["rows"] would outlive the temporary
  for (const auto& row : json["rows"]) {
    EXPECT_TRUE(row["could_see"].is_null());
    if (row["verdict"] != "SLOWER") {
      EXPECT_EQ(row["could_see_text"],
                "could see no change: one process a side, run with --processes 10");
    }
  }
}

TEST(SharedShift, AFamilysRowsThatMovedTogetherAreNamedOnceWithTheirRange) {
  const std::vector<std::string> five = {"bench0", "bench1", "bench2", "bench3", "bench4"};
  const auto pair = simulated(11, 40, 10, five, 1.25, "cpu_normalize");
  const auto c = compare_results(pair.base, pair.candidate, CompareOptions{}, "b", "n");
  ASSERT_EQ(c.shared.size(), 1u);
  EXPECT_EQ(c.shared[0].family, "cpu_normalize");
  EXPECT_TRUE(c.shared[0].slower);
  EXPECT_EQ(c.shared[0].names.size(), 5u);
  EXPECT_GT(c.shared[0].low, 0.1);
  EXPECT_LT(c.shared[0].high, 0.45);
  EXPECT_LE(c.shared[0].low, c.shared[0].high);
  const auto md = comparison_markdown(c, "b", "n");
  // Data in Markdown is escaped (cpu\_normalize).
  EXPECT_NE(md.find("5 rows of family cpu\\_normalize moved slower together"), std::string::npos)
      << md;
  EXPECT_EQ(to_json(c)["shared_shifts"][0]["rows"].size(), 5u);
  // Two rows of a family are not yet a shared shift; nor is an A/A pair.
  const auto two = simulated(11, 40, 10, {"bench0", "bench1"}, 1.25, "cpu_normalize");
  EXPECT_TRUE(compare_results(two.base, two.candidate, CompareOptions{}, "b", "n").shared.empty());
  const auto aa = simulated(11, 40, 10, {}, 1, "cpu_normalize");
  EXPECT_TRUE(compare_results(aa.base, aa.candidate, CompareOptions{}, "b", "n").shared.empty());
}

TEST(SharedShift, RowsThatMovedOppositeWaysAreNotOneFinding) {
  std::vector<BenchmarkComparison> rows(6);
  for (int i = 0; i < 6; ++i) {
    rows[i].name = "r" + std::to_string(i);
    rows[i].family = "f";
    rows[i].test = "floor";
    rows[i].delta = 0.02;
    rows[i].log_shift = i < 3 ? 0.2 : -0.2;
  }
  const auto shifts = shared_shifts(rows, 0);
  ASSERT_EQ(shifts.size(), 2u);
  EXPECT_EQ(shifts[0].names.size(), 3u);
  EXPECT_NE(shifts[0].slower, shifts[1].slower);
  rows[0].test.clear();  // an untested row does not count
  EXPECT_EQ(shared_shifts(rows, 0).size(), 1u);
}

}  // namespace offloadbench
