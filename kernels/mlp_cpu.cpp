// The MLP's CPU reference: OpenBLAS for the three GEMMs of a step, fused loops for the rest.
// Loops run on OpenMP threads only when they are large enough to pay for the fork; the caller sets
// the thread count (omp_set_num_threads, openblas_set_num_threads).
#include "kernels/mlp.h"
#include "kernels/cpu_vector.h"
#include "kernels/matmul.h"
#include "kernels/mlp_update_rule.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#if defined(__x86_64__) && defined(__GLIBC__)
// glibc's vector math library (libmvec) has expf and logf at every x86-64 vector width, but its
// header declares them for `omp simd` loops only under -ffast-math, which the suite does not use
// (it would change NaN handling and rounding everywhere); so they are declared here (the tests hold
// the softmax to 1e-6 of a double-precision one). 784-128-10 at batch 4096: 0.22 ms with scalar
// expf, 0.13 with these.
extern "C" {
#pragma omp declare simd notinbranch
float expf(float) noexcept;
#pragma omp declare simd notinbranch
float logf(float) noexcept;
}
#endif

namespace offloadbench {

namespace {
constexpr std::int64_t kParallelThreshold = kCpuParallelLoopElements;
constexpr std::int64_t kParallelUpdateThreshold = kCpuParallelUpdateParams;
// The batch-split step (train_step_splitting_batch): from 256 rows per thread (784-128-10 at two
// threads: b256 ran 2–5% faster, b64 25% slower), up to 2^18 parameters — above, the shares' sum
// costs what the split saves (12288-64-10's 787k: no faster at b1024 or b4096), as for
// sgemm_split_k.
constexpr int kBatchSplitRowsPerThread = 256;
constexpr std::int64_t kBatchSplitMaxParams = std::int64_t{1} << 18;
constexpr std::int64_t kMaxDimension = std::int64_t{1} << 30;
constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;
}  // namespace

std::string to_string(const MlpShape& shape) {
  return fmt::format("{}-{}-{}", shape.inputs, shape.hidden, shape.classes);
}

void validate_mlp_shape(const MlpShape& shape, std::int64_t batch) {
  const std::pair<const char*, std::int64_t> dims[] = {{"inputs", shape.inputs},
                                                       {"hidden", shape.hidden},
                                                       {"classes", shape.classes},
                                                       {"batch", batch}};
  for (const auto& [name, value] : dims) {
    if (value <= 0)
      throw std::invalid_argument(fmt::format("mlp: {} must be positive, got {}", name, value));
    if (value > kMaxDimension)
      throw std::invalid_argument(
          fmt::format("mlp: {} = {} is above the limit {}", name, value, kMaxDimension));
  }
  const std::int64_t products[] = {batch * shape.inputs, batch * shape.hidden,
                                   shape.hidden * shape.inputs};
  for (auto elements : products)
    if (elements > kMaxElements)
      throw std::invalid_argument(
          fmt::format("mlp: shape {} at batch {} needs a {}-element tensor, above {}",
                      to_string(shape), batch, elements, kMaxElements));
}

MlpParamLayout mlp_param_layout(const MlpShape& s) {
  MlpParamLayout l{};
  l.w1 = 0;
  l.b1 = l.w1 + static_cast<std::size_t>(s.hidden * s.inputs);
  l.w2 = l.b1 + static_cast<std::size_t>(s.hidden);
  l.b2 = l.w2 + static_cast<std::size_t>(s.classes * s.hidden);
  l.count = l.b2 + static_cast<std::size_t>(s.classes);
  return l;
}

double mlp_forward_flops(const MlpShape& s, std::int64_t batch) {
  return 2.0 * batch * s.inputs * s.hidden + 2.0 * batch * s.hidden * s.classes;
}

double mlp_train_flops(const MlpShape& s, std::int64_t batch) {
  // forward, dW2 (C,H) and dh (B,H) each 2·B·H·C, dW1 (H,D) 2·B·D·H; no dx (the input needs none).
  return mlp_forward_flops(s, batch) + 2.0 * batch * s.hidden * s.classes * 2 +
         2.0 * batch * s.inputs * s.hidden;
}

const char* to_string(Precision precision) {
  switch (precision) {
    case Precision::fp32:
      return "fp32";
    case Precision::bf16:
      return "bf16";
    case Precision::fp16:
      return "fp16";
  }
  return "unknown";
}

const char* to_string(Optimizer optimizer) { return optimizer == Optimizer::sgd ? "sgd" : "adamw"; }

OptimizerConfig make_optimizer_config(Optimizer kind, float max_grad_norm) {
  OptimizerConfig c;
  c.kind = kind;
  c.lr = kind == Optimizer::sgd ? 0.1f : 1e-3f;
  c.max_grad_norm = max_grad_norm;
  return c;
}

void mlp_init_params(float* params, const MlpShape& s, std::uint64_t seed) {
  const auto l = mlp_param_layout(s);
  std::mt19937_64 rng(seed);
  auto fill = [&](std::size_t offset, std::int64_t count, std::int64_t fan_in) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
    std::uniform_real_distribution<float> dist(-bound, bound);
    for (std::int64_t i = 0; i < count; ++i) params[offset + i] = dist(rng);
  };
  fill(l.w1, s.hidden * s.inputs, s.inputs);
  fill(l.b1, s.hidden, s.inputs);
  fill(l.w2, s.classes * s.hidden, s.hidden);
  fill(l.b2, s.classes, s.hidden);
}

