// ab's verdicts from paired rounds: SLOWER/FASTER beyond δ, SAME inside it, INCONCLUSIVE when the
// rounds cannot tell (too few, or too noisy), δ per CPU/GPU row, and Holm across benchmarks.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "harness/analysis/ab.h"

namespace offloadbench {

namespace {

// `rounds` pairs whose NEW/BASE ratio is `ratio` times lognormal noise of `spread` (σ of log), and
// BASE itself drifting from round to round (which pairing cancels).
AbSeries series(const std::string& name, double ratio, double spread, int rounds, unsigned seed, bool gpu = false) {
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
  // Every round's BASE moves by ±20% (the series helper), NEW by the same: still SAME, not INCONCLUSIVE.
  const auto row = only_row(series("x", 1.0, 0.002, 20, 5));
  EXPECT_EQ(row.verdict, Verdict::same) << row.reason;
}

TEST(AbVerdict, NoisyOrShortSeriesAreInconclusiveNeverSame) {
  const auto noisy = only_row(series("x", 1.0, 0.10, 20, 6));  // ±10% per round: the interval passes ±2%
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
  // Eight rounds, all clearly slower: alone the exact one-sided p is 2⁻⁸ (verdict at 0.05 after ×2);
  // among ten benchmarks Holm multiplies it by ten, and eight rounds cannot support SLOWER any more.
  std::vector<AbSeries> all = {series("slow", 1.2, 0.01, 8, 9)};
  EXPECT_EQ(ab_verdicts(all, AbOptions{}).slower, 1);
  for (int i = 0; i < 9; ++i) all.push_back(series("same" + std::to_string(i), 1.0, 0.002, 8, 10 + i));
  const auto outcome = ab_verdicts(all, AbOptions{});
  EXPECT_EQ(outcome.slower, 0);
  EXPECT_EQ(outcome.rows[0].verdict, Verdict::inconclusive);
  EXPECT_NEAR(outcome.rows[0].p_holm, std::min(1.0, 10 * 2 * std::ldexp(1.0, -8)), 1e-12);
  EXPECT_EQ(outcome.inconclusive + outcome.same, 10);
}

TEST(AbReport, MarkdownListsNotesAndEveryRowSlowestFirst) {
  const auto outcome = ab_verdicts({series("same", 1.0, 0.002, 20, 20), series("slow", 1.1, 0.01, 20, 21)}, AbOptions{});
  const auto md = ab_markdown(outcome, {"BASE and NEW have the same content"});
  EXPECT_NE(md.find("> **Note:** BASE and NEW have the same content"), std::string::npos);
  EXPECT_LT(md.find("`slow`"), md.find("`same`"));
  EXPECT_NE(md.find("1 SLOWER"), std::string::npos) << md;
}

}  // namespace offloadbench
