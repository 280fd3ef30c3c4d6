// Every CPU GEMM library the build has, against a loop in double, in the four transpose
// combinations the MLP uses and with alpha, beta and leading dimensions wider than the matrices;
// the timing helper the planner decides with; and the MLP's step on each library against the same
// step on OpenBLAS.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include <cblas.h>
#include <gtest/gtest.h>
#include <omp.h>

#include "kernels/cpu_gemm.h"
#include "kernels/cpu_vector.h"
#include "kernels/mlp_packed.h"
#include "kernels/mlp.h"
#include "tests/all_close.h"
#include "tests/test_support.h"

namespace offloadbench {
namespace {

std::vector<float> ramp(std::size_t n, double phase) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(std::sin(0.37 * i + phase));
  return v;
}

// alpha·op(A)·op(B) + beta·C in double, over g's operands (C as it is before the call), and the
// largest Σ|a·b| of any output, which fp32 summation's error bound scales with.
struct Expected {
  std::vector<float> c;
  double largest_abs_sum = 0;
};
Expected expected_gemm(const CpuGemm& g) {
  Expected e{std::vector<float>(g.C, g.C + static_cast<std::size_t>(g.ldc) * g.M)};
  for (int i = 0; i < g.M; ++i)
    for (int j = 0; j < g.N; ++j) {
      double sum = 0, abs_sum = 0;
      for (int p = 0; p < g.K; ++p) {
        const double term = double(g.trans_a ? g.A[p * g.lda + i] : g.A[i * g.lda + p]) *
                            (g.trans_b ? g.B[j * g.ldb + p] : g.B[p * g.ldb + j]);
        sum += term;
        abs_sum += std::abs(term);
      }
      e.c[i * g.ldc + j] = static_cast<float>(g.alpha * sum + g.beta * double(g.C[i * g.ldc + j]));
      e.largest_abs_sum = std::max(e.largest_abs_sum, abs_sum);
    }
  return e;
}

// op(A) (M,K), op(B) (K,N) and C (M,N) filled with ramps, every leading dimension `pad` wider than
// its rows, and the product that reads them (C = alpha·op(A)·op(B) + beta·C). Not copyable: gemm
// points into the vectors.
struct PaddedProduct {
  PaddedProduct(bool ta, bool tb, int M, int N, int K, int pad, float alpha, float beta)
      : a(ramp(static_cast<std::size_t>((ta ? M : K) + pad) * (ta ? K : M), 0.1)),
        b(ramp(static_cast<std::size_t>((tb ? K : N) + pad) * (tb ? N : K), 0.7)),
        c(ramp(static_cast<std::size_t>(N + pad) * M, 1.3)),
        gemm{ta,       tb,
             M,        N,
             K,        alpha,
             a.data(), (ta ? M : K) + pad,
             b.data(), (tb ? K : N) + pad,
             beta,     c.data(),
             N + pad} {}
  PaddedProduct(const PaddedProduct&) = delete;
  PaddedProduct& operator=(const PaddedProduct&) = delete;
  std::vector<float> a, b, c;
  CpuGemm gemm;
};

// A large K = 1 product (a batch-1 weight gradient, an outer product) takes another path on
// OpenBLAS (sger), with each beta it handles differently, and so do one-row and one-column products
// (sgemv, M or N = 1: a batch-1 forward); a forward product (A·Bᵀ, alpha 1, beta 0, ≥ 64 rows)
// another on oneDNN (its matmul primitive, kept per shape: run twice).
TEST(CpuGemm, EveryLibraryMatchesALoopInEveryTransposeCombination) {
  const int pad = 3;  // leading dimensions pad wider than the rows
  struct Shape {
    int M, N, K;
    float alpha, beta;
  };
  for (auto library : cpu_gemm_libraries())
    for (const auto& [M, N, K, alpha, beta] :
         {Shape{37, 23, 19, -0.75f, 0.5f}, Shape{37, 23, 1, -0.75f, 0.5f},
          Shape{37, 8000, 1, -0.75f, 0.5f}, Shape{37, 8000, 1, -0.75f, 1.0f},
          Shape{37, 8000, 1, -0.75f, 0.0f}, Shape{96, 23, 19, 1.0f, 0.0f},
          Shape{96, 23, 19, 1.0f, 0.0f}, Shape{1, 64, 300, -0.75f, 0.5f},
          Shape{1, 64, 300, 1.0f, 0.0f}, Shape{1, 64, 300, -0.75f, 1.0f},
          Shape{40, 1, 300, -0.75f, 0.5f}, Shape{40, 1, 300, 1.0f, 0.0f},
          Shape{1, 1, 300, 1.0f, 0.0f}})
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          PaddedProduct p(ta, tb, M, N, K, pad, alpha, beta);
          const CpuGemm& gemm = p.gemm;
          const std::vector<float>& c = p.c;
          const Expected want = expected_gemm(gemm);
          // Higham's bound for a K-term fp32 sum, γ_K·Σ|a·b| (u = 2^-24), beside the 1e-5 of the
          // final rounding.
          const double unit = std::ldexp(1.0, -24),
                       summation = K * unit / (1 - K * unit) * want.largest_abs_sum;
          sgemm(library, gemm);
          EXPECT_TRUE(testing::all_close(c.data(), want.c.data(),
                                         static_cast<std::int64_t>(c.size()),
                                         1e-5 + std::abs(alpha) * summation, 1e-5))
              << to_string(library) << " K " << K << " beta " << beta << " trans_a " << ta
              << " trans_b " << tb;
        }
}