void make_synthetic_dataset(float* x, int* labels, std::int64_t n, const MlpShape& s,
                            std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> teacher(static_cast<std::size_t>(s.classes * s.inputs));
  for (auto& w : teacher) w = normal(rng);
  for (std::int64_t i = 0; i < n * s.inputs; ++i) x[i] = uniform(rng);
  for (std::int64_t b = 0; b < n; ++b) {
    int best = 0;
    double best_score = -std::numeric_limits<double>::infinity();
    for (std::int64_t c = 0; c < s.classes; ++c) {
      double score = 0;
      for (std::int64_t d = 0; d < s.inputs; ++d)
        score += teacher[c * s.inputs + d] * x[b * s.inputs + d];
      if (score > best_score) best_score = score, best = static_cast<int>(c);
    }
    labels[b] = best;
  }
}

// ---- layers ----

namespace {
// The step's GEMMs as (trans_a, trans_b, M, N, K, A, lda, B, ldb, C, ldc); alpha 1, beta 0 or 1.
CpuGemm forward_gemm(float* out, const float* inp, const float* weight, int B, int IC, int OC,
                     const float* bias = nullptr, bool relu = false) {
  return {false, true, B, OC, IC, 1.0f, inp, IC, weight, IC, 0.0f, out, OC, bias, relu};
}
CpuGemm weight_gemm(float* dweight, const float* dout, const float* inp, int B, int IC, int OC,
                    float alpha, float beta = 1.0f) {
  return {true, false, OC, IC, B, alpha, dout, OC, inp, IC, beta, dweight, IC};
}
CpuGemm input_gemm(float* dinp, const float* dout, const float* weight, int B, int IC, int OC) {
  return {false, false, B, IC, OC, 1.0f, dout, OC, weight, IC, 0.0f, dinp, IC};
}
}  // namespace

// The elementwise layers below are branch-free simd loops: a ReLU's sign is a coin flip, and a
// branch per element mispredicts half the time (it cost ~15% of a batch-1024 training step).
namespace {
OFFLOADBENCH_VECTOR_CLONES void relu_backward_range(float* dact, const float* dpre,
                                                    const float* __restrict act, std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) dact[i] = act[i] > 0.0f ? dpre[i] : 0.0f;
}

// dact = act > 0 ? dact : 0, then dbias += the rows of dact: the hidden layer's ReLU and bias
// backward in one pass over dact instead of two.
OFFLOADBENCH_VECTOR_CLONES void relu_bias_backward_rows(float* __restrict dact,
                                                        const float* __restrict act,
                                                        float* __restrict dbias, int rows, int N) {
  for (int b = 0; b < rows; ++b) {
    const std::int64_t row = std::int64_t{b} * N;
#pragma omp simd
    for (int n = 0; n < N; ++n) {
      const float d = act[row + n] > 0.0f ? dact[row + n] : 0.0f;
      dact[row + n] = d;
      dbias[n] += d;
    }
  }
}

