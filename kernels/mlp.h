// A two-layer perceptron, Linear(D→H) → ReLU → Linear(H→C) with softmax cross-entropy: the CPU
// reference, as llm.c's train_gpt2.c: free functions, outputs first, then inputs, then dimensions.
// Weights are (out_features, in_features) as in PyTorch's nn.Linear, so out = inp·Wᵀ + b.
// kernels/mlp_gpu.h declares the CUDA twins: same names, same argument order, the stream last.
// Gradients accumulate (+=) on both sides; mlp_begin_step zeroes them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cpu_gemm.h"

namespace offloadbench {

struct MlpShape {
  std::int64_t inputs = 784;  // D
  std::int64_t hidden = 128;  // H
  std::int64_t classes = 10;  // C
};

// "784-128-10"
std::string to_string(const MlpShape& shape);

// Throws std::invalid_argument naming the bad dimension when a dimension or the batch is zero,
// negative, or so large that an index or a buffer size would overflow (int GEMM dimensions).
void validate_mlp_shape(const MlpShape& shape, std::int64_t batch);

// Where each tensor sits in the flat parameter vector; gradients and Adam moments share the layout,
// so the optimizer and the gradient norm are single loops over `count` floats.
struct MlpParamLayout {
  std::size_t w1, b1, w2, b2, count;  // W1 (H,D), b1 (H), W2 (C,H), b2 (C)
};
MlpParamLayout mlp_param_layout(const MlpShape& shape);

// FLOPs of one step, 2·M·N·K per GEMM (bias, ReLU, softmax and the optimizer are not counted).
double mlp_forward_flops(const MlpShape& shape, std::int64_t batch);
double mlp_train_flops(const MlpShape& shape, std::int64_t batch);  // forward + dW1 + dW2 + dh

// The scalars of a training run. On the GPU this struct lives in device memory, so a captured
// CUDA Graph reads the loss scale and the step count from there instead of from the host.
struct TrainScalars {
  float loss = 0;             // mean loss of the step; zeroed by mlp_begin_step
  float grad_norm_sq = 0;     // Σ g² of the (loss-scaled) gradients; zeroed by mlp_begin_step
  float grad_multiplier = 1;  // what the optimizer multiplies each gradient by: unscale × clip
  int skip = 0;               // 1: gradients overflowed, the optimizer leaves the weights alone
  float loss_scale = 1;       // fp16 dynamic loss scaling (GradScaler); 1 otherwise
  int good_steps = 0;         // steps since the scale last changed
  int skipped_steps = 0;      // steps skipped for overflow, in total
  int step = 0;               // optimizer steps taken (AdamW's t)
};

// What the GPU computes in: the GEMM inputs and activations; accumulation, gradients and the master
// weights stay fp32 (autocast's split). The CPU reference is fp32 only.
enum class Precision { fp32, bf16, fp16 };
const char* to_string(Precision precision);

enum class Optimizer { sgd, adamw };
const char* to_string(Optimizer optimizer);

struct OptimizerConfig {
  Optimizer kind = Optimizer::sgd;
  float lr = 0.1f;  // SGD; AdamW uses 1e-3 (make_optimizer_config)
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f,
        weight_decay = 0.01f;  // AdamW (PyTorch defaults)
  float max_grad_norm = 0;     // clip the global norm to this; 0 = no clipping
  bool dynamic_loss_scale =
      false;  // GradScaler: halve on overflow, double after growth_interval good steps
  int growth_interval = 2000;
};
OptimizerConfig make_optimizer_config(Optimizer kind, float max_grad_norm = 0);
// The global gradient norm is computed only when something reads it: clipping, or overflow
// detection for loss scaling. Plain SGD/AdamW steps skip that pass over the gradients, as PyTorch's
// do.
inline bool needs_grad_norm(const OptimizerConfig& c) {
  return c.max_grad_norm > 0 || c.dynamic_loss_scale;
}

// PyTorch's nn.Linear initialisation (uniform ±1/√fan_in), from a seed.
void mlp_init_params(float* params, const MlpShape& shape, std::uint64_t seed);

// A learnable synthetic data set: x uniform in [-1, 1), label = argmax of a seeded random linear
// teacher applied to x. x is (n, D), labels (n).
void make_synthetic_dataset(float* x, int* labels, std::int64_t n, const MlpShape& shape,
                            std::uint64_t seed);

// ---- layers (CPU) ----
// The forward layers are one GEMM each with the bias (and ReLU) as its epilogue (CpuGemm in
// kernels/cpu_gemm.h; mlp_forward). The GEMM layers below take the library last (OpenBLAS by
// default). scalars->loss += Σ_b −log softmax(logits_b)[label_b] / (B·accum_steps); dlogits (B,C) =
// (softmax − onehot) · loss_scale / (B·accum_steps)
void softmax_cross_entropy(TrainScalars* scalars, float* dlogits, const float* logits,
                           const int* labels, int accum_steps, int B, int C);
// dweight (OC,IC) += dout (B,OC)ᵀ · inp (B,IC); beta = 0 writes it over instead.
void matmul_backward_weight(float* dweight, const float* dout, const float* inp, int B, int IC,
                            int OC, CpuGemmLibrary library = CpuGemmLibrary::openblas,
                            float beta = 1.0f);
// dbias (N) += Σ_b dout (B,N)
void bias_backward(float* dbias, const float* dout, int B, int N);
// dinp (B,IC) = dout (B,OC) · weight (OC,IC)
void matmul_backward_input(float* dinp, const float* dout, const float* weight, int B, int IC,
                           int OC, CpuGemmLibrary library = CpuGemmLibrary::openblas);
// dact (n) = act > 0 ? dpre : 0 (dact may alias dpre)
void relu_backward(float* dact, const float* dpre, const float* act, std::int64_t n);
// scalars->grad_norm_sq += Σ g²
void grad_norm_squared(TrainScalars* scalars, const float* grads, std::int64_t n);
// Decides the step: skip on a non-finite norm, grad_multiplier = (1/loss_scale)·min(1, max/‖g‖),
// then adjusts the loss scale as GradScaler does and counts the step.
void prepare_update(TrainScalars* scalars, const OptimizerConfig& config);
void sgd_update(float* params, const float* grads, const TrainScalars* scalars,
                const OptimizerConfig& config, std::int64_t n);
// PyTorch's AdamW (decoupled weight decay, bias-corrected moments); t = scalars->step.
void adamw_update(float* params, float* m, float* v, const float* grads,
                  const TrainScalars* scalars, const OptimizerConfig& config, std::int64_t n);

// ---- the model (CPU) ----
// Activations of one micro-batch of B rows.
struct MlpActivations {
  float* act1;     // (B,H) relu(x·W1ᵀ + b1)
  float* logits;   // (B,C)
  float* dlogits;  // (B,C)
  float* dact1;    // (B,H)
};

// Owns every buffer of a CPU training run at batch B (the benchmarks and the tests use it).
struct MlpCpuModel {
  MlpCpuModel(const MlpShape& shape, int batch, std::uint64_t seed);
  MlpShape shape;
  int batch;
  std::vector<float> params, grads, m, v;  // layout: mlp_param_layout
  std::vector<float> act1, logits, dlogits, dact1;
  std::vector<float>
      grad_shares;  // the other threads' gradients in a batch-split step (mlp_train_step_fast)
  std::vector<double> thread_losses;  // each thread's sum of row losses there
  TrainScalars scalars;
  CpuGemmLibrary gemm_library =
      CpuGemmLibrary::openblas;  // runs every GEMM of its steps (plan_mlp_gemms)
  MlpActivations activations() {
    return {act1.data(), logits.data(), dlogits.data(), dact1.data()};
  }
};

// Zeroes the gradients and the step's loss and norm.
void mlp_begin_step(float* grads, TrainScalars* scalars, std::int64_t n_params);
// logits = W2·relu(W1·x + b1) + b2 for x (B,D).
void mlp_forward(const MlpActivations& a, const float* params, const float* x,
                 const MlpShape& shape, int B, CpuGemmLibrary gemms = CpuGemmLibrary::openblas);
// How a micro-batch's gradients reach grads: added (the twins' contract), or written over (the CPU
// step's first micro-batch, so that nothing zeroes the gradients first: a pass over all of them
// saved).
enum class GradWrite { accumulate, overwrite };
// Forward + backward of one micro-batch: grads += ∂(loss/accum_steps)/∂params (or =,
// GradWrite::overwrite), scalars->loss += loss/accum.
void mlp_forward_backward(float* grads, TrainScalars* scalars, const MlpActivations& a,
                          const float* params, const float* x, const int* labels, int accum_steps,
                          const MlpShape& shape, int B,
                          CpuGemmLibrary gemms = CpuGemmLibrary::openblas,
                          GradWrite write = GradWrite::accumulate);
// Norm (when needs_grad_norm), clip/unscale decision, then the SGD or AdamW update (m, v unused for
// SGD).
void mlp_optimizer_step(float* params, float* m, float* v, const float* grads,
                        TrainScalars* scalars, const OptimizerConfig& config,
                        std::int64_t n_params);

// Inference: model.logits for the first model.batch rows of x, on model.gemm_library (the weights
// are untouched).
void mlp_infer(MlpCpuModel& model, const float* x);

// Mean loss of the first model.batch rows of x, forward only (the weights and gradients are
// untouched).
float mlp_loss(MlpCpuModel& model, const float* x, const int* labels);

// One optimizer step on the CPU model: accum_steps micro-batches of model.batch rows taken in order
// from x (accum_steps·B, D) and labels, then the update. Returns the step's mean loss.
float mlp_train_step(MlpCpuModel& model, const float* x, const int* labels, int accum_steps,
                     const OptimizerConfig& config);

// The same step, faster where it can be: for plain SGD on one micro-batch with no clipping and no
// loss scaling, the update is folded into the weight-gradient GEMMs (W += −lr·dW through GEMM's
// beta = 1), so the gradients are never zeroed, stored or re-read — what a tuned CPU trainer does.
// For AdamW at batch 1 with no clipping and no loss scaling, W1's gradient (an outer product) is
// formed inside the update instead of being stored and re-read. On several threads at large batches
// it splits the batch over them (splits_batch_over_threads; either optimizer; model.grads then
// holds the step's gradient). Same weights as mlp_train_step up to float rounding order (tested);
// otherwise it is mlp_train_step. model.grads is scratch afterwards. CPU only: the GPU twin keeps
// the separate update kernels.
float mlp_train_step_fast(MlpCpuModel& model, const float* x, const int* labels, int accum_steps,
                          const OptimizerConfig& config);
// Chooses model.gemm_library by timing whole steps, as FFTW's planner times whole transforms: every
// GEMM of the step on one library, each available library in turn against OpenBLAS (runs_faster,
// `trials` trials of `step`, which must use model.gemm_library); the faster is kept. One library
// per step, not the fastest per GEMM: with two threads, mixing OpenBLAS's pthreads and oneDNN's
// OpenMP team in one step left each library's idle workers spinning on the cores the other needed
// (a mixed plan made 784-128-10 AdamW b1024 3.4× slower than either library alone), and a GEMM
// timed alone mispredicts it in a step. The model's weights, optimizer state and scalars are
// restored; returns the library and sets it.
CpuGemmLibrary plan_mlp_gemms(MlpCpuModel& model, const std::function<void()>& step,
                              int trials = 7);
// Whether a step asked to run on `threads` threads runs faster on one, timed the same way (`step`
// at 1 thread against `threads`, OpenMP's and OpenBLAS's counts set before each call); one is kept
// only when it is faster by kOneThreadMargin, so that a near-tie does not flip between processes.
// Why: a tiny step's threaded GEMV leaves half of W1 in the other core's cache, and the update that
// follows on this core then writes every one of those lines back across cores: 784-128-10 SGD at
// batch 1 takes 3-11x as long at 2 threads as at one (lab/records/cpu-baseline.md). The model's
// state and both thread counts are restored; returns 1 or `threads`.
inline constexpr double kOneThreadMargin = 0.1;
int plan_mlp_threads(MlpCpuModel& model, const std::function<void()>& step, int threads,
                     int trials = 7);

// Whether mlp_train_step_fast folds the update into the GEMMs for this step (else it is
// mlp_train_step).
bool sgd_folds_into_weight_gemm(const OptimizerConfig& config, int accum_steps);
// Whether mlp_train_step_fast forms W1's gradient inside the AdamW update for this step.
bool adamw_forms_w1_gradient_in_update(const OptimizerConfig& config, int accum_steps, int batch);
// Whether mlp_train_step_fast splits this step's batch over `threads` OpenMP threads (when its GEMM
// library runs alone on each thread of a team: gemm_runs_alone_in_team), as data parallelism over
// the cores — each thread forward and backward on its own rows, then the gradients summed in thread
// order and the update, each thread on a slice of the parameters. For one micro-batch with no
// clipping and no loss scaling, from 256 rows per thread, up to 2^18 parameters.
bool splits_batch_over_threads(const OptimizerConfig& config, int accum_steps, int batch,
                               std::int64_t n_params, int threads);

// Sizes above which the CPU step's own loops run on OpenMP threads: a fork costs microseconds, and
// idle workers spinning beside OpenBLAS's threads slow its GEMMs, so elementwise loops go parallel
// only when large (wide hidden layers). AdamW moves 28 bytes per parameter (4 arrays read, 3
// written), so its pass pays for a fork sooner: from 2^16 parameters, which takes in 784-128-10's
// 100k (at 2^18 it ran serially there; `ab`, two threads: b1 −34%, b64 −29%, b1024 −1.7%, b4096
// −0.9%). The results file's `threading` field prints these.
inline constexpr std::int64_t kCpuParallelLoopElements = std::int64_t{1} << 20;
inline constexpr std::int64_t kCpuParallelUpdateParams = std::int64_t{1} << 16;

}  // namespace offloadbench
