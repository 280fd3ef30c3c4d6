// The statistics the regression tools rest on: medians, spread, and the Mann–Whitney U test.
// The U test compares two sets of per-repetition times without assuming they are normal, which
// benchmark times rarely are (long right tails from interrupts, page faults, other tenants).
#pragma once
#include <string>
#include <vector>

namespace offloadbench {

double median(std::vector<double> values);              // NaN when empty
double quantile(std::vector<double> values, double q);  // linear interpolation, q in [0, 1]
double coefficient_of_variation(const std::vector<double>& values);  // sample stddev / mean
// 1.4826 · median(|x − median(x)|): a standard deviation that one outlier cannot inflate.
double robust_sigma(const std::vector<double>& values);

// The standard normal distribution (Boost.Math): P(Z > z), NaN for NaN; and Φ⁻¹(p), the z with
// P(Z ≤ z) = p, for 0 < p < 1 (std::invalid_argument otherwise).
double normal_upper_tail(double z);
double normal_quantile(double p);

// Which way a test looks: `greater` = the first sample (or the differences) tends to be larger.
enum class Alternative { greater, less, two_sided };

struct MannWhitneyResult {
  double u_base = 0;  // U statistic of the first sample (count of pairs where it is larger, ties ½)
  double p_value = 1;  // for the alternative asked (two-sided by default)
  std::string method;  // "exact" or "asymptotic"
};

// Two-sided Mann–Whitney U test of `base` vs `candidate`, as scipy.stats.mannwhitneyu computes it:
// exact null distribution when there are no ties and both samples have at most `exact_limit`
// values, else the normal approximation with tie correction and continuity correction.
// Both samples must be non-empty (std::invalid_argument otherwise).
// `greater`: base tends to be larger than candidate (scipy's alternative='greater' with x = base).
MannWhitneyResult mann_whitney_u(const std::vector<double>& base,
                                 const std::vector<double>& candidate, int exact_limit = 20,
                                 Alternative alternative = Alternative::two_sided);

// The asymptotic and exact variants on their own (the tests check each against scipy).
MannWhitneyResult mann_whitney_u_asymptotic(const std::vector<double>& base,
                                            const std::vector<double>& candidate,
                                            Alternative alternative = Alternative::two_sided);
MannWhitneyResult mann_whitney_u_exact(const std::vector<double>& base,
                                       const std::vector<double>& candidate,
                                       Alternative alternative = Alternative::two_sided);

}  // namespace offloadbench