OFFLOADBENCH_VECTOR_CLONES void bias_backward_rows(float* __restrict dbias,
                                                   const float* __restrict dout, int rows, int N) {
  for (int b = 0; b < rows; ++b) {
    const std::int64_t row = std::int64_t{b} * N;
#pragma omp simd
    for (int n = 0; n < N; ++n) dbias[n] += dout[row + n];
  }
}
}  // namespace

namespace {
// expf and logf over a whole array, on vectors where the C library has them (glibc's libmvec); a
// row holds only C = 10 logits, too few for a vector, so the softmax works on blocks of rows at a
// time.
OFFLOADBENCH_VECTOR_CLONES void exp_in_place(float* x, int n) {
#pragma omp simd
  for (int i = 0; i < n; ++i) x[i] = expf(x[i]);
}
OFFLOADBENCH_VECTOR_CLONES void log_in_place(float* x, int n) {
#pragma omp simd
  for (int i = 0; i < n; ++i) x[i] = logf(x[i]);
}
}  // namespace

namespace {
// dlogits = (softmax(logits) − onehot(label))·grad_weight for `rows` rows; returns Σ of the rows'
// losses.
double softmax_cross_entropy_rows(float* dlogits, const float* logits, const int* labels,
                                  float grad_weight, int B, int C) {
  constexpr int kBlockRows = 256;
  float log_sum[kBlockRows],
      label_logit[kBlockRows];  // per row: log Σ exp, the label's shifted logit
  double loss = 0;
  for (int b0 = 0; b0 < B; b0 += kBlockRows) {
    const int rows = std::min(kBlockRows, B - b0);
    const float* z = logits + std::int64_t{b0} * C;
    float* dz = dlogits + std::int64_t{b0} * C;
    for (int r = 0; r < rows; ++r) {  // each row shifted by its maximum, so no exp overflows
      const float zmax = *std::max_element(z + r * C, z + (r + 1) * C);
      for (int c = 0; c < C; ++c) dz[r * C + c] = z[r * C + c] - zmax;
      label_logit[r] = dz[r * C + labels[b0 + r]];
    }
    exp_in_place(dz, rows * C);  // one exp per logit, kept in dz
    for (int r = 0; r < rows; ++r) {
      float sum = 0;
      for (int c = 0; c < C; ++c) sum += dz[r * C + c];
      log_sum[r] = sum;
      const float inv_sum = 1.0f / sum;
      for (int c = 0; c < C; ++c)
        dz[r * C + c] =
            (dz[r * C + c] * inv_sum - (c == labels[b0 + r] ? 1.0f : 0.0f)) * grad_weight;
    }
    log_in_place(log_sum, rows);
    for (int r = 0; r < rows; ++r) loss += log_sum[r] - label_logit[r];
  }
  return loss;
}
}  // namespace

void softmax_cross_entropy(TrainScalars* scalars, float* dlogits, const float* logits,
                           const int* labels, int accum_steps, int B, int C) {
  const float row_weight = 1.0f / (static_cast<float>(B) * static_cast<float>(accum_steps));
  const double loss =
      softmax_cross_entropy_rows(dlogits, logits, labels, row_weight * scalars->loss_scale, B, C);
  scalars->loss += static_cast<float>(loss) * row_weight;
}

void matmul_backward_weight(float* dweight, const float* dout, const float* inp, int B, int IC,
                            int OC, CpuGemmLibrary library, float beta) {
  sgemm(library, weight_gemm(dweight, dout, inp, B, IC, OC, 1.0f, beta));
}

void bias_backward(float* dbias, const float* dout, int B, int N) {
  bias_backward_rows(dbias, dout, B, N);
}

void matmul_backward_input(float* dinp, const float* dout, const float* weight, int B, int IC,
                           int OC, CpuGemmLibrary library) {
  sgemm(library, input_gemm(dinp, dout, weight, B, IC, OC));
}