// The epilogue (bias per column, then ReLU) on every path a forward product can take: oneDNN's
// matmul primitive (≥ 64 rows: bias and ReLU as its post-op), one row (OpenBLAS's sgemv), and the
// rest (the loop after the product), against the product without epilogue, biased and clamped here.
TEST(CpuGemm, EpilogueAddsTheBiasThenClampsAtZeroOnEveryPath) {
  struct Shape {
    int M, N, K;
  };
  for (auto library : cpu_gemm_libraries())
    for (const auto& [M, N, K] :
         {Shape{96, 23, 19}, Shape{1, 64, 300}, Shape{37, 23, 19}, Shape{130, 10, 128}})
      for (bool has_bias : {false, true})
        for (bool relu : {false, true}) {
          const int lda = K + 2, ldb = K + 1,
                    ldc = N + 3;  // C = A·Bᵀ, B stored (N,K) as a layer's weights
          const auto a = ramp(static_cast<std::size_t>(lda) * M, 0.1),
                     b = ramp(static_cast<std::size_t>(ldb) * N, 0.7);
          const auto bias = ramp(static_cast<std::size_t>(N), 2.9);
          std::vector<float> plain(static_cast<std::size_t>(ldc) * M, std::nanf("")), fused = plain;
          sgemm(library, {false, true, M, N, K, 1.0f, a.data(), lda, b.data(), ldb, 0.0f,
                          plain.data(), ldc});
          sgemm(library, {false, true, M, N, K, 1.0f, a.data(), lda, b.data(), ldb, 0.0f,
                          fused.data(), ldc, has_bias ? bias.data() : nullptr, relu});
          int clamped = 0;
          for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
              float want = plain[i * ldc + j] + (has_bias ? bias[j] : 0.0f);
              if (relu && want < 0) want = 0, ++clamped;
              ASSERT_NEAR(fused[i * ldc + j], want, 1e-5 * (1 + std::abs(want)))
                  << to_string(library) << " " << M << "x" << N << "x" << K << " bias " << has_bias
                  << " relu " << relu;
            }
          if (relu) {
            EXPECT_GT(clamped, 0) << "the case must have negative outputs for ReLU to clamp";
          }
        }
}

