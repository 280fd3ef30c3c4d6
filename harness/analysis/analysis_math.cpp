// The arithmetic behind the analysis: crossover interpolation on log size, the weighted
// latency/bandwidth fit and the pinning break-even. No JSON here except row_seconds.
#include <algorithm>
#include <cmath>
#include <limits>

#include "harness/analysis/analysis.h"

namespace offloadbench {

const char* to_string(CrossoverKind kind) {
  switch (kind) {
    case CrossoverKind::crossover:
      return "crossover";
    case CrossoverKind::gpu_wins_all:
      return "gpu_wins_all";
    case CrossoverKind::cpu_wins_at_largest:
      return "cpu_wins_at_largest";
    case CrossoverKind::no_data:
      return "no_data";
  }
  return "no_data";
}

double row_seconds(const nlohmann::json& row) {
  if (!row.contains("real_time") || !row["real_time"].is_number())
    return std::numeric_limits<double>::quiet_NaN();
  const auto unit = row.value("time_unit", std::string("ns"));
  const double scale = unit == "s" ? 1.0 : unit == "ms" ? 1e-3 : unit == "us" ? 1e-6 : 1e-9;
  return row["real_time"].get<double>() * scale;
}

namespace {

struct Crossing {
  CrossoverKind kind = CrossoverKind::no_data;
  double size = 0;
  double bracket_low = 0, bracket_high = 0;  // the measured sizes either side
  bool win_below = false;
};

// One curve: sizes sorted, speedup(i) read through `at`.
template <class SpeedupAt>
Crossing crossing_of(const std::vector<SpeedupPoint>& points, SpeedupAt at) {
  Crossing c;
  if (points.empty()) return c;
  int last_losing = -1;
  for (int i = 0; i < static_cast<int>(points.size()); ++i)
    if (at(points[i]) < 1.0) last_losing = i;
  for (int i = 0; i < last_losing; ++i)
    if (at(points[i]) >= 1.0) c.win_below = true;
  if (last_losing < 0) {
    c.kind = CrossoverKind::gpu_wins_all;
    return c;
  }
  if (last_losing == static_cast<int>(points.size()) - 1) {
    c.kind = CrossoverKind::cpu_wins_at_largest;
    return c;
  }
  // log(speedup) goes from < 0 at i to >= 0 at j: interpolate its zero on log(size).
  const auto& a = points[last_losing];
  const auto& b = points[last_losing + 1];
  const double ya = std::log(std::max(at(a), 1e-300)), yb = std::log(at(b));
  const double xa = std::log(a.size), xb = std::log(b.size);
  const double t = yb > ya ? -ya / (yb - ya) : 1.0;
  c.kind = CrossoverKind::crossover;
  // exp(log(x)) may land an ulp outside [a, b]: the point stays inside the bracket it was found in.
  c.size = std::clamp(std::exp(xa + t * (xb - xa)), a.size, b.size);
  c.bracket_low = a.size;
  c.bracket_high = b.size;
  return c;
}

}  // namespace

Crossover find_crossover(const std::vector<SpeedupPoint>& points) {
  Crossover result;
  const auto mid = crossing_of(points, [](const SpeedupPoint& p) { return p.speedup; });
  result.kind = mid.kind;
  result.size = mid.size;
  result.gpu_wins_somewhere_below = mid.win_below;
  result.bracket_low = mid.bracket_low;
  result.bracket_high = mid.bracket_high;
  // The optimistic curve crosses earliest, the pessimistic one latest, each somewhere in its own
  // bracket: the range runs from the one's lower end to the other's upper end, so it always covers
  // the median curve's bracket.
  const auto early = crossing_of(points, [](const SpeedupPoint& p) { return p.speedup_high; });
  const auto late = crossing_of(points, [](const SpeedupPoint& p) { return p.speedup_low; });
  const bool crossed = mid.kind == CrossoverKind::crossover;
  if (early.kind == CrossoverKind::crossover)
    result.low = crossed ? std::min(early.bracket_low, mid.bracket_low) : early.bracket_low;
  if (late.kind == CrossoverKind::crossover)
    result.high = crossed ? std::max(late.bracket_high, mid.bracket_high) : late.bracket_high;
  result.located =
      crossed && result.low && result.high && crossover_located(*result.low, *result.high);
  return result;
}

bool crossover_located(double low, double high) {
  return low > 0 &&
         (high / low <= kLocatedCrossoverRatio || std::floor(high) - std::ceil(low) <= 1);
}

TransferFit fit_transfer_model(const std::vector<double>& bytes,
                               const std::vector<double>& seconds) {
  TransferFit fit;
  // Weighted least squares of t = a + b·x with w = 1/t²: minimises the relative residuals.
  std::vector<double> x, t, w;
  for (std::size_t i = 0; i < bytes.size() && i < seconds.size(); ++i)
    if (std::isfinite(bytes[i]) && std::isfinite(seconds[i]) && seconds[i] > 0 && bytes[i] > 0) {
      x.push_back(bytes[i]);
      t.push_back(seconds[i]);
      w.push_back(1.0 / (seconds[i] * seconds[i]));
    }
  fit.points = static_cast<int>(x.size());
  if (x.size() < 2) return fit;
  double sw = 0, sx = 0, st = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sw += w[i];
    sx += w[i] * x[i];
    st += w[i] * t[i];
  }
  const double xm = sx / sw, tm = st / sw;
  double sxx = 0, sxt = 0, stt = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += w[i] * (x[i] - xm) * (x[i] - xm);
    sxt += w[i] * (x[i] - xm) * (t[i] - tm);
    stt += w[i] * (t[i] - tm) * (t[i] - tm);
  }
  if (sxx <= 0) return fit;  // one distinct size: no slope to fit
  const double slope = sxt / sxx;
  if (!(slope > 0)) return fit;  // time not growing with size: no bandwidth to report
  const double intercept = tm - slope * xm;
  double residual = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double r = t[i] - (intercept + slope * x[i]);
    residual += w[i] * r * r;
  }
  fit.ok = true;
  fit.alpha_seconds = intercept;
  fit.beta_bytes_per_second = 1.0 / slope;
  fit.r_squared = stt > 0 ? 1.0 - residual / stt : 1.0;
  // alpha·beta; an intercept within rounding of zero means no measurable latency.
  if (intercept > 1e-9 * *std::min_element(t.begin(), t.end()))
    fit.half_bandwidth_bytes = intercept / slope;
  return fit;
}

std::optional<long long> pinning_break_even(double pin_seconds, double pageable_copy_seconds,
                                            double pinned_copy_seconds) {
  const double saved = pageable_copy_seconds - pinned_copy_seconds;
  if (!std::isfinite(pin_seconds) || !std::isfinite(saved) || saved <= 0) return std::nullopt;
  // Smallest integer n with n·saved > pin.
  return static_cast<long long>(std::floor(std::max(pin_seconds, 0.0) / saved)) + 1;
}

}  // namespace offloadbench
