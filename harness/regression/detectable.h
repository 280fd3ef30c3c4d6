// The smallest slowdown compare's own rule could have flagged for one benchmark of a file pair, at
// that benchmark's noise, with the files' repetitions and processes: what a SAME or INCONCLUSIVE
// row could have seen ("could see ≥ 7%"). Two things must both give way for a verdict of SLOWER:
// - the test: the one-sided test against +δ, Holm across the `tests` benchmarks (whose strictest
//   step is alpha / tests), with power kDetectablePower — a slowdown of exactly the test's
//   threshold is flagged about half the time, one of this size in about 80% of pairs. The power
//   term counts the standard error's own spread between runs (noncentral t), not only the shift's;
// - the gate: the plainer sign the verdict also needs (the floor past the other file's slowest
//   processes, or the interquartile ranges apart), whose width in this pair is `gate_width`, plus
//   the same power term: NEW's side of the gate moves by about a standard error between runs too.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace offloadbench {

constexpr double kDetectablePower = 0.80;

// In log slowness (log time): the size of the smallest change the rule flags with kDetectablePower.
// margin = log(1 + δ); se and df: the row's test's standard error and degrees of freedom (se > 0).
// pair_power_z: how far, in standard errors, this pair's own rows moved at the power's quantile
// (power_quantile_of_moves); the power term takes the larger of it and the noncentral t's, so a
// pair whose shifts have heavier shoulders than t promises no more than it keeps (0: t alone).
double detectable_log_slowdown(double margin, double se, double df, std::size_t tests, double alpha,
                               double gate_width, double pair_power_z = 0);

// The power's quantile of |shift − common| / se over a pair's rows (a shift below −z happens with
// probability 1 − kDetectablePower when shifts are symmetric): what the figure's power term needs.
double power_quantile_of_moves(const std::vector<double>& standardised_moves);

// "could see ≥ 7%", or "could see no change" for +infinity, with what would help when a file
// pair came from one process a side.
std::string detectable_text(double slowdown_fraction, bool one_process);

}  // namespace offloadbench
