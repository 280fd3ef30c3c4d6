#include "harness/regression/floor_significance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "harness/analysis/stats.h"
#include "harness/regression/welch.h"

namespace offloadbench {

Floor floor_of(std::vector<double> values) {
  if (values.size() < 2) throw std::invalid_argument("floor_of needs at least 2 values");
  std::sort(values.begin(), values.end());
  const std::size_t half = (values.size() + 1) / 2;  // the faster half, its middle value included
  Floor floor;
  floor.sorted = values;
  if (half > 1) {
    double sum = 0;
    for (std::size_t j = 1; j < half; ++j) sum += values[j] - values.front();
    floor.spread = sum / static_cast<double>(half - 1);
  }
  return floor;
}

std::size_t floor_gate_rank(std::size_t other_values, std::size_t own_values) {
  const double k =
      std::floor(static_cast<double>(other_values) *
                     std::pow(kFloorGateChance,
                              1.0 / static_cast<double>(std::max<std::size_t>(own_values, 1))) +
                 1e-9);
  return std::clamp<std::size_t>(static_cast<std::size_t>(k), 1,
                                 std::max<std::size_t>(other_values, 1));
}

double floor_uncertainty(const Floor& base, const Floor& candidate, double history_spread) {
  return std::sqrt(base.spread * base.spread + candidate.spread * candidate.spread +
                   kFloorSpreadMinimum * kFloorSpreadMinimum + 2 * history_spread * history_spread);
}

double floor_scale(const std::vector<FloorRow>& rows, double common_shift) {
  std::vector<double> z;
  for (const auto& row : rows)
    z.push_back(std::fabs(row.shift - common_shift) / row.uncertainty /
                student_t_upper_quantile(0.25, row.df));
  return z.empty() ? 0.0 : median(z);
}

double floor_scale_if_moved(std::vector<FloorRow> rows, double common_shift, std::size_t moved) {
  rows.at(moved).shift = std::numeric_limits<double>::infinity();
  return floor_scale(rows, common_shift);
}

}  // namespace offloadbench