// K split over the threads (each a one-thread GEMM, the shares added after) gives the one-call
// product, beta and alpha included, in every transpose combination, on 2 and 3 threads; on one
// thread and below 256 rows of K per thread it is the one call.
TEST(CpuGemm, SplitOverKMatchesALoopOnSeveralThreads) {
  const int M = 37, N = 50, K = 900, pad = 3;
  const int omp_before = omp_get_max_threads();
  for (auto library : cpu_gemm_libraries())
    for (int threads : {1, 2, 3})
      for (float beta : {0.0f, 1.0f, 0.5f})
        for (bool ta : {false, true})
          for (bool tb : {false, true}) {
            PaddedProduct p(ta, tb, M, N, K, pad, -0.75f, beta);
            const CpuGemm& gemm = p.gemm;
            const std::vector<float>& c = p.c;
            const std::vector<float> want = expected_gemm(gemm).c;
            omp_set_num_threads(threads);
            sgemm_split_k(library, gemm);
            omp_set_num_threads(omp_before);
            // |a·b| ≤ 1 per term: γ_K·K bounds the fp32 summation error
            EXPECT_TRUE(testing::all_close(c.data(), want.data(),
                                           static_cast<std::int64_t>(c.size()), 2e-4, 1e-5))
                << to_string(library) << " threads " << threads << " beta " << beta << " ta " << ta
                << " tb " << tb;
          }
}

// beta 0 means C is not read, so a NaN left in it must not reach the result, on every path.
// oneDNN's forward matmul is built once per shape and reused with whatever buffers the next call
// brings (its argument list too): the same shape three times on fresh operands, bias and output,
// each against the loop. Where the build has no oneDNN, OpenBLAS runs it (the same check).
TEST(CpuGemm, ForwardProductOfTheSameShapeFollowsNewBuffers) {
  const int M = 96, N = 24, K = 40;
  for (int call = 0; call < 3; ++call) {
    const auto a = ramp(static_cast<std::size_t>(M) * K, 0.4 * call),
               b = ramp(static_cast<std::size_t>(N) * K, 1.1 + call);
    const auto bias = ramp(static_cast<std::size_t>(N), 2.3 * call);
    std::vector<float> c(static_cast<std::size_t>(M) * N, 0.0f);
    const CpuGemm plain{false, true, M, N, K, 1.0f, a.data(), K, b.data(), K, 0.0f, c.data(), N};
    std::vector<float> want = expected_gemm(plain).c;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) want[i * N + j] = std::max(want[i * N + j] + bias[j], 0.0f);
    std::fill(c.begin(), c.end(), std::nanf(""));  // beta 0: what C held must not matter
    CpuGemm fused = plain;
    fused.bias = bias.data();
    fused.relu = true;
    sgemm(cpu_gemm_libraries().back(), fused);
    EXPECT_TRUE(
        testing::all_close(c.data(), want.data(), static_cast<std::int64_t>(c.size()), 1e-5, 1e-5))
        << "call " << call;
  }
}

// A pass called by each thread of a team (the batch-split step's rows) is that thread's share
// already: for_each_chunk runs it whole on the caller instead of forking again — tested with
// nesting allowed, where a fork would split it. Outside a team it still splits over the threads.
TEST(CpuGemm, ChunkedPassesInsideATeamRunWholeOnTheCaller) {
  const int omp_before = omp_get_max_threads(), levels_before = omp_get_max_active_levels();
  omp_set_num_threads(2);
  omp_set_max_active_levels(2);
  std::vector<int> calls(2, 0);
  std::vector<std::int64_t> covered(2, 0);
#pragma omp parallel num_threads(2)
  {
    const int t = omp_get_thread_num();
    for_each_chunk(1000, 0, [&](std::int64_t begin, std::int64_t end) {
#pragma omp atomic
      ++calls[t];
#pragma omp atomic
      covered[t] += end - begin;
    });
  }
  int outside = 0;
  for_each_chunk(1000, 0, [&](std::int64_t, std::int64_t) {
#pragma omp atomic
    ++outside;
  });
  omp_set_max_active_levels(levels_before);
  omp_set_num_threads(omp_before);
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(calls[t], 1) << "thread " << t;
    EXPECT_EQ(covered[t], 1000) << "thread " << t;
  }
  EXPECT_EQ(outside, 2);
}

