// The signed-rank test, Hodges–Lehmann interval and Holm adjustment against reference values:
// scipy.stats.wilcoxon (scipy 1.17.1, zero_method='wilcox', correction=False, method as named), and
// intervals found by inverting scipy's exact two-sided test over a grid of shifts (the set of
// shifts it does not reject at 1 − confidence). Inputs and values were computed once and copied
// here.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "harness/regression/signed_rank.h"

namespace offloadbench {

namespace {
struct Reference {
  const char* label;
  std::vector<double> d;
  bool exact;
  double r_plus, p_greater, p_less, p_two_sided;
};

const std::vector<double> kN8 = {0.031, -0.012, 0.044, 0.027, 0.008, 0.052, -0.003, 0.019};
const std::vector<double> kN12 = {0.012, 0.034,  -0.021, 0.045, 0.007, 0.028,
                                  0.061, -0.004, 0.019,  0.038, 0.025, 0.052};
const std::vector<double> kN20 = {
    0.01002, 0.01597, 0.00452, -0.00781, 0.00091, -0.00983, 0.0112,   0.0368,  0.00016,  -0.00241,
    0.0198,  0.01714, 0.01211, -0.00861, 0.00941, 0.02391,  -0.01688, 0.00085, -0.02802, -0.01579};
const std::vector<double> kN60 = {
    0.04582,  -0.04611, 0.01336,  -0.00636, -0.00405, 0.00069, -0.0354,  0.00036,  -0.0123,
    0.07146,  0.00952,  -0.00205, -0.00063, -0.00836, -0.0161, -0.00282, 0.01464,  0.00023,
    0.02416,  0.001,    0.00549,  0.03592,  0.0159,   -0.0051, 0.00134,  0.01581,  0.0437,
    -0.00039, 0.00013,  0.02505,  -0.01273, -0.00083, 0.02265, 0.01661,  0.00683,  0.0184,
    -0.05156, 0.02543,  -0.01419, -0.02837, 0.01053,  0.01901, -0.0039,  -0.01653, 0.00552,
    0.00395,  0.03311,  0.01995,  0.00888,  0.02723,  0.00089, -0.01352, 0.01668,  0.01665,
    0.0007,   -0.01066, 0.00958,  -0.04488, 0.0188,   0.01483};

const Reference kScipy[] = {
    {"exact_n8", kN8, true, 32.0, 0.02734375, 0.98046875, 0.0546875},
    {"exact_n12", kN12, true, 72.0, 0.00341796875, 0.99755859375, 0.0068359375},
    {"exact_n20", kN20, true, 137.0, 0.12274360656738281, 0.8847436904907227, 0.24548721313476562},
    {"asymptotic_ties",
     {0.01, 0.01, -0.02, 0.03, 0.03, 0.03, -0.01, 0.02, 0.05, 0.04},
     false,
     48.5,
     0.01565389895427011,
     0.9843461010457298,
     0.03130779790854022},
    {"asymptotic_n60", kN60, false, 1200.0, 0.017950061607939057, 0.9820499383920609,
     0.03590012321587811},
};
}  // namespace

TEST(SignedRank, MatchesScipyReferenceValues) {
  for (const auto& ref : kScipy) {
    const Alternative alternatives[] = {Alternative::greater, Alternative::less,
                                        Alternative::two_sided};
    const double expected[] = {ref.p_greater, ref.p_less, ref.p_two_sided};
    for (int i = 0; i < 3; ++i) {
      const auto r = wilcoxon_signed_rank(ref.d, alternatives[i]);
      EXPECT_EQ(r.method, ref.exact ? "exact" : "asymptotic") << ref.label;
      EXPECT_DOUBLE_EQ(r.r_plus, ref.r_plus) << ref.label;
      EXPECT_NEAR(r.p_value, expected[i], 1e-12 + 1e-9 * expected[i])
          << ref.label << " alternative " << i;
    }
  }
}

TEST(SignedRank, DropsZerosAndAnswersOneWithoutEvidence) {
  const auto with_zeros =
      wilcoxon_signed_rank({0, 0, 0.01, 0.02, -0.005, 0.03, 0.04, 0.011}, Alternative::greater);
  const auto without =
      wilcoxon_signed_rank({0.01, 0.02, -0.005, 0.03, 0.04, 0.011}, Alternative::greater);
  EXPECT_EQ(with_zeros.n, 6u);
  EXPECT_DOUBLE_EQ(with_zeros.p_value, without.p_value);
  EXPECT_DOUBLE_EQ(wilcoxon_signed_rank({0, 0, 0}, Alternative::two_sided).p_value, 1.0);
}

TEST(SignedRank, NullDistributionIsSymmetricAndSumsToOne) {
  for (std::size_t n : {1u, 5u, 13u, 40u}) {
    const auto cdf = signed_rank_null_cdf(n);
    const std::size_t m = n * (n + 1) / 2;
    ASSERT_EQ(cdf.size(), m + 1);
    EXPECT_NEAR(cdf.back(), 1.0, 1e-12);
    EXPECT_NEAR(cdf[0], std::ldexp(1.0, -static_cast<int>(n)), 1e-15);
    for (std::size_t t = 0; t < m; ++t)
      EXPECT_NEAR(cdf[t], 1 - cdf[m - 1 - t], 1e-12) << n << " " << t;
  }
}

TEST(HodgesLehmann, MatchesIntervalsFromInvertingScipysTest) {
  struct Interval {
    const std::vector<double>* d;
    double confidence, estimate, low, high;
  };
  const Interval kReference[] = {
      {&kN8, 0.95, 0.020249999999999997, -0.002, 0.041499999999999995},
      {&kN8, 0.90, 0.020249999999999997, 0.0034999999999999996, 0.0375},
      {&kN12, 0.95, 0.025500000000000002, 0.008499999999999999, 0.04},
      {&kN12, 0.90, 0.025500000000000002, 0.011999999999999999, 0.038},
      {&kN20, 0.95, 0.0039325, -0.003825, 0.01083},
      {&kN20, 0.90, 0.0039325, -0.0026550000000000002, 0.010245},
  };
  for (const auto& ref : kReference) {
    const auto e = hodges_lehmann(*ref.d, ref.confidence);
    EXPECT_TRUE(e.bounded);
    EXPECT_NEAR(e.estimate, ref.estimate, 1e-12);
    EXPECT_NEAR(e.low, ref.low, 1e-12) << ref.d->size() << " at " << ref.confidence;
    EXPECT_NEAR(e.high, ref.high, 1e-12) << ref.d->size() << " at " << ref.confidence;
    EXPECT_GE(e.confidence, ref.confidence);
  }
}

TEST(HodgesLehmann, TooFewDifferencesGiveAnUnboundedInterval) {
  // Five differences: the most extreme outcome has probability 2·2⁻⁵ = 6.25% > 5%.
  const auto five = hodges_lehmann({0.01, 0.02, 0.03, 0.04, 0.05}, 0.95);
  EXPECT_FALSE(five.bounded);
  EXPECT_TRUE(std::isinf(five.low) && std::isinf(five.high));
  EXPECT_TRUE(hodges_lehmann({0.01, 0.02, 0.03, 0.04, 0.05, 0.06}, 0.95).bounded);
}

TEST(Holm, AdjustsStepDownAndKeepsOrder) {
  // By hand: sorted 0.01, 0.02, 0.03, 0.5 → 4·0.01, max(0.04, 3·0.02), max(0.06, 2·0.03), max(0.06,
  // 0.5).
  const auto adjusted = holm_adjust({0.03, 0.5, 0.01, 0.02});
  const std::vector<double> expected = {0.06, 0.5, 0.04, 0.06};
  ASSERT_EQ(adjusted.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(adjusted[i], expected[i], 1e-15);
  EXPECT_DOUBLE_EQ(holm_adjust({0.6, 0.7})[0], 1.0);  // 2·0.6, capped at 1
  EXPECT_DOUBLE_EQ(holm_adjust({0.6, 0.7})[1], 1.0);  // never below an earlier step
  EXPECT_TRUE(holm_adjust({}).empty());
}

}  // namespace offloadbench
