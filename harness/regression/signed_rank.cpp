#include "harness/regression/signed_rank.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "harness/analysis/stats.h"

namespace offloadbench {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

struct Ranks {
  double r_plus = 0;
  std::size_t n = 0;
  double tie_term = 0;  // Σ (t³ − t) over groups of tied |d|
};

Ranks rank_absolute(const std::vector<double>& d) {
  std::vector<double> nonzero;
  for (double v : d)
    if (v != 0) nonzero.push_back(v);
  std::sort(nonzero.begin(), nonzero.end(),
            [](double a, double b) { return std::fabs(a) < std::fabs(b); });
  Ranks r;
  r.n = nonzero.size();
  for (std::size_t i = 0; i < nonzero.size();) {
    std::size_t j = i;
    while (j < nonzero.size() && std::fabs(nonzero[j]) == std::fabs(nonzero[i])) ++j;
    const double t = static_cast<double>(j - i), mid_rank = 0.5 * static_cast<double>(i + 1 + j);
    for (std::size_t k = i; k < j; ++k)
      if (nonzero[k] > 0) r.r_plus += mid_rank;
    r.tie_term += t * t * t - t;
    i = j;
  }
  return r;
}

}  // namespace

std::vector<double> signed_rank_null_cdf(std::size_t n) {
  const std::size_t max_sum = n * (n + 1) / 2;
  // probability[s] = P(T+ = s) after ranks 1..k; each rank joins T+ with probability ½.
  std::vector<double> probability(max_sum + 1, 0.0);
  probability[0] = 1;
  for (std::size_t rank = 1; rank <= n; ++rank)
    for (std::size_t s = max_sum; s != static_cast<std::size_t>(-1); --s)
      probability[s] = 0.5 * (probability[s] + (s >= rank ? probability[s - rank] : 0.0));
  std::partial_sum(probability.begin(), probability.end(), probability.begin());
  return probability;
}

SignedRankResult wilcoxon_signed_rank(const std::vector<double>& d, Alternative alternative,
                                      int exact_limit) {
  const auto ranks = rank_absolute(d);
  SignedRankResult r{ranks.r_plus, ranks.n, 1.0, ""};
  if (ranks.n == 0) return r;  // nothing but zeros: no evidence either way
  const double n = static_cast<double>(ranks.n), mean = n * (n + 1) / 4;
  if (ranks.tie_term == 0 && ranks.n <= static_cast<std::size_t>(std::max(exact_limit, 0))) {
    r.method = "exact";
    const auto cdf = signed_rank_null_cdf(ranks.n);
    const auto t = static_cast<std::size_t>(std::llround(ranks.r_plus));
    const double at_most = cdf[t], at_least = 1 - (t > 0 ? cdf[t - 1] : 0.0);
    switch (alternative) {
      case Alternative::greater:
        r.p_value = at_least;
        break;
      case Alternative::less:
        r.p_value = at_most;
        break;
      case Alternative::two_sided:
        r.p_value = std::min(1.0, 2 * std::min(at_most, at_least));
        break;
    }
    return r;
  }
  r.method = "asymptotic";
  const double variance = n * (n + 1) * (2 * n + 1) / 24 - ranks.tie_term / 48;
  const double z = variance > 0 ? (ranks.r_plus - mean) / std::sqrt(variance) : 0.0;
  switch (alternative) {
    case Alternative::greater:
      r.p_value = normal_upper_tail(z);
      break;
    case Alternative::less:
      r.p_value = normal_upper_tail(-z);
      break;
    case Alternative::two_sided:
      r.p_value = std::min(1.0, 2 * normal_upper_tail(std::fabs(z)));
      break;
  }
  return r;
}

ShiftEstimate hodges_lehmann(const std::vector<double>& d, double confidence) {
  if (d.empty()) throw std::invalid_argument("Hodges-Lehmann estimate of no differences");
  std::vector<double> walsh;
  for (std::size_t i = 0; i < d.size(); ++i)
    for (std::size_t j = i; j < d.size(); ++j) walsh.push_back(0.5 * (d[i] + d[j]));
  std::sort(walsh.begin(), walsh.end());
  ShiftEstimate e;
  e.estimate = median(walsh);
  const auto cdf = signed_rank_null_cdf(d.size());
  const double tail = (1 - confidence) / 2;
  std::size_t c = 0;  // Walsh averages cut from each end: the t = 0 … c−1 with P(T+ ≤ t) ≤ tail
  while (c < cdf.size() && cdf[c] <= tail + 1e-12) ++c;
  if (c == 0 || 2 * c > walsh.size()) {
    e.low = -kInfinity;
    e.high = kInfinity;
    e.confidence = 1;
    return e;
  }
  e.low = walsh[c - 1];  // W₍c₎ in 1-based order statistics: c − 1 cut below it
  e.high = walsh[walsh.size() - c];
  e.confidence = 1 - 2 * cdf[c - 1];
  e.bounded = true;
  return e;
}

std::vector<double> holm_adjust(const std::vector<double>& p_values) {
  const std::size_t m = p_values.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return p_values[a] < p_values[b]; });
  std::vector<double> adjusted(m);
  double running = 0;
  for (std::size_t i = 0; i < m; ++i) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - i) * p_values[order[i]]));
    adjusted[order[i]] = running;
  }
  return adjusted;
}

}  // namespace offloadbench
