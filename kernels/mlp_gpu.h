// The MLP's CUDA twins (kernels/mlp.cu) of the CPU reference in kernels/mlp.h: the same names and
// argument order with the cuBLAS handle and the stream last. T is the compute type (float,
// __nv_bfloat16, __half) of activations and weight copies; GEMMs accumulate in fp32 and write fp32,
// gradients and master weights are fp32. Built only with CUDA.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/mlp.h"

namespace offloadbench {

// ---- layers (GPU); semantics and shapes as in kernels/mlp.h ----
template <typename T>
void matmul_forward(float* out, const T* inp, const T* weight, int B, int IC, int OC,
                    cublasHandle_t handle, cudaStream_t stream);
template <typename T>
void bias_relu_forward(T* act, const float* pre, const float* bias, int B, int N,
                       cudaStream_t stream);
void bias_add_forward(float* out, const float* bias, int B, int N, cudaStream_t stream);
template <typename T>
void softmax_cross_entropy(TrainScalars* scalars, T* dlogits, const float* logits,
                           const int* labels, int accum_steps, int B, int C, cudaStream_t stream);
template <typename T>
void matmul_backward_weight(float* dweight, const T* dout, const T* inp, int B, int IC, int OC,
                            cublasHandle_t handle, cudaStream_t stream);
template <typename T>
void bias_backward(float* dbias, const T* dout, int B, int N, cudaStream_t stream);
template <typename T>
void matmul_backward_input(float* dinp, const T* dout, const T* weight, int B, int IC, int OC,
                           cublasHandle_t handle, cudaStream_t stream);
template <typename T>
void relu_backward(T* dact, const float* dpre, const T* act, std::int64_t n, cudaStream_t stream);
void grad_norm_squared(TrainScalars* scalars, const float* grads, std::int64_t n,
                       cudaStream_t stream);
void prepare_update(TrainScalars* scalars, const OptimizerConfig& config, cudaStream_t stream);
void sgd_update(float* params, const float* grads, const TrainScalars* scalars,
                const OptimizerConfig& config, std::int64_t n, cudaStream_t stream);
void adamw_update(float* params, float* m, float* v, const float* grads,
                  const TrainScalars* scalars, const OptimizerConfig& config, std::int64_t n,
                  cudaStream_t stream);
void mlp_begin_step(float* grads, TrainScalars* scalars, std::int64_t n_params,
                    cudaStream_t stream);
// out (n) = in rounded to T: the compute copy of the master weights, or of an fp32 input batch.
template <typename T>
void convert_to(T* out, const float* in, std::int64_t n, cudaStream_t stream);

// ---- the model (GPU) ----
// Every device buffer of one training run at batch B, on the current device. All methods only
// enqueue work on `stream` (so a step can be captured into a CUDA Graph) except the read-backs.
class MlpGpuModel {
 public:
  MlpGpuModel(const MlpShape& shape, int batch, Precision precision,
              const std::vector<float>& host_params);
  ~MlpGpuModel();
  MlpGpuModel(const MlpGpuModel&) = delete;
  MlpGpuModel& operator=(const MlpGpuModel&) = delete;

  // Device bytes a model of this shape allocates (parameters, moments, activations, cuBLAS
  // workspace).
  static std::size_t device_bytes(const MlpShape& shape, int batch, Precision precision);

  // x (B,D) fp32 and labels (B) are device pointers.
  void begin_step(cudaStream_t stream);
  void forward(const float* x, cudaStream_t stream);
  void forward_backward(const float* x, const int* labels, int accum_steps, cudaStream_t stream);
  void optimizer_step(const OptimizerConfig& config, cudaStream_t stream);
  void train_step(const float* x, const int* labels, const OptimizerConfig& config,
                  cudaStream_t stream);

  // Mean loss of x's first B rows with the current weights (forward only; zeroes the gradients).
  // Synchronizes.
  float loss(const float* x, const int* labels, cudaStream_t stream);

  // Read-backs: synchronize the device first.
  std::vector<float> params() const;
  std::vector<float> grads() const;
  std::vector<float> logits() const;
  TrainScalars scalars() const;
  void set_scalars(const TrainScalars& scalars);
  // Back to `host_params`, zero gradients and moments, and `scalars`: the state a new model starts
  // in, at the same device addresses (a captured graph keeps working). Synchronizes.
  void reset(const std::vector<float>& host_params, const TrainScalars& scalars);
  const MlpShape& shape() const { return shape_; }
  int batch() const { return batch_; }
  Precision precision() const { return precision_; }

 private:
  struct Buffers;
  // The model's cuBLAS handle bound to `stream` (with its own workspace kept).
  cublasHandle_t cublas_on(cudaStream_t stream);
  MlpShape shape_;
  int batch_;
  Precision precision_;
  std::unique_ptr<Buffers> b_;
};

}  // namespace offloadbench