TEST(CpuGemm, BetaZeroIgnoresNanInTheOutput) {
  struct Shape {
    int M, N, K;
  };
  for (auto library : cpu_gemm_libraries())
    for (const auto& [M, N, K] :
         {Shape{1, 64, 300}, Shape{40, 1, 300}, Shape{37, 8000, 1}, Shape{37, 23, 19}}) {
      const auto a = ramp(static_cast<std::size_t>(M) * K, 0.1),
                 b = ramp(static_cast<std::size_t>(K) * N, 0.7);
      std::vector<float> c(static_cast<std::size_t>(M) * N, std::nanf(""));
      sgemm(library, {false, false, M, N, K, 1.0f, a.data(), K, b.data(), N, 0.0f, c.data(), N});
      for (float v : c)
        ASSERT_TRUE(std::isfinite(v)) << to_string(library) << " " << M << "x" << N << "x" << K;
    }
}

TEST(CpuGemm, OpenBlasIsAlwaysAvailableAndNamed) {
  ASSERT_FALSE(cpu_gemm_libraries().empty());
  EXPECT_EQ(cpu_gemm_libraries().front(), CpuGemmLibrary::openblas);
  EXPECT_NE(cpu_gemm_library_list().find("OpenBLAS"), std::string::npos);
  for (auto library : cpu_gemm_libraries()) EXPECT_TRUE(cpu_gemm_available(library));
}

TEST(CpuGemm, RunsFasterTellsAMillisecondApartAndKeepsTheIncumbentOnATie) {
  const auto nothing = [] {};
  const auto sleeps = [] { std::this_thread::sleep_for(std::chrono::milliseconds(1)); };
  EXPECT_TRUE(runs_faster(nothing, sleeps, 3));
  EXPECT_FALSE(runs_faster(sleeps, nothing, 3));
  // Within the margin the incumbent stays; the margin is wide because a loaded machine can stretch
  // a 1 ms sleep several times over (the two would need medians 5x apart to swap).
  EXPECT_FALSE(runs_faster(sleeps, sleeps, 5, 0.8));
}

// The same three SGD steps with every GEMM on each library give the weights OpenBLAS gives, up to
// summation order; the planner leaves the model as it found it and sets the library it picked.
TEST(CpuGemm, MlpStepsAgreeOnEveryLibraryAndPlanningLeavesTheModelAlone) {
  const MlpShape shape{96, 40, 10};
  const int rows = 32;
  std::vector<float> x(static_cast<std::size_t>(rows * shape.inputs));
  std::vector<int> labels(rows);
  make_synthetic_dataset(x.data(), labels.data(), rows, shape, 4);
  const auto sgd = make_optimizer_config(Optimizer::sgd);
  MlpCpuModel reference(shape, rows, 8);
  for (int s = 0; s < 3; ++s) mlp_train_step_fast(reference, x.data(), labels.data(), 1, sgd);
  for (auto library : cpu_gemm_libraries()) {
    MlpCpuModel model(shape, rows, 8);
    model.gemm_library = library;
    for (int s = 0; s < 3; ++s) mlp_train_step_fast(model, x.data(), labels.data(), 1, sgd);
    EXPECT_TRUE(testing::all_close(model.params.data(), reference.params.data(),
                                   static_cast<std::int64_t>(model.params.size()), 1e-6, 1e-5))
        << to_string(library);
  }
  MlpCpuModel planned(shape, rows, 8);
  const auto before = planned.params;
  const auto chosen = plan_mlp_gemms(
      planned, [&] { mlp_train_step_fast(planned, x.data(), labels.data(), 1, sgd); }, 3);
  EXPECT_EQ(planned.params, before);
  EXPECT_EQ(planned.scalars.step, 0);
  EXPECT_TRUE(cpu_gemm_available(chosen));
  EXPECT_EQ(planned.gemm_library, chosen);
}

