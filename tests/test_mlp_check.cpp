// The rule a GPU step is checked against the CPU reference by (kernels/mlp_check.h): the fp32
// elementwise bound, the bf16/fp16 normwise bound, and the ReLU-tie allowance, on a real tie made
// exact so that both sides of it are computed by the CPU twin itself.
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/mlp.h"
#include "kernels/mlp_check.h"

namespace offloadbench {

TEST(MlpCheck, Fp32HoldsEachValueToItsBound) {
  const std::vector<float> ref{1.0f, -2.0f, 0.5f, 4.0f};
  EXPECT_EQ(mlp_gradient_mismatch(ref.data(), ref.data(), ref.size(), Precision::fp32), "");
  auto got = ref;
  got[2] += 0.5f * 1e-4f + 4.0f * 1e-5f * 0.5f;  // half its bound off: passes
  EXPECT_EQ(mlp_gradient_mismatch(got.data(), ref.data(), ref.size(), Precision::fp32), "");
  got[2] = 0.5f + 2 * (0.5f * 1e-4f + 4.0f * 1e-5f);  // twice its bound off: fails, and says where
  const auto problem = mlp_gradient_mismatch(got.data(), ref.data(), ref.size(), Precision::fp32);
  EXPECT_NE(problem.find("1 of 4 fp32 values"), std::string::npos) << problem;
  EXPECT_NE(problem.find("[2]"), std::string::npos) << problem;
  const std::vector<float> allowance{0, 0, 1e-3f, 0};  // an allowance covers it
  EXPECT_EQ(
      mlp_gradient_mismatch(got.data(), ref.data(), ref.size(), Precision::fp32, allowance.data()),
      "");
  got[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(
      mlp_gradient_mismatch(got.data(), ref.data(), ref.size(), Precision::fp32, allowance.data()),
      "");
}

TEST(MlpCheck, LowPrecisionIsHeldToTheNorm) {
  std::vector<float> ref(1000), got(1000);
  for (int i = 0; i < 1000; ++i) {
    ref[i] = std::sin(0.37f * i);
    got[i] = ref[i] * (1 + ((i % 2) ? 0.02f : -0.02f));  // 2% of the norm
  }
  EXPECT_EQ(mlp_gradient_mismatch(got.data(), ref.data(), ref.size(), Precision::bf16), "");
  const auto problem = mlp_gradient_mismatch(got.data(), ref.data(), ref.size(), Precision::fp16);
  EXPECT_NE(problem.find("of their norm"), std::string::npos) << problem;
}

namespace {

// One gradient of the CPU twin on the first B rows of x.
std::vector<float> gradients(const MlpShape& shape, int B, const std::vector<float>& params,
                             const std::vector<float>& x, const std::vector<int>& labels,
                             std::vector<float>* dlogits = nullptr) {
  MlpCpuModel model(shape, B, 1);
  model.params = params;
  mlp_begin_step(model.grads.data(), &model.scalars, static_cast<std::int64_t>(params.size()));
  mlp_forward_backward(model.grads.data(), &model.scalars, model.activations(), model.params.data(),
                       x.data(), labels.data(), 1, shape, B);
  if (dlogits) *dlogits = model.dlogits;
  return model.grads;
}

}  // namespace

// Hidden unit 5 on row 3 is made an exact tie: x_3 is ±0.5 and W1_5 cancels in pairs (every partial
// sum exact in fp32, so 0 in any order), and b1_5 = ±2⁻³⁰ puts it just on or just off. Both
// gradients are correct; they differ as a GPU's would where its rounding fell on the other side of
// zero.
TEST(MlpCheck, ReluTieAllowanceCoversATieAndNothingElse) {
  const MlpShape shape{256, 16, 10};
  const int B = 16, tie_row = 3, tie_unit = 5;
  std::vector<float> x(static_cast<std::size_t>(B * shape.inputs));
  std::vector<int> labels(B);
  make_synthetic_dataset(x.data(), labels.data(), B, shape, 7);
  MlpCpuModel init(shape, B, 9);
  std::vector<float> on = init.params;
  const auto layout = mlp_param_layout(shape);
  for (std::int64_t k = 0; k < shape.inputs; ++k) {
    x[tie_row * shape.inputs + k] = (k % 4 < 2) ? 0.5f : -0.5f;
    const float w = static_cast<float>((k / 2) % 7 + 1) / 1024.0f;
    on[layout.w1 + tie_unit * shape.inputs + k] = (k % 2 == 0) ? w : -w;
  }
  on[layout.b1 + tie_unit] = std::ldexp(1.0f, -30);
  std::vector<float> off = on;
  off[layout.b1 + tie_unit] = -std::ldexp(1.0f, -30);

  std::vector<float> dlogits;
  const auto ref = gradients(shape, B, on, x, labels, &dlogits);
  const auto got = gradients(shape, B, off, x, labels);
  const auto n = ref.size();
  EXPECT_NE(mlp_gradient_mismatch(got.data(), ref.data(), n, Precision::fp32), "")
      << "the flipped unit must break the elementwise rule, or this test shows nothing";

  const auto ties = mlp_relu_tie_allowance(on.data(), x.data(), dlogits.data(), shape, B);
  EXPECT_GE(ties.ties, 1u);
  EXPECT_EQ(
      mlp_gradient_mismatch(got.data(), ref.data(), n, Precision::fp32, ties.per_param.data()), "");

  // Only the tied unit's W1 row, b1 and W2 column get an allowance (another row may tie by chance;
  // this data has none).
  EXPECT_EQ(ties.ties, 1u);
  for (std::size_t i = 0; i < n; ++i) {
    const bool w1_row =
        i >= layout.w1 + tie_unit * shape.inputs && i < layout.w1 + (tie_unit + 1) * shape.inputs;
    const bool b1 = i == layout.b1 + tie_unit;
    const bool w2_column =
        i >= layout.w2 && i < layout.b2 && (i - layout.w2) % shape.hidden == tie_unit;
    if (!w1_row && !b1 && !w2_column) { ASSERT_EQ(ties.per_param[i], 0.0f) << i; }
  }
  // The allowance hides no other error: a wrong value elsewhere, or on the tied row beyond the
  // tie's own difference, still fails.
  auto wrong = got;
  wrong[layout.w1 + (tie_unit + 1) * shape.inputs + 7] *= 1.01f;
  EXPECT_NE(
      mlp_gradient_mismatch(wrong.data(), ref.data(), n, Precision::fp32, ties.per_param.data()),
      "");
  wrong = got;
  const auto on_tie = layout.w1 + tie_unit * shape.inputs + 11;
  wrong[on_tie] = ref[on_tie] + 3 * (got[on_tie] - ref[on_tie]);
  EXPECT_NE(
      mlp_gradient_mismatch(wrong.data(), ref.data(), n, Precision::fp32, ties.per_param.data()),
      "");
}

}  // namespace offloadbench

namespace offloadbench {

TEST(MlpCheckRounding, Fp16RoundsToNearestEvenWithSubnormalsAndOverflow) {
  const auto fp16 = [](float v) { return round_to_precision(v, Precision::fp16); };
  EXPECT_EQ(fp16(1.0f + std::ldexp(1.0f, -11)), 1.0f) << "a tie goes to the even neighbour";
  EXPECT_EQ(fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(fp16(1.0f / 3), 0.333251953125f);  // 0x3555
  EXPECT_EQ(fp16(-1.0f / 3), -0.333251953125f);
  EXPECT_EQ(fp16(65504.0f), 65504.0f);
  EXPECT_EQ(fp16(65519.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(fp16(65520.0f)) && fp16(-1e6f) < 0);
  EXPECT_EQ(fp16(std::ldexp(1.0f, -14)), std::ldexp(1.0f, -14));  // the smallest normal
  EXPECT_EQ(fp16(std::ldexp(1.0f, -24)), std::ldexp(1.0f, -24));  // the smallest subnormal
  EXPECT_EQ(fp16(std::ldexp(1.0f, -25)), 0.0f) << "half the smallest subnormal ties to zero";
  EXPECT_EQ(fp16(3 * std::ldexp(1.0f, -25)), std::ldexp(1.0f, -23));
  EXPECT_EQ(fp16(1e-3f), 0.0010004043579101562f);  // 0x1419
  EXPECT_TRUE(std::isnan(fp16(std::nanf(""))));
  EXPECT_EQ(round_to_precision(1.0f / 3, Precision::fp32), 1.0f / 3);
}

TEST(MlpCheckRounding, Bf16KeepsEightSignificantBits) {
  const auto bf16 = [](float v) { return round_to_precision(v, Precision::bf16); };
  EXPECT_EQ(bf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);
  EXPECT_EQ(bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(bf16(1.0f / 3), 0.333984375f);  // 0x3EAB
  EXPECT_NEAR(bf16(1e30f), 1e30f, 1e30f / 256) << "fp32's range: no overflow";
  EXPECT_TRUE(std::isfinite(bf16(3e38f)));
  EXPECT_TRUE(std::isinf(bf16(INFINITY)) && std::isnan(bf16(std::nanf(""))));
}

TEST(MlpCheckRounding, RoundingIsIdempotentAndWithinHalfAUnit) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-14, 15);  // fp16's normal range
  for (int i = 0; i < 100000; ++i) {
    const float v = std::ldexp(mantissa(rng), exponent(rng));
    for (auto [precision, unit] : {std::pair{Precision::fp16, std::ldexp(1.0, -11)},
                                   std::pair{Precision::bf16, std::ldexp(1.0, -8)}}) {
      const float r = round_to_precision(v, precision);
      ASSERT_EQ(round_to_precision(r, precision), r) << v;
      if (std::fabs(v) >= std::ldexp(1.0f, -14) && std::isfinite(r)) {
        ASSERT_LE(std::fabs(static_cast<double>(r) - v), unit * std::fabs(v)) << v;
      }
    }
  }
}

TEST(MlpCheckRounding, ReferenceInputsRoundWeightsAndXButNotBiases) {
  const MlpShape shape;
  const auto l = mlp_param_layout(shape);
  std::vector<float> params(l.count, 1.0f / 3), x(10, 1.0f / 3);
  auto untouched = params;
  round_mlp_inputs(params.data(), x.data(), 5, shape, Precision::fp32);
  EXPECT_EQ(params, untouched);
  round_mlp_inputs(params.data(), x.data(), 5, shape, Precision::fp16);
  EXPECT_EQ(params[l.w1], 0.333251953125f);
  EXPECT_EQ(params[l.b1 - 1], 0.333251953125f);
  EXPECT_EQ(params[l.b1], 1.0f / 3) << "b1 stays fp32";
  EXPECT_EQ(params[l.w2], 0.333251953125f);
  EXPECT_EQ(params[l.b2], 1.0f / 3) << "b2 stays fp32";
  EXPECT_EQ(x[4], 0.333251953125f);
  EXPECT_EQ(x[5], 1.0f / 3) << "only x_count values of x";
}

}  // namespace offloadbench
