// The U test against scipy.stats.mannwhitneyu (scipy 1.17.1, alternative as named (two-sided unless
// said), method as named; the values were computed once and are copied here with their inputs),
// plus medians and spread.
#include <cmath>
#include <limits>
#include <stdexcept>

#include <gtest/gtest.h>

#include "harness/analysis/stats.h"

namespace offloadbench {

namespace {
struct Reference {
  const char* label;
  std::vector<double> base, candidate;
  bool exact;
  double u_base, p_value;
};

const Reference kScipy[] = {
    {"exact_separated_5v5", {1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, true, 0.0, 0.007936507936507936},
    {"exact_interleaved",
     {1.1, 2.3, 3.7, 5.2, 6.8, 7.1},
     {2.0, 4.4, 5.0, 9.3, 10.2},
     true,
     11.0,
     0.5367965367965368},
    {"exact_10v12",
     {10.1, 10.4, 9.8, 10.0, 10.3, 10.7, 9.9, 10.2, 10.5, 10.6},
     {10.8, 11.0, 10.35, 11.3, 10.9, 11.1, 10.45, 11.4, 10.95, 11.2, 10.15, 11.6},
     true,
     13.0,
     0.0011289020576946275},
    {"asym_ties",
     {1, 2, 2, 3, 3, 3, 4, 5},
     {2, 3, 3, 4, 4, 5, 5, 6, 6},
     false,
     17.0,
     0.06917284061536635},
    {"asym_separated_10v10",
     {0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
     {100, 101, 102, 103, 104, 105, 106, 107, 108, 109},
     false,
     0.0,
     0.00018267179110955002},
    {"asym_no_ties",
     {1.1, 2.3, 3.7, 5.2, 6.8, 7.1},
     {2.0, 4.4, 5.0, 9.3, 10.2},
     false,
     11.0,
     0.5228166539190886},
    {"asym_all_equal", {3, 3, 3}, {3, 3, 3, 3}, false, 6.0, 1.0},
};
}  // namespace

TEST(MannWhitney, MatchesScipyReferenceValues) {
  for (const auto& ref : kScipy) {
    const auto r = ref.exact ? mann_whitney_u_exact(ref.base, ref.candidate)
                             : mann_whitney_u_asymptotic(ref.base, ref.candidate);
    EXPECT_DOUBLE_EQ(r.u_base, ref.u_base) << ref.label;
    EXPECT_NEAR(r.p_value, ref.p_value, 1e-12 + 1e-9 * ref.p_value) << ref.label;
  }
}

TEST(MannWhitney, OneSidedMatchesScipy) {
  struct OneSided {
    const char* label;
    std::vector<double> base, candidate;
    bool exact;
    double p_greater, p_less;  // scipy alternative='greater' / 'less' with x = base
  };
  const OneSided kReference[] = {
      {"exact_10v12",
       {10.1, 10.4, 9.8, 10.0, 10.3, 10.7, 9.9, 10.2, 10.5, 10.6},
       {10.8, 11.0, 10.35, 11.3, 10.9, 11.1, 10.45, 11.4, 10.95, 11.2, 10.15, 11.6},
       true,
       0.9995840073239455,
       0.0005644510288473137},
      {"exact_interleaved",
       {1.1, 2.3, 3.7, 5.2, 6.8, 7.1},
       {2.0, 4.4, 5.0, 9.3, 10.2},
       true,
       0.7857142857142857,
       0.2683982683982684},
      {"asym_ties",
       {1, 2, 2, 3, 3, 3, 4, 5},
       {2, 3, 3, 4, 4, 5, 5, 6, 6},
       false,
       0.9722869572352809,
       0.03458642030768318},
  };
  for (const auto& ref : kReference) {
    const auto test = [&](Alternative a) {
      return ref.exact ? mann_whitney_u_exact(ref.base, ref.candidate, a)
                       : mann_whitney_u_asymptotic(ref.base, ref.candidate, a);
    };
    EXPECT_NEAR(test(Alternative::greater).p_value, ref.p_greater, 1e-12) << ref.label;
    EXPECT_NEAR(test(Alternative::less).p_value, ref.p_less, 1e-12) << ref.label;
  }
}

TEST(MannWhitney, ChoosesExactOnlyWithoutTiesAndForSmallSamples) {
  EXPECT_EQ(mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}).method, "exact");
  EXPECT_EQ(mann_whitney_u({1, 2, 2, 3, 3, 3, 4, 5}, {2, 3, 3, 4, 4, 5, 5, 6, 6}).method,
            "asymptotic");
  EXPECT_EQ(mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, 4).method, "asymptotic");
}