void relu_backward(float* dact, const float* dpre, const float* act, std::int64_t n) {
  for_each_chunk(n, kParallelThreshold, [&](std::int64_t begin, std::int64_t end) {
    relu_backward_range(dact + begin, dpre + begin, act + begin, end - begin);
  });
}

void grad_norm_squared(TrainScalars* scalars, const float* grads, std::int64_t n) {
  double sum = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : sum) if (n > kParallelThreshold)
  for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(grads[i]) * grads[i];
  scalars->grad_norm_sq += static_cast<float>(sum);
}

void prepare_update(TrainScalars* s, const OptimizerConfig& config) {
  prepare_update_rule(s, config);
}

void sgd_update(float* params, const float* grads, const TrainScalars* s,
                const OptimizerConfig& config, std::int64_t n) {
  if (s->skip) return;
  const float step = config.lr * s->grad_multiplier;
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
  for (std::int64_t i = 0; i < n; ++i) params[i] -= step * grads[i];
}

namespace {
// One contiguous range of the AdamW update, in one pass; __restrict lets it vectorize.
OFFLOADBENCH_VECTOR_CLONES void adamw_range(float* __restrict params, float* __restrict m,
                                            float* __restrict v, const float* __restrict grads,
                                            AdamwCoefficients k, std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) adamw_element(params[i], m[i], v[i], grads[i], k);
}

// The same for one row of a weight whose gradient is the outer product row_scale·x (batch 1): each
// element's gradient is formed where it is used, bit for bit the product a K = 1 GEMM writes.
OFFLOADBENCH_VECTOR_CLONES void adamw_outer_range(float* __restrict params, float* __restrict m,
                                                  float* __restrict v, float row_scale,
                                                  const float* __restrict x, AdamwCoefficients k,
                                                  std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) adamw_element(params[i], m[i], v[i], row_scale * x[i], k);
}
}  // namespace

void adamw_update(float* params, float* m, float* v, const float* grads, const TrainScalars* s,
                  const OptimizerConfig& c, std::int64_t n) {
  if (s->skip) return;
  const AdamwCoefficients k = adamw_coefficients(s, c);
  for_each_chunk(n, kParallelUpdateThreshold, [&](std::int64_t begin, std::int64_t end) {
    adamw_range(params + begin, m + begin, v + begin, grads + begin, k, end - begin);
  });
}

// ---- the model ----

void mlp_begin_step(float* grads, TrainScalars* scalars, std::int64_t n_params) {
  std::fill(grads, grads + n_params, 0.0f);
  scalars->loss = 0;
  scalars->grad_norm_sq = 0;
}

void mlp_forward(const MlpActivations& a, const float* params, const float* x, const MlpShape& s,
                 int B, CpuGemmLibrary gemms) {
  const auto l = mlp_param_layout(s);
  const int D = static_cast<int>(s.inputs), H = static_cast<int>(s.hidden),
            C = static_cast<int>(s.classes);
  // Bias and ReLU as the GEMMs' epilogue: in oneDNN's matmul they cost no pass over the activations
  // (784-128-10 at batch 4096: the separate pass took ~0.23 ms of a 7 ms two-thread step).
  sgemm(gemms, forward_gemm(a.act1, x, params + l.w1, B, D, H, params + l.b1, true));
  sgemm(gemms, forward_gemm(a.logits, a.act1, params + l.w2, B, H, C, params + l.b2));
}

void mlp_forward_backward(float* grads, TrainScalars* scalars, const MlpActivations& a,
                          const float* params, const float* x, const int* labels, int accum_steps,
                          const MlpShape& s, int B, CpuGemmLibrary gemms, GradWrite write) {
  const auto l = mlp_param_layout(s);
  const int D = static_cast<int>(s.inputs), H = static_cast<int>(s.hidden),
            C = static_cast<int>(s.classes);
  const float beta = write == GradWrite::overwrite ? 0.0f : 1.0f;
  if (write == GradWrite::overwrite) {  // the biases' sums accumulate over rows: start them at zero
    std::fill(grads + l.b1, grads + l.b1 + H, 0.0f);
    std::fill(grads + l.b2, grads + l.b2 + C, 0.0f);
  }
  mlp_forward(a, params, x, s, B, gemms);
  softmax_cross_entropy(scalars, a.dlogits, a.logits, labels, accum_steps, B, C);
  matmul_backward_weight(grads + l.w2, a.dlogits, a.act1, B, H, C, gemms, beta);
  bias_backward(grads + l.b2, a.dlogits, B, C);
  matmul_backward_input(a.dact1, a.dlogits, params + l.w2, B, H, C, gemms);
  relu_bias_backward_rows(a.dact1, a.act1, grads + l.b1, B, H);
  sgemm_split_k(gemms, weight_gemm(grads + l.w1, a.dact1, x, B, D, H, 1.0f, beta));
}

