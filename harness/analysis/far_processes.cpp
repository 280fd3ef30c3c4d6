#include "harness/analysis/far_processes.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "harness/analysis/stats.h"

namespace offloadbench {

namespace {

double standard_deviation(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

bool within_band_of(const std::vector<double>& far, const std::vector<double>& kept) {
  if (far.empty() || kept.empty()) return false;
  const auto [low, high] = std::minmax_element(kept.begin(), kept.end());
  const double band = kSharedModeSigmas * standard_deviation(kept);
  return std::any_of(far.begin(), far.end(), [&](double v) { return v >= *low - band && v <= *high + band; });
}

}  // namespace

KeptValues set_aside_far(const std::vector<double>& values) {
  KeptValues out{values, {}};
  if (values.size() < 5) return out;
  const double centre = median(values);
  const double limit = kFarRobustSigmas * std::max(robust_sigma(values), kFarSigmaFloor);
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::fabs(values[a] - centre) > std::fabs(values[b] - centre);
  });
  std::vector<bool> far(values.size(), false);
  for (std::size_t i = 0; i < (values.size() - 1) / 2; ++i)
    if (std::fabs(values[order[i]] - centre) > limit) far[order[i]] = true;
  out.kept.clear();
  for (std::size_t i = 0; i < values.size(); ++i) (far[i] ? out.far : out.kept).push_back(values[i]);
  return out;
}

std::pair<KeptValues, KeptValues> set_aside_far_pair(const std::vector<double>& base, const std::vector<double>& candidate) {
  auto b = set_aside_far(base), n = set_aside_far(candidate);
  if (within_band_of(b.far, n.kept) || within_band_of(n.far, b.kept)) return {KeptValues{base, {}}, KeptValues{candidate, {}}};
  return {std::move(b), std::move(n)};
}

}  // namespace offloadbench
