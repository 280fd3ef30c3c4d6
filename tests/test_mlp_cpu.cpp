// The MLP's CPU reference: gradients against finite differences, learning on the synthetic set,
// gradient accumulation equal to one large batch, the loss-scaling decision, shape validation.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <omp.h>

#include "kernels/cpu_gemm.h"
#include "kernels/mlp.h"
#include "tests/all_close.h"

namespace offloadbench {

namespace {

struct Batch {
  std::vector<float> x;
  std::vector<int> labels;
};

Batch synthetic_batch(const MlpShape& shape, std::int64_t rows, std::uint64_t seed) {
  Batch b{std::vector<float>(static_cast<std::size_t>(rows * shape.inputs)),
          std::vector<int>(static_cast<std::size_t>(rows))};
  make_synthetic_dataset(b.x.data(), b.labels.data(), rows, shape, seed);
  return b;
}

// Mean loss of `params` on the batch, forward only.
double loss_at(MlpCpuModel& model, const std::vector<float>& params, const Batch& batch) {
  TrainScalars scalars;
  mlp_forward(model.activations(), params.data(), batch.x.data(), model.shape, model.batch);
  softmax_cross_entropy(&scalars, model.dlogits.data(), model.logits.data(), batch.labels.data(), 1,
                        model.batch, static_cast<int>(model.shape.classes));
  return scalars.loss;
}

}  // namespace

// The softmax works on blocks of 256 rows with vector exp and log: 600 rows cross two block edges,
// and logits up to ±60 would overflow an unshifted exp. Against the same formulas in double.
TEST(MlpCpu, SoftmaxCrossEntropyMatchesDoubleAcrossBlocks) {
  const int B = 600, C = 10, accum = 2;
  std::vector<float> logits(B * C), dlogits(B * C, std::nanf(""));
  std::vector<int> labels(B);
  for (int i = 0; i < B * C; ++i) logits[i] = static_cast<float>(60.0 * std::sin(0.61 * i));
  for (int b = 0; b < B; ++b) labels[b] = (b * 7) % C;
  TrainScalars scalars;
  scalars.loss = 0.25f;  // the step adds to what is there
  scalars.loss_scale = 8;
  softmax_cross_entropy(&scalars, dlogits.data(), logits.data(), labels.data(), accum, B, C);
  double loss = 0;
  for (int b = 0; b < B; ++b) {
    const float* z = &logits[b * C];
    double zmax = z[0], sum = 0;
    for (int c = 1; c < C; ++c) zmax = std::max(zmax, double(z[c]));
    for (int c = 0; c < C; ++c) sum += std::exp(z[c] - zmax);
    loss += std::log(sum) - (z[labels[b]] - zmax);
    for (int c = 0; c < C; ++c) {
      const double want = (std::exp(z[c] - zmax) / sum - (c == labels[b])) * 8.0 / (B * accum);
      ASSERT_NEAR(dlogits[b * C + c], want, 1e-6 * 8.0 / (B * accum))
          << "row " << b << " class " << c;
    }
  }
  EXPECT_NEAR(scalars.loss, 0.25 + loss / (B * accum), 1e-5 * (0.25 + loss / (B * accum)));
}

TEST(MlpCpu, GradientsMatchFiniteDifferences) {
  const MlpShape shape{6, 5, 4};
  MlpCpuModel model(shape, 3, 11);
  const auto batch = synthetic_batch(shape, 3, 12);
  mlp_begin_step(model.grads.data(), &model.scalars,
                 static_cast<std::int64_t>(model.params.size()));
  mlp_forward_backward(model.grads.data(), &model.scalars, model.activations(), model.params.data(),
                       batch.x.data(), batch.labels.data(), 1, shape, 3);
  const std::vector<float> analytic = model.grads;
  std::vector<float> numeric(model.params.size());
  const float eps = 1e-3f;
  for (std::size_t i = 0; i < model.params.size(); ++i) {
    auto plus = model.params, minus = model.params;
    plus[i] += eps;
    minus[i] -= eps;
    numeric[i] = static_cast<float>((loss_at(model, plus, batch) - loss_at(model, minus, batch)) /
                                    (2 * eps));
  }
  EXPECT_TRUE(testing::all_close(analytic.data(), numeric.data(),
                                 static_cast<std::int64_t>(numeric.size()), 2e-3, 2e-2));
  double norm = 0;
  for (float g : analytic) norm += g * g;
  EXPECT_GT(norm, 1e-6) << "a zero gradient would pass the comparison trivially";
}

// GradWrite::overwrite gives what zeroing and accumulating gives, whatever the gradients held
// before (the CPU step relies on it to skip the zeroing pass).
TEST(MlpCpu, OverwritingGradientsNeedsNoZeroing) {
  const MlpShape shape{6, 5, 4};
  MlpCpuModel zeroed(shape, 3, 11), stale(shape, 3, 11);
  const auto batch = synthetic_batch(shape, 3, 12);
  mlp_begin_step(zeroed.grads.data(), &zeroed.scalars,
                 static_cast<std::int64_t>(zeroed.params.size()));
  mlp_forward_backward(zeroed.grads.data(), &zeroed.scalars, zeroed.activations(),
                       zeroed.params.data(), batch.x.data(), batch.labels.data(), 1, shape, 3);
  std::fill(stale.grads.begin(), stale.grads.end(), 7.0f);
  mlp_forward_backward(stale.grads.data(), &stale.scalars, stale.activations(), stale.params.data(),
                       batch.x.data(), batch.labels.data(), 1, shape, 3, CpuGemmLibrary::openblas,
                       GradWrite::overwrite);
  EXPECT_EQ(stale.grads, zeroed.grads);
}

TEST(MlpCpu, TwoHundredStepsLowerTheLossWithEachOptimizer) {
  const MlpShape shape{256, 64, 10};  // small enough for a unit test; the suite trains 784-128-10
  const int B = 32, batches = 16;
  const auto data = synthetic_batch(shape, B * batches, 3);
  for (auto kind : {Optimizer::sgd, Optimizer::adamw}) {
    for (float clip : {0.0f, 1.0f}) {
      MlpCpuModel model(shape, B, 7);
      const auto config = make_optimizer_config(kind, clip);
      std::vector<float> losses;
      for (int step = 0; step < 200; ++step) {
        const auto at = (step % batches) * B;
        losses.push_back(mlp_train_step(model, data.x.data() + at * shape.inputs,
                                        data.labels.data() + at, 1, config));
      }
      ASSERT_TRUE(std::isfinite(losses.back()));
      EXPECT_GT(losses.front(), 2.0f) << "starts near log(10)";
      EXPECT_LT(losses.back(), 0.5f * losses.front()) << to_string(kind) << " clip " << clip;
      EXPECT_EQ(model.scalars.step, 200);
      EXPECT_EQ(model.scalars.skipped_steps, 0);
    }
  }
}

TEST(MlpCpu, AccumulatedMicroBatchesEqualOneLargeBatch) {
  const MlpShape shape{40, 24, 10};
  const int micro = 16, accum = 4;
  const auto data = synthetic_batch(shape, micro * accum, 5);
  MlpCpuModel large(shape, micro * accum, 9), small(shape, micro, 9);
  const auto config = make_optimizer_config(Optimizer::adamw, 1.0f);
  const float loss_large = mlp_train_step(large, data.x.data(), data.labels.data(), 1, config);
  const float loss_small = mlp_train_step(small, data.x.data(), data.labels.data(), accum, config);
  EXPECT_NEAR(loss_small, loss_large, 1e-5 * loss_large);
  const auto n = static_cast<std::int64_t>(large.params.size());
  EXPECT_TRUE(testing::all_close(small.grads.data(), large.grads.data(), n, 1e-7, 1e-4));
  EXPECT_TRUE(testing::all_close(small.params.data(), large.params.data(), n, 1e-6, 1e-5));
}

TEST(MlpCpu, FusedSgdStepGivesTheSameWeightsAsTheSeparateUpdate) {
  const MlpShape shape{784, 128, 10};
  const int rows = 64;
  const auto data = synthetic_batch(shape, rows, 11);
  MlpCpuModel separate(shape, rows, 3), fused(shape, rows, 3);
  const auto sgd = make_optimizer_config(Optimizer::sgd);
  for (int step = 0; step < 5; ++step) {
    const float a = mlp_train_step(separate, data.x.data(), data.labels.data(), 1, sgd);
    const float b = mlp_train_step_fast(fused, data.x.data(), data.labels.data(), 1, sgd);
    EXPECT_NEAR(b, a, 1e-5 * a) << "step " << step;
  }
  const auto n = static_cast<std::int64_t>(separate.params.size());
  EXPECT_TRUE(testing::all_close(fused.params.data(), separate.params.data(), n, 1e-6, 1e-5));
  EXPECT_EQ(fused.scalars.step, separate.scalars.step);
}

// Batch 1 with AdamW forms W1's gradient inside the update: the same weights and moments as the
// separate gradient and update, over several steps (the moments and the bias corrections move), at
// a width whose update runs on every thread there is.
TEST(MlpCpu, AdamwStepFormingTheGradientGivesTheSameWeightsAsTheSeparateUpdate) {
  const MlpShape shape{8192, 64, 10};
  const auto data = synthetic_batch(shape, 4, 13);
  MlpCpuModel separate(shape, 1, 3), formed(shape, 1, 3);
  const auto adamw = make_optimizer_config(Optimizer::adamw);
  ASSERT_TRUE(adamw_forms_w1_gradient_in_update(adamw, 1, 1));
  for (int step = 0; step < 4; ++step) {
    const float* x = data.x.data() + step * shape.inputs;
    const float a = mlp_train_step(separate, x, data.labels.data() + step, 1, adamw);
    const float b = mlp_train_step_fast(formed, x, data.labels.data() + step, 1, adamw);
    EXPECT_NEAR(b, a, 1e-6 * a) << "step " << step;
  }
  const auto n = static_cast<std::int64_t>(separate.params.size());
  EXPECT_TRUE(testing::all_close(formed.params.data(), separate.params.data(), n, 1e-7, 1e-6));
  EXPECT_TRUE(testing::all_close(formed.m.data(), separate.m.data(), n, 1e-9, 1e-5));
  EXPECT_TRUE(testing::all_close(formed.v.data(), separate.v.data(), n, 1e-12, 1e-5));
  EXPECT_EQ(formed.scalars.step, separate.scalars.step);
  EXPECT_FALSE(adamw_forms_w1_gradient_in_update(adamw, 1, 2));
  EXPECT_FALSE(adamw_forms_w1_gradient_in_update(make_optimizer_config(Optimizer::adamw, 1.0f), 1,
                                                 1));  // clipping
}

// The vectorized, chunked update against PyTorch's AdamW written out in double, on more elements
// than one chunk (the parallel path runs where there are threads) and an odd tail; moments start
// non-zero.
TEST(MlpCpu, AdamwUpdateIsPyTorchsFormulaOnEveryElement) {
  const std::int64_t n = (std::int64_t{1} << 21) + 37;
  std::vector<float> params(n), m(n), v(n), grads(n);
  for (std::int64_t i = 0; i < n; ++i) {
    params[i] = std::sin(0.001 * i);
    grads[i] = 1e-3f * std::cos(0.003 * i) * (i % 7 == 0 ? 0.0f : 1.0f);  // some exact zeros
    m[i] = 1e-4f * std::sin(0.002 * i);
    v[i] = 1e-7f * (1.5f + std::cos(0.005 * i));  // away from 0, where the step is ill-conditioned
  }
  auto config = make_optimizer_config(Optimizer::adamw);
  TrainScalars scalars;
  scalars.step = 3;
  scalars.grad_multiplier = 0.5f;
  std::vector<float> want(n);
  const double b1 = config.beta1, b2 = config.beta2, lr = config.lr;
  for (std::int64_t i = 0; i < n; ++i) {
    const double g = 0.5 * grads[i];
    const double mi = b1 * m[i] + (1 - b1) * g, vi = b2 * v[i] + (1 - b2) * g * g;
    want[i] = static_cast<float>(params[i] * (1 - lr * config.weight_decay) -
                                 lr * (mi / (1 - std::pow(b1, 3))) /
                                     (std::sqrt(vi / (1 - std::pow(b2, 3))) + config.eps));
  }
  adamw_update(params.data(), m.data(), v.data(), grads.data(), &scalars, config, n);
  EXPECT_TRUE(testing::all_close(params.data(), want.data(), n, 1e-7, 1e-6));
}

// The batch split over the team: each thread's rows forward and backward, gradients summed in
// thread order, each thread's slice of the parameters updated. Against the separate step on one
// thread, for both optimizers and each library, at 2 and 3 threads on a batch that does not divide
// evenly; over three steps, so AdamW's moments and bias corrections move. model.grads holds the
// step's gradient on both sides.
TEST(MlpCpu, BatchSplitStepGivesTheSameWeightsAsTheSeparateStep) {
  const MlpShape shape{784, 128, 10};
  const int rows = 3 * 256 + 5;
  const auto data = synthetic_batch(shape, rows, 17);
  const int omp_before = omp_get_max_threads();
  for (CpuGemmLibrary library : cpu_gemm_libraries())
    for (const Optimizer kind : {Optimizer::sgd, Optimizer::adamw})
      for (int threads : {2, 3}) {
        const auto config = make_optimizer_config(kind);
        MlpCpuModel separate(shape, rows, 5), split(shape, rows, 5);
        split.gemm_library = separate.gemm_library = library;
        const auto n = static_cast<std::int64_t>(separate.params.size());
        ASSERT_TRUE(splits_batch_over_threads(config, 1, rows, n, threads));
        for (int step = 0; step < 3; ++step) {
          omp_set_num_threads(1);
          const float a = mlp_train_step(separate, data.x.data(), data.labels.data(), 1, config);
          omp_set_num_threads(threads);
          const float b = mlp_train_step_fast(split, data.x.data(), data.labels.data(), 1, config);
          omp_set_num_threads(omp_before);
          EXPECT_NEAR(b, a, 1e-5 * a)
              << to_string(library) << " " << to_string(kind) << " " << threads << " step " << step;
        }
        const std::string where =
            fmt::format("{} {} threads {}", to_string(library), to_string(kind), threads);
        EXPECT_TRUE(testing::all_close(split.grads.data(), separate.grads.data(), n, 1e-7, 1e-4))
            << where;
        // AdamW moves each weight by ≈ lr·m/√v, which for a gradient summed to nearly zero follows
        // its rounding (a few of the 100k weights here): held to 1% of the three steps' largest
        // move, the moments tightly.
        const double params_atol = kind == Optimizer::adamw ? 0.01 * 3 * config.lr : 1e-6;
        EXPECT_TRUE(
            testing::all_close(split.params.data(), separate.params.data(), n, params_atol, 1e-5))
            << where;
        EXPECT_TRUE(testing::all_close(split.m.data(), separate.m.data(), n, 1e-9, 1e-4)) << where;
        EXPECT_TRUE(testing::all_close(split.v.data(), separate.v.data(), n, 1e-12, 1e-4)) << where;
        EXPECT_EQ(split.scalars.step, separate.scalars.step) << where;
      }
  const auto sgd = make_optimizer_config(Optimizer::sgd);
  EXPECT_FALSE(splits_batch_over_threads(sgd, 1, 511, 1000, 2));   // < 256 rows each
  EXPECT_FALSE(splits_batch_over_threads(sgd, 1, 4096, 1000, 1));  // one thread
  EXPECT_FALSE(splits_batch_over_threads(sgd, 2, 4096, 1000, 2));  // accumulation
  EXPECT_FALSE(splits_batch_over_threads(make_optimizer_config(Optimizer::sgd, 1.0f), 1, 4096, 1000,
                                         2));  // clip
  EXPECT_FALSE(
      splits_batch_over_threads(sgd, 1, 4096, std::int64_t{1} << 19, 2));  // large shares to sum
}

TEST(MlpCpu, FastStepIsTheSeparateStepWhereItCannotFuse) {
  const MlpShape shape{40, 24, 10};
  const auto data = synthetic_batch(shape, 32, 5);
  for (const auto& config :
       {make_optimizer_config(Optimizer::adamw), make_optimizer_config(Optimizer::sgd, 1.0f)}) {
    MlpCpuModel separate(shape, 16, 9), fast(shape, 16, 9);
    mlp_train_step(separate, data.x.data(), data.labels.data(), 2, config);
    mlp_train_step_fast(fast, data.x.data(), data.labels.data(), 2, config);
    EXPECT_EQ(fast.params, separate.params);
  }
}

TEST(MlpCpu, ClippingBoundsTheAppliedGradientNorm) {
  TrainScalars s;
  s.grad_norm_sq = 100.0f;  // ‖g‖ = 10
  prepare_update(&s, make_optimizer_config(Optimizer::sgd, 1.0f));
  EXPECT_EQ(s.skip, 0);
  EXPECT_NEAR(s.grad_multiplier * 10.0f, 1.0f, 1e-5f);
  TrainScalars small;
  small.grad_norm_sq = 0.25f;  // below the max norm: left alone
  prepare_update(&small, make_optimizer_config(Optimizer::sgd, 1.0f));
  EXPECT_EQ(small.grad_multiplier, 1.0f);
}

TEST(MlpCpu, LossScalingSkipsAnOverflowingStepAndHalvesTheScale) {
  auto config = make_optimizer_config(Optimizer::sgd);
  config.dynamic_loss_scale = true;
  config.growth_interval = 3;
  TrainScalars s;
  s.loss_scale = 1024.0f;
  s.grad_norm_sq = INFINITY;
  prepare_update(&s, config);
  EXPECT_EQ(s.skip, 1);
  EXPECT_EQ(s.loss_scale, 512.0f);
  EXPECT_EQ(s.skipped_steps, 1);
  EXPECT_EQ(s.step, 0);
  std::vector<float> params = {1.0f, 2.0f}, grads = {INFINITY, 1.0f};
  sgd_update(params.data(), grads.data(), &s, config, 2);
  EXPECT_EQ(params, (std::vector<float>{1.0f, 2.0f})) << "a skipped step leaves the weights alone";
  for (int i = 0; i < 3; ++i) {
    s.grad_norm_sq = 4.0f;
    prepare_update(&s, config);
    EXPECT_EQ(s.skip, 0);
  }
  EXPECT_EQ(s.loss_scale, 1024.0f) << "grows back after growth_interval good steps";
  EXPECT_NEAR(s.grad_multiplier, 1.0f / 512.0f, 1e-9f)
      << "unscales by the scale the gradients were made with";
}

TEST(MlpCpu, InvalidShapesAreRejectedWithTheDimensionNamed) {
  EXPECT_NO_THROW(validate_mlp_shape(MlpShape{}, 1));
  auto message = [](const MlpShape& shape, std::int64_t batch) {
    try {
      validate_mlp_shape(shape, batch);
    } catch (const std::invalid_argument& e) { return std::string(e.what()); }
    return std::string("accepted");
  };
  EXPECT_NE(message(MlpShape{0, 128, 10}, 64).find("inputs"), std::string::npos);
  EXPECT_NE(message(MlpShape{784, -3, 10}, 64).find("hidden"), std::string::npos);
  EXPECT_NE(message(MlpShape{784, 128, 10}, 0).find("batch"), std::string::npos);
  EXPECT_NE(message(MlpShape{784, 128, std::int64_t{1} << 40}, 1).find("classes"),
            std::string::npos);
  EXPECT_NE(message(MlpShape{1 << 21, 1 << 20, 10}, 1 << 20).find("element"), std::string::npos);
}

TEST(MlpCpu, FlopCountsAreTwoMNKPerGemm) {
  const MlpShape s{784, 128, 10};
  EXPECT_DOUBLE_EQ(mlp_forward_flops(s, 64), 2.0 * 64 * 784 * 128 + 2.0 * 64 * 128 * 10);
  EXPECT_DOUBLE_EQ(mlp_train_flops(s, 64), 2 * (2.0 * 64 * 784 * 128) + 3 * (2.0 * 64 * 128 * 10));
}

}  // namespace offloadbench