void mlp_optimizer_step(float* params, float* m, float* v, const float* grads,
                        TrainScalars* scalars, const OptimizerConfig& config,
                        std::int64_t n_params) {
  if (needs_grad_norm(config)) grad_norm_squared(scalars, grads, n_params);
  prepare_update(scalars, config);
  if (config.kind == Optimizer::sgd)
    sgd_update(params, grads, scalars, config, n_params);
  else
    adamw_update(params, m, v, grads, scalars, config, n_params);
}

MlpCpuModel::MlpCpuModel(const MlpShape& s, int B, std::uint64_t seed) : shape(s), batch(B) {
  validate_mlp_shape(s, B);
  const auto n = mlp_param_layout(s).count;
  params.resize(n);
  grads.assign(n, 0.0f);
  m.assign(n, 0.0f);
  v.assign(n, 0.0f);
  const auto hidden = static_cast<std::size_t>(B * s.hidden),
             out = static_cast<std::size_t>(B * s.classes);
  act1.assign(hidden, 0.0f);
  dact1.assign(hidden, 0.0f);
  logits.assign(out, 0.0f);
  dlogits.assign(out, 0.0f);
  mlp_init_params(params.data(), s, seed);
}

void mlp_infer(MlpCpuModel& model, const float* x) {
  mlp_forward(model.activations(), model.params.data(), x, model.shape, model.batch,
              model.gemm_library);
}

float mlp_loss(MlpCpuModel& model, const float* x, const int* labels) {
  TrainScalars scalars;
  mlp_infer(model, x);
  softmax_cross_entropy(&scalars, model.dlogits.data(), model.logits.data(), labels, 1, model.batch,
                        static_cast<int>(model.shape.classes));
  return scalars.loss;
}

float mlp_train_step(MlpCpuModel& model, const float* x, const int* labels, int accum_steps,
                     const OptimizerConfig& config) {
  const auto n = static_cast<std::int64_t>(model.params.size());
  const std::int64_t rows = model.batch;
  model.scalars.loss = 0;
  model.scalars.grad_norm_sq = 0;
  // The first micro-batch writes the gradients over, so they need no zeroing pass.
  for (int micro = 0; micro < accum_steps; ++micro)
    mlp_forward_backward(
        model.grads.data(), &model.scalars, model.activations(), model.params.data(),
        x + micro * rows * model.shape.inputs, labels + micro * rows, accum_steps, model.shape,
        model.batch, model.gemm_library, micro == 0 ? GradWrite::overwrite : GradWrite::accumulate);
  const float loss = model.scalars.loss;
  mlp_optimizer_step(model.params.data(), model.m.data(), model.v.data(), model.grads.data(),
                     &model.scalars, config, n);
  return loss;
}

bool sgd_folds_into_weight_gemm(const OptimizerConfig& config, int accum_steps) {
  return config.kind == Optimizer::sgd && !needs_grad_norm(config) && accum_steps == 1;
}

bool adamw_forms_w1_gradient_in_update(const OptimizerConfig& config, int accum_steps, int batch) {
  return config.kind == Optimizer::adamw && !needs_grad_norm(config) && accum_steps == 1 &&
         batch == 1;
}