TEST(MannWhitney, IsSymmetricAndScaleFree) {
  const std::vector<double> a = {1.1, 2.3, 3.7, 5.2, 6.8, 7.1}, b = {2.0, 4.4, 5.0, 9.3, 10.2};
  const auto ab = mann_whitney_u(a, b), ba = mann_whitney_u(b, a);
  EXPECT_DOUBLE_EQ(ab.p_value, ba.p_value);
  EXPECT_DOUBLE_EQ(ab.u_base + ba.u_base, static_cast<double>(a.size() * b.size()));
  std::vector<double> a3, b3;  // ranks only: a monotone transform changes nothing
  for (double v : a) a3.push_back(std::exp(v));
  for (double v : b) b3.push_back(std::exp(v));
  EXPECT_DOUBLE_EQ(mann_whitney_u(a3, b3).p_value, ab.p_value);
}

TEST(MannWhitney, RejectsEmptySamples) {
  EXPECT_THROW(mann_whitney_u({}, {1.0}), std::invalid_argument);
  EXPECT_THROW(mann_whitney_u({1.0}, {}), std::invalid_argument);
}

// Against mpmath at 40 digits (erfc and erfinv), rounded to 17 digits; quantiles at the double
// nearest p (0.8 is 0.8 + 4e-17, which moves Φ⁻¹ by 1.6e-16).
TEST(Normal, MatchesHighPrecisionReferenceValues) {
  EXPECT_NEAR(normal_upper_tail(1.96), 0.024997895148220434, 1e-15 * 0.025);
  EXPECT_NEAR(normal_upper_tail(-1.96), 1 - 0.024997895148220434, 1e-15);
  EXPECT_NEAR(normal_upper_tail(8), 6.2209605742717841e-16, 1e-14 * 6.2e-16);
  EXPECT_EQ(normal_upper_tail(0), 0.5);
  EXPECT_NEAR(normal_quantile(0.8), 0.84162123357291436, 1e-15);
  EXPECT_NEAR(normal_quantile(0.975), 1.9599639845400539, 1e-15 * 2);
  EXPECT_NEAR(normal_quantile(0.025), -1.9599639845400542, 1e-15 * 2);
  for (double z : {-3.0, -0.7, 0.0, 1.1, 2.5})
    EXPECT_NEAR(normal_quantile(1 - normal_upper_tail(z)), z, 1e-12);
}

TEST(Normal, EdgeCases) {
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(std::isnan(normal_upper_tail(nan)));
  EXPECT_EQ(normal_upper_tail(inf), 0);
  EXPECT_EQ(normal_upper_tail(-inf), 1);
  EXPECT_EQ(normal_upper_tail(40), 0);  // underflows quietly
  for (double p : {0.0, 1.0, -0.1, 1.5, nan, inf})
    EXPECT_THROW(normal_quantile(p), std::invalid_argument) << p;
}

TEST(Stats, MedianQuantileAndSpread) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0.25), 2);
  EXPECT_DOUBLE_EQ(quantile({1, 2}, 0.75), 1.75);
  EXPECT_NEAR(coefficient_of_variation({9, 10, 11}), 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(coefficient_of_variation({5}), 0);
  // One wild value moves the robust sigma little; it equals 1.4826·MAD.
  EXPECT_NEAR(robust_sigma({10, 11, 9, 10, 1000}), 1.4826, 1e-12);
}

}  // namespace offloadbench
