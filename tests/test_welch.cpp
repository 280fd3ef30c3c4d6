// Welch's t test and the Student-t tail it rests on (Boost.Math), against closed forms: the t
// distribution with 1, 2 and 3 degrees of freedom has an elementary CDF, and a very large df is the
// normal distribution; and against high-precision values from a second source.
#include <cmath>
#include <limits>
#include <stdexcept>

#include <boost/math/special_functions/beta.hpp>
#include <gtest/gtest.h>

#include "harness/regression/welch.h"

namespace offloadbench {

namespace {
constexpr double kPi = 3.14159265358979323846;
}

// What the t tail rests on: Boost.Math's regularized incomplete beta, P(|T| > t) =
// I_{df/(df+t²)}(df/2, ½).
TEST(IncompleteBeta, BoostMatchesClosedFormsAndTheTTail) {
  for (double x : {0.01, 0.2, 0.5, 0.77, 0.999}) {
    EXPECT_NEAR(boost::math::ibeta(1.0, 1.0, x), x, 1e-13);
    EXPECT_NEAR(boost::math::ibeta(3.5, 1.0, x), std::pow(x, 3.5), 1e-13);
    EXPECT_NEAR(boost::math::ibeta(1.0, 2.5, x), 1 - std::pow(1 - x, 2.5), 1e-13);
    EXPECT_NEAR(boost::math::ibeta(2.5, 0.5, x), 1 - boost::math::ibeta(0.5, 2.5, 1 - x), 1e-13);
  }
  EXPECT_NEAR(boost::math::ibeta(2.0, 5.0, 0.3), 0.579825, 1e-15);  // 1 − 0.7⁶ − 6·0.3·0.7⁵
  for (double df : {1.0, 2.7, 5.0, 30.0})
    for (double t : {0.4, 2.0, 9.5}) {
      const double both_tails = boost::math::ibeta(df / 2, 0.5, df / (df + t * t));
      EXPECT_NEAR(student_t_upper_tail(t, df), both_tails / 2, 1e-14 * both_tails)
          << df << " " << t;
    }
}

// Against a second source: mpmath at 40 digits (t tails from its betainc, t_{0.975, 5} also from
// the closed-form CDF at 5 degrees of freedom), each rounded to 17 digits.
TEST(StudentT, MatchesHighPrecisionReferenceValues) {
  EXPECT_NEAR(student_t_upper_tail(2, 3), 0.069662984279421582, 1e-15 * 0.07);
  EXPECT_NEAR(student_t_upper_tail(9.5, 2.7), 0.0018823104888931193, 1e-15 * 0.002);
  EXPECT_NEAR(student_t_upper_quantile(0.025, 5), 2.5705818356363155, 1e-15 * 2.6);
  EXPECT_NEAR(student_t_upper_quantile(1e-4, 4.5), 11.020996368612230, 1e-15 * 11);
  EXPECT_NEAR(student_t_upper_quantile(0.975, 5), -2.5705818356363155, 1e-15 * 2.6);
}

// Boost would raise its own errors on these; the wrappers keep std::invalid_argument, NaN and
// ±infinity.
TEST(StudentT, EdgeCases) {
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  for (double df : {0.0, -1.0, nan, -inf}) {
    EXPECT_THROW(student_t_upper_tail(1, df), std::invalid_argument) << df;
    EXPECT_THROW(student_t_upper_quantile(0.1, df), std::invalid_argument) << df;
  }
  for (double p : {0.0, 1.0, -0.1, 1.5, nan, inf})
    EXPECT_THROW(student_t_upper_quantile(p, 4), std::invalid_argument) << p;
  EXPECT_TRUE(std::isnan(student_t_upper_tail(nan, 4)));
  EXPECT_EQ(student_t_upper_tail(inf, 0.5), 0);
  EXPECT_EQ(student_t_upper_tail(-inf, 0.5), 1);
  EXPECT_EQ(student_t_upper_tail(1e200, 2.5), 0);  // underflows quietly
  EXPECT_EQ(student_t_upper_quantile(0.5, 3), 0);
  // Beyond double's range a quantile is +infinity, not an exception; just inside it, finite.
  EXPECT_EQ(student_t_upper_quantile(5e-324, 1), inf);
  EXPECT_NEAR(student_t_upper_quantile(1e-300, 1), 1 / (kPi * 1e-300), 1e-12 / (kPi * 1e-300));
  // Infinitely many degrees of freedom: the normal distribution.
  EXPECT_NEAR(student_t_upper_tail(1.96, inf), 0.5 * std::erfc(1.96 / std::sqrt(2.0)), 1e-16);
}

TEST(StudentT, UpperTailMatchesTheClosedFormsForOneTwoAndThreeDegreesOfFreedom) {
  for (double t : {-7.0, -1.5, -0.1, 0.0, 0.3, 1.0, 2.5, 12.0, 300.0}) {
    EXPECT_NEAR(student_t_upper_tail(t, 1), 0.5 - std::atan(t) / kPi, 1e-12) << t;
    EXPECT_NEAR(student_t_upper_tail(t, 2), 0.5 - t / (2 * std::sqrt(2 + t * t)), 1e-12) << t;
    const double u = t / std::sqrt(3.0);
    EXPECT_NEAR(student_t_upper_tail(t, 3), 0.5 - (u / (1 + u * u) + std::atan(u)) / kPi, 1e-12)
        << t;
  }
}

TEST(StudentT, ApproachesTheNormalTailAndIsSymmetric) {
  for (double t : {0.5, 1.96, 3.0, 5.0}) {
    EXPECT_NEAR(student_t_upper_tail(t, 1e7), 0.5 * std::erfc(t / std::sqrt(2.0)), 1e-7) << t;
    EXPECT_NEAR(student_t_upper_tail(-t, 7.3), 1 - student_t_upper_tail(t, 7.3), 1e-14);
    // Fewer degrees of freedom, heavier tails: the same t is less surprising.
    EXPECT_GT(student_t_upper_tail(t, 4), student_t_upper_tail(t, 20));
  }
  EXPECT_EQ(student_t_upper_tail(INFINITY, 4), 0);
  EXPECT_EQ(student_t_upper_tail(-INFINITY, 4), 1);
  EXPECT_THROW(student_t_upper_tail(1, 0), std::invalid_argument);
}

TEST(StudentT, QuantileInvertsTheTail) {
  for (double p : {0.001, 0.025, 0.25, 0.5, 0.75, 0.9}) {
    EXPECT_NEAR(student_t_upper_quantile(p, 1), std::tan(kPi * (0.5 - p)),
                1e-9 * (1 + std::fabs(std::tan(kPi * (0.5 - p)))));
    for (double df : {2.0, 4.5, 30.0})
      EXPECT_NEAR(student_t_upper_tail(student_t_upper_quantile(p, df), df), p, 1e-12);
  }
  EXPECT_THROW(student_t_upper_quantile(0, 4), std::invalid_argument);
}

TEST(Welch, StatisticStandardErrorAndDegreesOfFreedom) {
  // Means 2 and 5, variances 1 and 1, three a side: se = √(2/3), df = 4.
  const auto w = welch_t({1, 2, 3}, {4, 5, 6});
  EXPECT_NEAR(w.difference, 3, 1e-12);
  EXPECT_NEAR(w.standard_error, std::sqrt(2.0 / 3), 1e-12);
  EXPECT_NEAR(w.df, 4, 1e-12);
  EXPECT_NEAR(w.t, 3 / std::sqrt(2.0 / 3), 1e-12);
  // Unequal variances and sizes: Welch–Satterthwaite df lies between the smaller n − 1 and n₁ + n₂
  // − 2.
  const auto uneven = welch_t({1, 1.1, 0.9}, {4, 8, 2, 6, 5, 7});
  EXPECT_GT(uneven.df, 2);
  EXPECT_LT(uneven.df, 7);
  // The shift is subtracted: testing "more than +3" of a difference of exactly 3 gives t = 0, p =
  // ½.
  const auto at_shift = welch_t({1, 2, 3}, {4, 5, 6}, 3);
  EXPECT_NEAR(at_shift.t, 0, 1e-12);
  EXPECT_NEAR(welch_upper_p(at_shift), 0.5, 1e-12);
  EXPECT_NEAR(welch_upper_p(w), student_t_upper_tail(w.t, 4), 1e-15);
  EXPECT_THROW(welch_t({1}, {2, 3}), std::invalid_argument);
}

TEST(Welch, ConstantSamplesGiveAnInfiniteStatisticAndAClearP) {
  const auto apart = welch_t({1, 1, 1}, {2, 2, 2});
  EXPECT_TRUE(std::isinf(apart.t) && apart.t > 0);
  EXPECT_EQ(welch_upper_p(apart), 0);
  EXPECT_EQ(welch_upper_p(welch_t({2, 2, 2}, {1, 1, 1})), 1);
  EXPECT_EQ(welch_t({1, 1, 1}, {1, 1, 1}).t, 0);
}

}  // namespace offloadbench