namespace {
// Batch 1 with AdamW: W1's gradient is the outer product dact1 ⊗ x, so the update forms each
// element as it goes instead of writing H·D gradients (zeroed first) and reading them back — at
// 12288-64-10 that is 3.1 MB written twice and read twice beside the 22 MB the update itself moves.
// The other parameters' gradients are written as in mlp_train_step and updated from them.
float adamw_step_forming_w1_gradient(MlpCpuModel& model, const float* x, const int* labels,
                                     const OptimizerConfig& config) {
  const MlpShape& s = model.shape;
  const auto l = mlp_param_layout(s);
  const int D = static_cast<int>(s.inputs), H = static_cast<int>(s.hidden),
            C = static_cast<int>(s.classes);
  const auto a = model.activations();
  float *params = model.params.data(), *grads = model.grads.data(), *m = model.m.data(),
        *v = model.v.data();
  TrainScalars* scalars = &model.scalars;
  scalars->loss = 0;
  scalars->grad_norm_sq = 0;  // not computed: nothing reads it without clipping or loss scaling
  const CpuGemmLibrary gemms = model.gemm_library;
  mlp_forward(a, params, x, s, 1, gemms);
  softmax_cross_entropy(scalars, a.dlogits, a.logits, labels, 1, 1, C);
  std::fill(grads + l.b1, grads + l.count, 0.0f);
  matmul_backward_weight(grads + l.w2, a.dlogits, a.act1, 1, H, C, gemms, 0.0f);
  bias_backward(grads + l.b2, a.dlogits, 1, C);
  matmul_backward_input(a.dact1, a.dlogits, params + l.w2, 1, H, C, gemms);
  relu_backward(a.dact1, a.dact1, a.act1, H);
  bias_backward(grads + l.b1, a.dact1, 1, H);
  prepare_update(scalars, config);
  if (scalars->skip) return scalars->loss;
  const AdamwCoefficients k = adamw_coefficients(scalars, config);
  for_each_chunk(H, kParallelUpdateThreshold / D, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t h = begin; h < end; ++h) {
      const std::int64_t row = l.w1 + h * D;
      adamw_outer_range(params + row, m + row, v + row, a.dact1[h], x, k, D);
    }
  });
  adamw_update(params + l.b1, m + l.b1, v + l.b1, grads + l.b1, scalars, config,
               static_cast<std::int64_t>(l.count - l.b1));  // b1, W2, b2 follow W1
  return scalars->loss;
}
}  // namespace

bool splits_batch_over_threads(const OptimizerConfig& config, int accum_steps, int batch,
                               std::int64_t n_params, int threads) {
  return threads >= 2 && accum_steps == 1 && !needs_grad_norm(config) &&
         batch >= kBatchSplitRowsPerThread * threads && n_params <= kBatchSplitMaxParams;
}

namespace {
OFFLOADBENCH_VECTOR_CLONES void add_into(float* __restrict sum, const float* __restrict add,
                                         std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) sum[i] += add[i];
}

OFFLOADBENCH_VECTOR_CLONES void sgd_range(float* __restrict params, const float* __restrict grads,
                                          float step, std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) params[i] -= step * grads[i];
}

// Rows [b0, b1) of the batch, forward and backward, on the calling thread: its gradients written
// over `grads` (the parameters' layout), its rows of the activations. Returns the sum of its rows'
// losses.
double forward_backward_rows(float* grads, const MlpActivations& a, const float* params,
                             const float* x, const int* labels, const MlpShape& s, int b0, int b1,
                             float grad_weight, CpuGemmLibrary gemms) {
  const auto l = mlp_param_layout(s);
  const int D = static_cast<int>(s.inputs), H = static_cast<int>(s.hidden),
            C = static_cast<int>(s.classes);
  const int rows = b1 - b0;
  const float* xr = x + std::int64_t{b0} * D;
  float* act1 = a.act1 + std::int64_t{b0} * H;
  float* dact1 = a.dact1 + std::int64_t{b0} * H;
  float* logits = a.logits + std::int64_t{b0} * C;
  float* dlogits = a.dlogits + std::int64_t{b0} * C;
  sgemm(gemms, forward_gemm(act1, xr, params + l.w1, rows, D, H, params + l.b1, true));
  sgemm(gemms, forward_gemm(logits, act1, params + l.w2, rows, H, C, params + l.b2));
  const double loss =
      softmax_cross_entropy_rows(dlogits, logits, labels + b0, grad_weight, rows, C);
  std::fill(grads + l.b1, grads + l.b1 + H, 0.0f);
  std::fill(grads + l.b2, grads + l.b2 + C, 0.0f);
  sgemm(gemms, weight_gemm(grads + l.w2, dlogits, act1, rows, H, C, 1.0f, 0.0f));
  bias_backward_rows(grads + l.b2, dlogits, rows, C);
  sgemm(gemms, input_gemm(dact1, dlogits, params + l.w2, rows, H, C));
  relu_bias_backward_rows(dact1, act1, grads + l.b1, rows, H);
  sgemm(gemms, weight_gemm(grads + l.w1, dact1, xr, rows, D, H, 1.0f, 0.0f));
  return loss;
}

