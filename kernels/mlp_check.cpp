// See mlp_check.h.
#include "kernels/mlp_check.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

namespace offloadbench {

float round_to_precision(float value, Precision precision) {
  if (precision == Precision::fp32 || !std::isfinite(value)) return value;
  if (precision == Precision::bf16) {  // keep the top 16 bits, rounding the rest to nearest even
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    bits = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u;
    std::memcpy(&value, &bits, sizeof bits);
    return value;
  }
  // fp16: 11 significant bits down to 2⁻¹⁴, then a fixed step of 2⁻²⁴ (subnormals); the largest
  // finite value is 65504, and the halfway point to the next power of two, 65520, rounds to inf.
  const float magnitude = std::fabs(value);
  if (magnitude >= 65520.0f) return std::copysign(INFINITY, value);
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude = m·2^exponent, m in [0.5, 1)
  const float step = std::ldexp(1.0f, std::max(exponent - 11, -24));
  return std::copysign(std::nearbyint(magnitude / step) * step,
                       value);  // exact: step is a power of 2
}

void round_mlp_inputs(float* params, float* x, std::size_t x_count, const MlpShape& shape,
                      Precision precision) {
  if (precision == Precision::fp32) return;
  const auto l = mlp_param_layout(shape);
  auto round = [precision](float* values, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) values[i] = round_to_precision(values[i], precision);
  };
  round(params + l.w1, l.b1 - l.w1);
  round(params + l.w2, l.b2 - l.w2);
  round(x, x_count);
}

double mlp_loss_rtol(Precision precision) {
  switch (precision) {
    case Precision::fp32:
      return 1e-4;
    case Precision::bf16:
      return 2e-2;
    case Precision::fp16:
      return 5e-3;
  }
  return 0;
}

std::string mlp_gradient_mismatch(const float* got, const float* ref, std::size_t n,
                                  Precision precision, const float* allowance) {
  double max_ref = 0, diff_sq = 0, ref_sq = 0;
  for (std::size_t i = 0; i < n; ++i) {
    max_ref = std::max(max_ref, std::abs(static_cast<double>(ref[i])));
    diff_sq += (static_cast<double>(got[i]) - ref[i]) * (static_cast<double>(got[i]) - ref[i]);
    ref_sq += static_cast<double>(ref[i]) * ref[i];
  }
  if (precision != Precision::fp32) {
    const double rtol = precision == Precision::bf16 ? 6e-2 : 5e-3;
    const double relative = std::sqrt(diff_sq / std::max(ref_sq, 1e-300));
    if (std::isfinite(relative) && relative <= rtol) return "";
    return fmt::format(
        "{} values differ from the CPU reference by {:.3g} of their norm (allowed {:.3g})",
        to_string(precision), relative, rtol);
  }
  std::size_t bad = 0;
  std::string first;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = got[i], r = ref[i];
    const double bound = 1e-4 * std::abs(r) + 1e-5 * max_ref + (allowance ? allowance[i] : 0.0);
    if (std::abs(g - r) <= bound) continue;  // NaN fails here
    if (bad++ < 3) first += fmt::format("; [{}] got {:.8g}, expected {:.8g}", i, g, r);
  }
  if (bad == 0) return "";
  return fmt::format("{} of {} fp32 values differ from the CPU reference{}", bad, n, first);
}

ReluTieAllowance mlp_relu_tie_allowance(const float* params, const float* x, const float* dlogits,
                                        const MlpShape& s, int B) {
  validate_mlp_shape(s, B);
  const auto l = mlp_param_layout(s);
  const std::int64_t D = s.inputs, H = s.hidden, C = s.classes;
  const float* w1 = params + l.w1;
  const float* b1 = params + l.b1;
  const float* w2 = params + l.w2;
  // The pre-activations as a third summation order; the tie width covers its error too.
  std::vector<float> pre(static_cast<std::size_t>(B * H));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, static_cast<int>(H), static_cast<int>(D),
              1.0f, x, static_cast<int>(D), w1, static_cast<int>(D), 0.0f, pre.data(),
              static_cast<int>(H));
  std::vector<double> w1_norm(static_cast<std::size_t>(H));
  for (std::int64_t h = 0; h < H; ++h) {
    double sq = 0;
    for (std::int64_t k = 0; k < D; ++k) sq += static_cast<double>(w1[h * D + k]) * w1[h * D + k];
    w1_norm[h] = std::sqrt(sq);
  }
  constexpr double kUnitRoundoff = 0x1p-24;
  ReluTieAllowance a;
  a.per_param.assign(l.count, 0.0f);
  for (int b = 0; b < B; ++b) {
    const float* xb = x + static_cast<std::int64_t>(b) * D;
    double x_max = 0;
    for (std::int64_t k = 0; k < D; ++k)
      x_max = std::max(x_max, std::abs(static_cast<double>(xb[k])));
    const float* db = dlogits + static_cast<std::int64_t>(b) * C;
    for (std::int64_t h = 0; h < H; ++h) {
      const double tie_width =
          8 * kUnitRoundoff * std::sqrt(static_cast<double>(D)) * x_max * w1_norm[h];
      const double pre_bh = static_cast<double>(pre[b * H + h]) + b1[h];
      if (!(std::abs(pre_bh) <= tie_width)) continue;
      ++a.ties;
      double dpre = 0;
      for (std::int64_t c = 0; c < C; ++c) dpre += static_cast<double>(db[c]) * w2[c * H + h];
      dpre = std::abs(dpre);
      float* on_w1 = a.per_param.data() + l.w1 + h * D;
      for (std::int64_t k = 0; k < D; ++k) on_w1[k] += static_cast<float>(dpre * std::abs(xb[k]));
      a.per_param[l.b1 + h] += static_cast<float>(dpre);
      for (std::int64_t c = 0; c < C; ++c)
        a.per_param[l.w2 + c * H + h] += static_cast<float>(2 * tie_width * std::abs(db[c]));
    }
  }
  return a;
}

}  // namespace offloadbench
