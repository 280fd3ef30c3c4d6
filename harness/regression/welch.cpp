#include "harness/regression/welch.h"

#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <boost/math/distributions/students_t.hpp>

#include "harness/analysis/math_policy.h"

namespace offloadbench {

namespace {

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double variance_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double squares = 0;
  for (double x : v) squares += (x - m) * (x - m);
  return squares / static_cast<double>(v.size() - 1);
}

boost::math::students_t_distribution<double, MathPolicy> student_t(double df) {
  if (!(df > 0)) throw std::invalid_argument("Student's t needs df > 0");
  return boost::math::students_t_distribution<double, MathPolicy>(df);
}

}  // namespace

double student_t_upper_tail(double t, double df) {
  const auto distribution = student_t(df);
  if (std::isnan(t)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return t > 0 ? 0.0 : 1.0;
  return boost::math::cdf(boost::math::complement(distribution, t));
}

double student_t_upper_quantile(double p, double df) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("a t quantile needs 0 < p < 1");
  return boost::math::quantile(boost::math::complement(student_t(df), p));
}

WelchResult welch_t(const std::vector<double>& base, const std::vector<double>& candidate,
                    double shift) {
  if (base.size() < 2 || candidate.size() < 2)
    throw std::invalid_argument("Welch's t needs two values a side");
  const double nb = static_cast<double>(base.size()), nc = static_cast<double>(candidate.size());
  const double vb = variance_of(base) / nb, vc = variance_of(candidate) / nc;
  WelchResult w;
  w.difference = mean_of(candidate) - mean_of(base) - shift;
  w.standard_error = std::sqrt(vb + vc);
  w.df =
      vb + vc > 0 ? (vb + vc) * (vb + vc) / (vb * vb / (nb - 1) + vc * vc / (nc - 1)) : nb + nc - 2;
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