// The batch split over the OpenMP team, as data parallelism over cores: each thread runs forward
// and backward on its own rows with one-thread GEMMs (thread 0 into model.grads, the others into
// model.grad_shares), then, after one barrier, each sums its slice of the parameters' gradients in
// thread order and updates that slice. Each core works on the rows it produced; the
// library-threaded step hands every small GEMM and pass between the cores' caches and forks a team
// for each.
float train_step_splitting_batch(MlpCpuModel& model, const float* x, const int* labels,
                                 const OptimizerConfig& config) {
  const std::int64_t n = static_cast<std::int64_t>(model.params.size());
  const int threads = omp_get_max_threads(), B = model.batch;
  model.grad_shares.resize(static_cast<std::size_t>(n) * (threads - 1));  // sized by the first step
  model.thread_losses.resize(static_cast<std::size_t>(threads));
  float *params = model.params.data(), *grads = model.grads.data(),
        *shares = model.grad_shares.data();
  float *m = model.m.data(), *v = model.v.data();
  double* losses = model.thread_losses.data();
  TrainScalars* scalars = &model.scalars;
  scalars->loss = 0;
  scalars->grad_norm_sq = 0;  // not computed: nothing reads it without clipping or loss scaling
  const float row_weight = 1.0f / static_cast<float>(B),
              grad_weight = row_weight * scalars->loss_scale;
  prepare_update(scalars, config);  // needs no gradient without clipping or loss scaling
  const bool adamw = config.kind == Optimizer::adamw, skip = scalars->skip != 0;
  const AdamwCoefficients k = adamw_coefficients(scalars, config);
  const float sgd_step = config.lr * scalars->grad_multiplier;
  const MlpActivations a = model.activations();
  const MlpShape shape = model.shape;
  const CpuGemmLibrary gemms = model.gemm_library;
  std::exception_ptr failure;
  int team = 1;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), count = omp_get_num_threads();
    if (t == 0) team = count;
    float* own = t == 0 ? grads : shares + static_cast<std::ptrdiff_t>(n) * (t - 1);
    try {
      losses[t] = forward_backward_rows(
          own, a, params, x, labels, shape, static_cast<int>(std::int64_t{B} * t / count),
          static_cast<int>(std::int64_t{B} * (t + 1) / count), grad_weight, gemms);
    } catch (...) {
#pragma omp critical
      failure = std::current_exception();
    }
#pragma omp barrier
    if (!failure) {
      constexpr std::int64_t kChunk = 4096;  // summed and updated while in L1
      const std::int64_t e1 = n * (t + 1) / count;
      for (std::int64_t c0 = n * t / count; c0 < e1; c0 += kChunk) {
        const std::int64_t len = std::min(kChunk, e1 - c0);
        for (int u = 1; u < count; ++u)
          add_into(grads + c0, shares + static_cast<std::ptrdiff_t>(n) * (u - 1) + c0, len);
        if (skip) continue;
        if (adamw)
          adamw_range(params + c0, m + c0, v + c0, grads + c0, k, len);
        else
          sgd_range(params + c0, grads + c0, sgd_step, len);
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
  double loss = 0;
  for (int t = 0; t < team; ++t) loss += losses[t];
  scalars->loss = static_cast<float>(loss) * row_weight;
  return scalars->loss;
}
}  // namespace

