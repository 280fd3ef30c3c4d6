#include "harness/analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <boost/math/distributions/normal.hpp>

#include "harness/analysis/math_policy.h"

namespace offloadbench {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const auto above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - static_cast<double>(below)) * (values[above] - values[below]);
}

double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

double coefficient_of_variation(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  const double mean =
      std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  const double stddev = std::sqrt(squares / static_cast<double>(values.size() - 1));
  return mean != 0 ? stddev / std::fabs(mean) : std::numeric_limits<double>::infinity();
}

double robust_sigma(const std::vector<double>& values) {
  const double center = median(values);
  std::vector<double> deviations;
  for (double v : values) deviations.push_back(std::fabs(v - center));
  return 1.4826 * median(deviations);
}

double normal_upper_tail(double z) {
  if (std::isnan(z)) return std::numeric_limits<double>::quiet_NaN();
  return boost::math::cdf(
      boost::math::complement(boost::math::normal_distribution<double, MathPolicy>(), z));
}

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("a normal quantile needs 0 < p < 1");
  return boost::math::quantile(boost::math::normal_distribution<double, MathPolicy>(), p);
}

namespace {

struct Ranked {
  double u_base;    // U of the first sample
  double tie_term;  // Σ (t³ − t) over groups of tied values
};

// Mid-ranks of the pooled sample; U_base = R_base − n1(n1+1)/2.
Ranked rank_samples(const std::vector<double>& base, const std::vector<double>& candidate) {
  if (base.empty() || candidate.empty())
    throw std::invalid_argument("Mann-Whitney U needs two non-empty samples");
  std::vector<std::pair<double, bool>> pooled;  // (value, is_base)
  for (double v : base) pooled.emplace_back(v, true);
  for (double v : candidate) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  double rank_sum_base = 0, tie_term = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_base += mid_rank;
    tie_term += t * t * t - t;
    i = j;
  }
  const double n1 = static_cast<double>(base.size());
  return {rank_sum_base - n1 * (n1 + 1) / 2, tie_term};
}

}  // namespace

MannWhitneyResult mann_whitney_u_asymptotic(const std::vector<double>& base,
                                            const std::vector<double>& candidate,
                                            Alternative alternative) {
  const auto ranked = rank_samples(base, candidate);
  const double n1 = static_cast<double>(base.size()), n2 = static_cast<double>(candidate.size());
  const double n = n1 + n2;
  // As scipy: the statistic in the direction asked (the larger of the two for two-sided).
  const double u = alternative == Alternative::greater ? ranked.u_base
                   : alternative == Alternative::less
                       ? n1 * n2 - ranked.u_base
                       : std::max(ranked.u_base, n1 * n2 - ranked.u_base);
  const double variance = n1 * n2 / 12.0 * ((n + 1) - ranked.tie_term / (n * (n - 1)));
  double p = 1.0;
  if (variance > 0) {
    const double z = (u - n1 * n2 / 2.0 - 0.5) / std::sqrt(variance);  // with continuity correction
    const double upper_tail = normal_upper_tail(z);
    p = std::min(1.0, alternative == Alternative::two_sided ? 2 * upper_tail : upper_tail);
  }
  return {ranked.u_base, p, "asymptotic"};
}

MannWhitneyResult mann_whitney_u_exact(const std::vector<double>& base,
                                       const std::vector<double>& candidate,
                                       Alternative alternative) {
  const auto ranked = rank_samples(base, candidate);
  const std::size_t n1 = base.size(), n = base.size() + candidate.size();
  // ways[j][s]: subsets of j ranks from 1..n (so far) with rank sum s; every subset is equally
  // likely.
  const std::size_t max_sum = n * (n + 1) / 2;
  std::vector<std::vector<double>> ways(n1 + 1, std::vector<double>(max_sum + 1, 0.0));
  ways[0][0] = 1;
  for (std::size_t rank = 1; rank <= n; ++rank)
    for (std::size_t j = std::min(rank, n1); j >= 1; --j)
      for (std::size_t s = max_sum; s >= rank; --s) ways[j][s] += ways[j - 1][s - rank];
  const double n1d = static_cast<double>(n1), n2d = static_cast<double>(candidate.size());
  const double u = alternative == Alternative::greater ? ranked.u_base
                   : alternative == Alternative::less
                       ? n1d * n2d - ranked.u_base
                       : std::max(ranked.u_base, n1d * n2d - ranked.u_base);
  const auto offset = static_cast<std::size_t>(n1 * (n1 + 1) / 2);  // U = rank sum − offset
  double total = 0, at_least = 0;
  for (std::size_t s = offset; s <= max_sum; ++s) {
    total += ways[n1][s];
    if (static_cast<double>(s - offset) >= u - 1e-9) at_least += ways[n1][s];
  }
  // The null distribution of U is symmetric, so P(U_other ≥ u) is read from the same table.
  const double tail = at_least / total;
  return {ranked.u_base, std::min(1.0, alternative == Alternative::two_sided ? 2.0 * tail : tail),
          "exact"};
}

MannWhitneyResult mann_whitney_u(const std::vector<double>& base,
                                 const std::vector<double>& candidate, int exact_limit,
                                 Alternative alternative) {
  const auto ranked = rank_samples(base, candidate);
  const auto limit = static_cast<std::size_t>(std::max(exact_limit, 0));
  if (ranked.tie_term == 0 && base.size() <= limit && candidate.size() <= limit)
    return mann_whitney_u_exact(base, candidate, alternative);
  return mann_whitney_u_asymptotic(base, candidate, alternative);
}

}  // namespace offloadbench
