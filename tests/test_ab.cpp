// ab's verdicts from paired rounds: SLOWER/FASTER beyond δ, SAME inside it, INCONCLUSIVE when the
// rounds cannot tell (too few, or too noisy), δ per CPU/GPU row, and Holm across benchmarks.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "harness/regression/ab.h"
#include "harness/regression/signed_rank.h"

namespace offloadbench {

namespace {

// `rounds` pairs whose NEW/BASE ratio is `ratio` times lognormal noise of `spread` (σ of log), and
// BASE itself drifting from round to round (which pairing cancels).
AbSeries series(const std::string& name, double ratio, double spread, int rounds, unsigned seed,
                bool gpu = false) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, spread), drift(0.0, 0.2);
  AbSeries s{name, gpu, {}, 0};
  for (int r = 0; r < rounds; ++r) {
    const double base = 1e-3 * std::exp(drift(rng));
    s.pairs.push_back({base, base * ratio * std::exp(noise(rng))});
  }
  return s;
}

AbRow only_row(const AbSeries& s) { return ab_verdicts({s}, AbOptions{}).rows.at(0); }

// Rounds with these NEW/BASE ratios, each times a small deterministic jitter (±0.3%).
AbSeries from_ratios(const std::vector<double>& ratios) {
  AbSeries s{"x", false, {}, 0};
  for (std::size_t i = 0; i < ratios.size(); ++i)
    s.pairs.push_back(
        {1e-3, 1e-3 * ratios[i] * (1 + 0.003 * std::sin(1.7 * static_cast<double>(i)))});
  return s;
}

// `clean` rounds at `ratio`, with `outliers` rounds at `outlier_ratio` spread among them.
std::vector<double> with_outliers(double ratio, int clean, double outlier_ratio, int outliers) {
  std::vector<double> r(clean, ratio);
  for (int i = 0; i < outliers; ++i)
    r.insert(r.begin() + (i * 4 + 1) % (r.size() + 1), outlier_ratio);
  return r;
}

}  // namespace

TEST(AbVerdict, SlowerFasterAndSameAgainstDelta) {
  const auto slower = only_row(series("x", 1.10, 0.01, 20, 1));
  EXPECT_EQ(slower.verdict, Verdict::slower) << slower.reason;
  EXPECT_NEAR(slower.change, 0.10, 0.01);
  EXPECT_LT(slower.low, 0.10);
  EXPECT_GT(slower.high, 0.10);
  EXPECT_EQ(only_row(series("x", 0.90, 0.01, 20, 2)).verdict, Verdict::faster);
  const auto same = only_row(series("x", 1.0, 0.003, 20, 3));
  EXPECT_EQ(same.verdict, Verdict::same) << same.reason;
  EXPECT_GE(same.confidence, 0.95);
  // Real but below δ (+1% measured precisely): SAME, because δ says what matters.
  EXPECT_EQ(only_row(series("x", 1.01, 0.002, 20, 4)).verdict, Verdict::same);
}

TEST(AbVerdict, DriftBetweenRoundsCancelsInThePairs) {
  // Every round's BASE moves by ±20% (the series helper), NEW by the same: still SAME, not
  // INCONCLUSIVE.
  const auto row = only_row(series("x", 1.0, 0.002, 20, 5));
  EXPECT_EQ(row.verdict, Verdict::same) << row.reason;
}

TEST(AbVerdict, NoisyOrShortSeriesAreInconclusiveNeverSame) {
  const auto noisy =
      only_row(series("x", 1.0, 0.10, 20, 6));  // ±10% per round: the interval passes ±2%
  EXPECT_EQ(noisy.verdict, Verdict::inconclusive) << noisy.reason;
  const auto short_run = only_row(series("x", 1.0, 0.001, 5, 7));
  EXPECT_EQ(short_run.verdict, Verdict::inconclusive);
  EXPECT_FALSE(short_run.bounded);
  EXPECT_NE(short_run.reason.find("too few"), std::string::npos) << short_run.reason;
  AbSeries empty{"never", false, {}, 0};
  EXPECT_EQ(only_row(empty).verdict, Verdict::inconclusive);
}

TEST(AbVerdict, GpuRowsUseTheirOwnDelta) {
  // +1.5%, measured precisely: beyond the GPU δ (1%), inside the CPU δ (2%).
  EXPECT_EQ(only_row(series("x", 1.015, 0.002, 20, 8, true)).verdict, Verdict::slower);
  EXPECT_EQ(only_row(series("x", 1.015, 0.002, 20, 8, false)).verdict, Verdict::same);
}

