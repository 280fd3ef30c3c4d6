#include "harness/regression/detectable.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/analysis/stats.h"
#include "harness/regression/welch.h"

namespace offloadbench {

double detectable_log_slowdown(double margin, double se, double df, std::size_t tests, double alpha,
                               double gate_width, double pair_power_z) {
  const double level =
      alpha / 2 /
      static_cast<double>(std::max<std::size_t>(tests, 1));  // two-sided p, Holm's first step
  const double t_level = student_t_upper_quantile(level, df);
  // The power of a t test whose standard error is itself estimated: the noncentral t's normal
  // approximation, P(T > t) ≈ Φ((λ − t) / √(1 + t²/2df)). At Holm's level t is large (≈ 9 at 5
  // degrees of freedom), so the standard error's own spread, not the shift's, decides most misses.
  static const double normal_power_quantile = normal_quantile(kDetectablePower);
  const double units = normal_power_quantile * std::sqrt(1 + t_level * t_level / (2 * df));
  const double power = se * std::max(units, pair_power_z);
  const double test = margin + se * t_level + power;
  // NEW's own fastest (or quartile) lands about ±se from BASE's: the gate needs the same power
  // term.
  return std::max({test, gate_width + power, margin});
}

double power_quantile_of_moves(const std::vector<double>& standardised_moves) {
  if (standardised_moves.empty()) return 0;
  std::vector<double> size;
  for (double z : standardised_moves) size.push_back(std::fabs(z));
  return quantile(size, 1 - 2 * (1 - kDetectablePower));  // P(|z| > q) = 2 (1 − power)
}

std::string detectable_text(double fraction, bool one_process) {
  if (std::isnan(fraction)) return "";
  // Past 1000% the digits say no more than that (a row whose processes spread over orders of
  // magnitude).
  std::string text = std::isinf(fraction) ? "could see no change"
                     : fraction > 10
                         ? "could see only > 1000%"
                         : fmt::format("could see ≥ {:.0f}%", std::ceil(100 * fraction));
  if (one_process) text += ": one process a side, run with --processes 10";
  return text;
}

}  // namespace offloadbench
