// Welch's t test, which compare uses on log times: unlike a rank test it uses the size of each
// repetition's difference, so three to ten repetitions a side can give the small p-values that a
// correction over a whole results file asks for (a rank test of 5 against 5 cannot go below 1/252).
#pragma once
#include <vector>

namespace offloadbench {

// P(T > t) for Student's t with `df` degrees of freedom (df > 0, not necessarily whole; +infinity
// is the normal), from Boost.Math: 0 and 1 at t = ±infinity, NaN for NaN, std::invalid_argument for
// df.
double student_t_upper_tail(double t, double df);

// The t with P(T > t) = p; std::invalid_argument unless 0 < p < 1 and df > 0.
double student_t_upper_quantile(double p, double df);

struct WelchResult {
  double difference = 0;  // mean(candidate) − mean(base) − shift
  double standard_error = 0;
  double df = 0;  // Welch–Satterthwaite degrees of freedom
  double t = 0;   // difference / standard_error (±infinity when both samples are constant)
};

// Welch's two-sample t statistic of candidate − base − shift. Each sample needs at least 2 values
// (std::invalid_argument otherwise).
WelchResult welch_t(const std::vector<double>& base, const std::vector<double>& candidate,
                    double shift = 0);

// One-sided p-value of "candidate − base > shift" from a Welch statistic.
double welch_upper_p(const WelchResult& w);

}  // namespace offloadbench