TEST(AbVerdict, HolmAdjustsAcrossBenchmarks) {
  // Eight rounds, all clearly slower: alone the exact one-sided p is 2⁻⁸ (verdict at 0.05 after
  // ×2); among ten benchmarks Holm multiplies it by ten, and eight rounds cannot support SLOWER any
  // more.
  std::vector<AbSeries> all = {series("slow", 1.2, 0.01, 8, 9)};
  EXPECT_EQ(ab_verdicts(all, AbOptions{}).slower, 1);
  for (int i = 0; i < 9; ++i)
    all.push_back(series("same" + std::to_string(i), 1.0, 0.002, 8, 10 + i));
  const auto outcome = ab_verdicts(all, AbOptions{});
  EXPECT_EQ(outcome.slower, 0);
  EXPECT_EQ(outcome.rows[0].verdict, Verdict::inconclusive);
  EXPECT_NEAR(outcome.rows[0].p_holm, std::min(1.0, 10 * 2 * std::ldexp(1.0, -8)), 1e-12);
  EXPECT_EQ(outcome.inconclusive + outcome.same, 10);
}

TEST(AbReport, MarkdownListsNotesAndEveryRowSlowestFirst) {
  const auto outcome = ab_verdicts(
      {series("same", 1.0, 0.002, 20, 20), series("slow", 1.1, 0.01, 20, 21)}, AbOptions{});
  const auto md = ab_markdown(outcome, {"BASE and NEW have the same content"});
  EXPECT_NE(md.find("> **Note:** BASE and NEW have the same content"), std::string::npos);
  EXPECT_LT(md.find("`slow`"), md.find("`same`"));
  EXPECT_NE(md.find("1 SLOWER"), std::string::npos) << md;
}

// Issue 38, item 13: the names come from the children's results files; raw, a CR and ESC [2K in one
// would erase its row and could print a forged verdict, and a '|' would add a Markdown column.
TEST(AbReport, NamesFromResultsFilesArePrintedEscaped) {
  const std::string hostile = "x\r\x1b[2K\aSAME|y";
  const auto outcome = ab_verdicts({series(hostile, 1.1, 0.01, 20, 21)}, AbOptions{});
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  print_ab(file, outcome);
  std::string table(static_cast<std::size_t>(std::ftell(file)), '\0');
  std::rewind(file);
  ASSERT_EQ(std::fread(table.data(), 1, table.size(), file), table.size());
  std::fclose(file);
  const auto md = ab_markdown(outcome, {});
  for (const auto& text : {table, md}) {
    EXPECT_EQ(text.find_first_of("\r\x1b\a"), std::string::npos) << text;
    EXPECT_NE(text.find("x\\r\\x1b[2K\\x07SAME"), std::string::npos) << text;
  }
  EXPECT_NE(md.find("SAME\\|y`"), std::string::npos) << md;
}

TEST(AbVerdict, RoundsHitByABurstAreLeftOutOfTheTestsOnly) {
  // +5% in 16 clean rounds; in 4 more a burst slowed BASE (NEW/BASE 0.70). Counted as full votes,
  // those four hold the one-sided test back (checked below); set aside, the 16 rounds decide.
  const auto s = from_ratios(with_outliers(1.05, 16, 0.70, 4));
  const auto row = only_row(s);
  EXPECT_EQ(row.verdict, Verdict::slower) << row.reason;
  EXPECT_EQ(row.rounds_set_aside, 4u);
  EXPECT_EQ(row.rounds, 20u);
  EXPECT_NE(row.reason.find("4 outlying round(s) of 20 left out"), std::string::npos) << row.reason;
  std::vector<double> all_rounds;
  for (const auto& p : s.pairs)
    all_rounds.push_back(std::log(p.candidate / p.base) - std::log1p(0.02));
  EXPECT_GT(wilcoxon_signed_rank(all_rounds, Alternative::greater).p_value, 0.05);
}

TEST(AbVerdict, BurstsOnBothSidesRaiseNoAlarm) {
  auto ratios = with_outliers(1.0, 16, 1.40, 2);
  for (double r : {0.70, 0.72}) ratios.insert(ratios.begin() + 7, r);
  const auto row = only_row(from_ratios(ratios));
  EXPECT_NE(row.verdict, Verdict::slower) << row.reason;
  EXPECT_NE(row.verdict, Verdict::faster) << row.reason;
  EXPECT_EQ(row.rounds_set_aside, 4u);
}

TEST(AbVerdict, AnIntermittentSlowdownIsNeverSame) {
  // A change that makes one round in four 40% slower: its rounds are set aside from the tests, but
  // the interval keeps them, so the row is INCONCLUSIVE, not SAME.
  const auto row = only_row(from_ratios(with_outliers(1.0, 15, 1.40, 5)));
  EXPECT_EQ(row.verdict, Verdict::inconclusive) << row.reason;
  EXPECT_EQ(row.rounds_set_aside, 5u);
  EXPECT_GT(row.high, 0.02);
}

}  // namespace offloadbench
