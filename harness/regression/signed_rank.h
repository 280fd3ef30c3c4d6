// Paired statistics for A/B runs: the Wilcoxon signed-rank test, the Hodges–Lehmann estimate of the
// shift and its exact confidence interval, and Holm's correction for testing many benchmarks at
// once. Each A/B round gives one paired difference d = log(NEW / BASE); these answer "by how much,
// and how sure".
#pragma once
#include <string>
#include <vector>

#include "harness/analysis/stats.h"

namespace offloadbench {

struct SignedRankResult {
  double r_plus = 0;  // sum of the ranks of |d| over positive d (zeros dropped, ties mid-ranked)
  std::size_t n = 0;  // non-zero differences
  double p_value = 1;
  std::string method;  // "exact" or "asymptotic"
};

// The one-sample Wilcoxon signed-rank test of "d is centred on 0", as scipy.stats.wilcoxon computes
// it with zero_method='wilcox', correction=False: the exact null distribution when there are no
// ties and at most `exact_limit` non-zero differences, else the normal approximation with tie
// correction.
SignedRankResult wilcoxon_signed_rank(const std::vector<double>& d, Alternative alternative,
                                      int exact_limit = 50);

// P(T+ ≤ t) for t = 0 … n(n+1)/2 under the null (each rank's sign a fair coin).
std::vector<double> signed_rank_null_cdf(std::size_t n);

// The Hodges–Lehmann estimate of the centre of d (the median of the Walsh averages (dᵢ + dⱼ)/2, i ≤
// j) and the exact distribution-free confidence interval that inverts the signed-rank test:
// [W₍c+1₎, W₍M−c₎] of the M sorted Walsh averages, c the largest value with P(T+ ≤ c) ≤ (1 −
// confidence)/2. Too few differences for that confidence give an interval of ±infinity (`bounded`
// false).
struct ShiftEstimate {
  double estimate = 0, low = 0, high = 0;
  double confidence =
      0;  // the coverage actually achieved (≥ the one asked; the distribution is discrete)
  bool bounded = false;
};
ShiftEstimate hodges_lehmann(const std::vector<double>& d, double confidence);

// Holm's step-down adjustment: adjusted p-values that keep the family-wise error rate at alpha when
// each is compared with alpha. Same order as the input.
std::vector<double> holm_adjust(const std::vector<double>& p_values);

}  // namespace offloadbench
