#include "harness/regression/welch.h"

#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace offloadbench {

namespace {

// The continued fraction of I_x(a, b) by the modified Lentz method (converges fast for x < (a+1)/(a+b+2)).
double incomplete_beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEpsilon = 1e-15;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  d = 1 / (std::fabs(d) < kTiny ? kTiny : d);
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    for (const double aa : {m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))}) {
      d = 1 + aa * d;
      d = 1 / (std::fabs(d) < kTiny ? kTiny : d);
      c = 1 + aa / c;
      if (std::fabs(c) < kTiny) c = kTiny;
      h *= d * c;
    }
    if (std::fabs(d * c - 1) < kEpsilon) break;
  }
  return h;
}

double mean_of(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }

double variance_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double squares = 0;
  for (double x : v) squares += (x - m) * (x - m);
  return squares / static_cast<double>(v.size() - 1);
}

}  // namespace

double regularized_incomplete_beta(double a, double b, double x) {
  if (!(a > 0 && b > 0)) throw std::invalid_argument("incomplete beta needs a, b > 0");
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * incomplete_beta_fraction(a, b, x) / a;
  return 1 - std::exp(log_front) * incomplete_beta_fraction(b, a, 1 - x) / b;
}

double student_t_upper_tail(double t, double df) {
  if (!(df > 0)) throw std::invalid_argument("Student's t needs df > 0");
  if (std::isnan(t)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return t > 0 ? 0.0 : 1.0;
  const double both_tails = regularized_incomplete_beta(df / 2, 0.5, df / (df + t * t));
  return t > 0 ? both_tails / 2 : 1 - both_tails / 2;
}

double student_t_upper_quantile(double p, double df) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("a t quantile needs 0 < p < 1");
  if (p > 0.5) return -student_t_upper_quantile(1 - p, df);
  double low = 0, high = 1;
  while (student_t_upper_tail(high, df) > p) high *= 2;
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double middle = (low + high) / 2;
    (student_t_upper_tail(middle, df) > p ? low : high) = middle;
  }
  return (low + high) / 2;
}

WelchResult welch_t(const std::vector<double>& base, const std::vector<double>& candidate, double shift) {
  if (base.size() < 2 || candidate.size() < 2) throw std::invalid_argument("Welch's t needs two values a side");
  const double nb = static_cast<double>(base.size()), nc = static_cast<double>(candidate.size());
  const double vb = variance_of(base) / nb, vc = variance_of(candidate) / nc;
  WelchResult w;
  w.difference = mean_of(candidate) - mean_of(base) - shift;
  w.standard_error = std::sqrt(vb + vc);
  w.df = vb + vc > 0 ? (vb + vc) * (vb + vc) / (vb * vb / (nb - 1) + vc * vc / (nc - 1)) : nb + nc - 2;
  w.t = w.standard_error > 0 ? w.difference / w.standard_error
        : w.difference == 0  ? 0.0
                             : std::copysign(std::numeric_limits<double>::infinity(), w.difference);
  return w;
}

double welch_upper_p(const WelchResult& w) {
  if (w.standard_error > 0) return student_t_upper_tail(w.t, w.df);
  return w.difference > 0 ? 0.0 : w.difference < 0 ? 1.0 : 0.5;
}

}  // namespace offloadbench