// The thread planner keeps one thread only where the step is timed faster on it, and leaves the
// model and both thread counts as it found them. The steps here sleep a millisecond on the slower
// count.
TEST(CpuGemm, ThreadPlanKeepsOneThreadOnlyWhereFasterAndLeavesTheModelAlone) {
  const MlpShape shape{96, 40, 10};
  const int rows = 4;
  std::vector<float> x(static_cast<std::size_t>(rows * shape.inputs));
  std::vector<int> labels(rows);
  make_synthetic_dataset(x.data(), labels.data(), rows, shape, 4);
  const auto sgd = make_optimizer_config(Optimizer::sgd);
  MlpCpuModel model(shape, rows, 8);
  const auto before = model.params;
  const auto train_then_sleep_if = [&](bool slow_when_threaded) {
    return [&, slow_when_threaded] {
      mlp_train_step_fast(model, x.data(), labels.data(), 1, sgd);
      if ((omp_get_max_threads() > 1) == slow_when_threaded)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    };
  };
  omp_set_num_threads(1);  // the caller's counts, which the planner must put back
  openblas_set_num_threads(1);
  EXPECT_EQ(plan_mlp_threads(model, train_then_sleep_if(true), 2, 3), 1);
  EXPECT_EQ(plan_mlp_threads(model, train_then_sleep_if(false), 2, 3), 2);
  EXPECT_EQ(plan_mlp_threads(model, train_then_sleep_if(true), 1, 3), 1);  // nothing to plan
  EXPECT_EQ(omp_get_max_threads(), 1);
  EXPECT_EQ(openblas_get_num_threads(), 1);
  EXPECT_EQ(model.params, before);
  EXPECT_EQ(model.scalars.step, 0);
}

// Inference runs on the model's library (the benchmark's step is mlp_infer, so a plan or a pin
// reaches it) and gives OpenBLAS's logits on every library.
TEST(CpuGemm, InferenceAgreesOnEveryLibrary) {
  const MlpShape shape{96, 40, 10};
  const int rows = 32;
  std::vector<float> x(static_cast<std::size_t>(rows * shape.inputs));
  std::vector<int> labels(rows);
  make_synthetic_dataset(x.data(), labels.data(), rows, shape, 4);
  MlpCpuModel reference(shape, rows, 8);
  mlp_infer(reference, x.data());
  for (auto library : cpu_gemm_libraries()) {
    MlpCpuModel model(shape, rows, 8);
    model.gemm_library = library;
    mlp_infer(model, x.data());
    EXPECT_TRUE(testing::all_close(model.logits.data(), reference.logits.data(),
                                   static_cast<std::int64_t>(model.logits.size()), 1e-5, 1e-5))
        << to_string(library);
  }
}

// The packed inference gives mlp_infer's logits, and is a snapshot: a later change to the model's
// weights does not reach it.
TEST(CpuGemm, PackedInferenceAgreesAndIsASnapshot) {
  if (!MlpPackedInference::available()) GTEST_SKIP() << "this build has no oneDNN";
  for (const MlpShape shape : {MlpShape{96, 40, 10}, MlpShape{784, 128, 10}}) {
    for (const int rows : {1, 33}) {
      std::vector<float> x(static_cast<std::size_t>(rows * shape.inputs));
      std::vector<int> labels(rows);
      make_synthetic_dataset(x.data(), labels.data(), rows, shape, 4);
      MlpCpuModel model(shape, rows, 8);
      mlp_infer(model, x.data());
      MlpPackedInference packed(model);
      std::vector<float> logits(model.logits.size(), -1.0f);
      packed.run(x.data(), logits.data());
      EXPECT_TRUE(testing::all_close(logits.data(), model.logits.data(),
                                     static_cast<std::int64_t>(logits.size()), 1e-5, 1e-5))
          << to_string(shape) << " batch " << rows;
      const auto before = logits;
      for (auto& p : model.params) p = -p;
      packed.run(x.data(), logits.data());
      EXPECT_EQ(logits, before);
    }
  }
}

}  // namespace
}  // namespace offloadbench