float mlp_train_step_fast(MlpCpuModel& model, const float* x, const int* labels, int accum_steps,
                          const OptimizerConfig& config) {
  const auto n_params = static_cast<std::int64_t>(model.params.size());
  if (splits_batch_over_threads(config, accum_steps, model.batch, n_params,
                                omp_get_max_threads()) &&
      gemm_runs_alone_in_team(model.gemm_library) && !omp_in_parallel())
    return train_step_splitting_batch(model, x, labels, config);
  if (adamw_forms_w1_gradient_in_update(config, accum_steps, model.batch))
    return adamw_step_forming_w1_gradient(model, x, labels, config);
  if (!sgd_folds_into_weight_gemm(config, accum_steps))
    return mlp_train_step(model, x, labels, accum_steps, config);
  const MlpShape& s = model.shape;
  const auto l = mlp_param_layout(s);
  const int B = model.batch, D = static_cast<int>(s.inputs), H = static_cast<int>(s.hidden),
            C = static_cast<int>(s.classes);
  const auto a = model.activations();
  float* params = model.params.data();
  TrainScalars* scalars = &model.scalars;
  scalars->loss = 0;
  scalars->grad_norm_sq = 0;  // not computed: nothing reads it without clipping or loss scaling
  const CpuGemmLibrary gemms = model.gemm_library;
  mlp_forward(a, params, x, s, B, gemms);
  softmax_cross_entropy(scalars, a.dlogits, a.logits, labels, 1, B, C);
  prepare_update(scalars, config);
  const float alpha = -config.lr * scalars->grad_multiplier;
  // dact1 needs W2 before its update.
  // Biases through their (zeroed) gradient slots as scratch.
  float* db2 = model.grads.data() + l.b2;
  float* db1 = model.grads.data() + l.b1;
  std::fill(db2, db2 + C, 0.0f);
  std::fill(db1, db1 + H, 0.0f);
  matmul_backward_input(a.dact1, a.dlogits, params + l.w2, B, H, C, gemms);
  relu_bias_backward_rows(a.dact1, a.act1, db1, B, H);
  // W ← W + alpha·doutᵀ·inp.
  sgemm(gemms, weight_gemm(params + l.w2, a.dlogits, a.act1, B, H, C, alpha));
  sgemm_split_k(gemms, weight_gemm(params + l.w1, a.dact1, x, B, D, H, alpha));
  bias_backward(db2, a.dlogits, B, C);
  for (int n = 0; n < C; ++n) params[l.b2 + n] += alpha * db2[n];
  for (int n = 0; n < H; ++n) params[l.b1 + n] += alpha * db1[n];
  return scalars->loss;
}

int plan_mlp_threads(MlpCpuModel& model, const std::function<void()>& step, int threads,
                     int trials) {
  if (threads <= 1) return threads;
  const auto params = model.params, m = model.m, v = model.v;
  const TrainScalars scalars = model.scalars;
  const int omp_before = omp_get_max_threads();
  int chosen = threads;
  {
    const BlasThreads blas_restore(threads);  // puts OpenBLAS's count back however this block ends
    const auto on = [&step](int count) {
      return [&step, count] {
        omp_set_num_threads(count);
        openblas_set_num_threads(count);
        step();
      };
    };
    try {
      if (runs_faster(on(1), on(threads), trials, kOneThreadMargin)) chosen = 1;
    } catch (...) {
      omp_set_num_threads(omp_before);
      throw;
    }
  }
  omp_set_num_threads(omp_before);
  model.params = params;
  model.m = m;
  model.v = v;
  model.scalars = scalars;
  return chosen;
}

CpuGemmLibrary plan_mlp_gemms(MlpCpuModel& model, const std::function<void()>& step, int trials) {
  const auto params = model.params, m = model.m, v = model.v;
  const TrainScalars scalars = model.scalars;
  const auto run_with = [&model, &step](CpuGemmLibrary library) {
    return [&model, &step, library] {
      model.gemm_library = library;
      step();
    };
  };
  CpuGemmLibrary best = CpuGemmLibrary::openblas;
  for (CpuGemmLibrary library : cpu_gemm_libraries())
    if (library != best && runs_faster(run_with(library), run_with(best), trials)) best = library;
  model.params = params;
  model.m = m;
  model.v = v;
  model.scalars = scalars;
  model.gemm_library = best;
  return best;
}

}  // namespace offloadbench
