// The MLP on the GPU: cuBLAS GEMMs (fp32 accumulation, no TF32) plus small kernels for what cuBLAS
// does not do — bias+ReLU, softmax cross-entropy with its gradient, bias gradients, the gradient
// norm, the optimizer — each the twin of the function with the same name in kernels/mlp_cpu.cpp.
// Row-major (B,N) tensors are column-major (N,B) to cuBLAS, hence the swapped operands below.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "kernels/cuda/cublas_check.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_raii.h"
#include "kernels/mlp_gpu.h"
#include "kernels/mlp_update_rule.h"

namespace offloadbench {

namespace {

constexpr int kThreads = 256;

int grid_for(std::int64_t n) {
  return static_cast<int>(std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, 4096));
}

template <typename T>
cudaDataType_t cuda_type();
template <>
cudaDataType_t cuda_type<float>() {
  return CUDA_R_32F;
}
template <>
cudaDataType_t cuda_type<__nv_bfloat16>() {
  return CUDA_R_16BF;
}
template <>
cudaDataType_t cuda_type<__half>() {
  return CUDA_R_16F;
}

__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline float to_float(__half v) { return __half2float(v); }
template <typename T>
__device__ T from_float(float v);
template <>
__device__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}
template <>
__device__ __half from_float<__half>(float v) {
  return __float2half(v);
}

__device__ inline float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ inline float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Sum over the block (blockDim.x == kThreads); the result is valid in thread 0.
__device__ inline float block_sum(float v) {
  __shared__ float partial[kThreads / 32];
  v = warp_sum(v);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0;
  if (threadIdx.x == 0)
    for (int w = 0; w < kThreads / 32; ++w) total += partial[w];
  return total;
}

// ---------------------------------------------------------------------------------------------
// CUDA kernels

template <typename T>
__global__ void convert_kernel(T* out, const float* in, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    out[i] = from_float<T>(in[i]);
}

template <typename T>
__global__ void bias_relu_forward_kernel(T* act, const float* pre, const float* bias, int B,
                                         int N) {
  const std::int64_t n = std::int64_t{B} * N;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    act[i] = from_float<T>(fmaxf(pre[i] + bias[i % N], 0.0f));
}

__global__ void bias_add_forward_kernel(float* out, const float* bias, int B, int N) {
  const std::int64_t n = std::int64_t{B} * N;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    out[i] += bias[i % N];
}

// One warp per row of logits (B,C); the block adds its rows' losses to scalars->loss at once.
template <typename T>
__global__ void softmax_cross_entropy_kernel(TrainScalars* scalars, T* dlogits, const float* logits,
                                             const int* labels, float row_weight, int B, int C) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = blockIdx.x * (kThreads / 32) + warp;
  float row_loss = 0;
  if (row < B) {
    const float* z = logits + std::int64_t{row} * C;
    T* dz = dlogits + std::int64_t{row} * C;
    float zmax = -INFINITY;
    for (int c = lane; c < C; c += 32) zmax = fmaxf(zmax, z[c]);
    zmax = warp_max(zmax);
    float sum = 0;
    for (int c = lane; c < C; c += 32) sum += expf(z[c] - zmax);
    sum = warp_sum(sum);
    const int label = labels[row];
    const float grad_weight = row_weight * scalars->loss_scale;
    const float inv_sum = 1.0f / sum;
    for (int c = lane; c < C; c += 32)
      dz[c] =
          from_float<T>((expf(z[c] - zmax) * inv_sum - (c == label ? 1.0f : 0.0f)) * grad_weight);
    row_loss = lane == 0 ? logf(sum) - (z[label] - zmax) : 0.0f;
  }
  const float total = block_sum(row_loss);
  if (threadIdx.x == 0) atomicAdd(&scalars->loss, total * row_weight);
}

// dbias (N) += Σ_b dout (B,N): a block is 32 columns × 8 row lanes over a slice of rows_per_block
// rows.
template <typename T>
__global__ void bias_backward_kernel(float* dbias, const T* dout, int B, int N,
                                     int rows_per_block) {
  __shared__ float partial[8][33];
  const int col = blockIdx.x * 32 + threadIdx.x;
  const int row_begin = blockIdx.y * rows_per_block;
  const int row_end = min(B, row_begin + rows_per_block);
  float sum = 0;
  if (col < N)
    for (int r = row_begin + threadIdx.y; r < row_end; r += 8)
      sum += to_float(dout[std::int64_t{r} * N + col]);
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && col < N) {
    float total = 0;
    for (int y = 0; y < 8; ++y) total += partial[y][threadIdx.x];
    atomicAdd(&dbias[col], total);
  }
}

template <typename T>
__global__ void relu_backward_kernel(T* dact, const float* dpre, const T* act, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    dact[i] = to_float(act[i]) > 0.0f ? from_float<T>(dpre[i]) : from_float<T>(0.0f);
}

__global__ void grad_norm_squared_kernel(TrainScalars* scalars, const float* grads,
                                         std::int64_t n) {
  float sum = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    sum += grads[i] * grads[i];
  const float total = block_sum(sum);
  if (threadIdx.x == 0) atomicAdd(&scalars->grad_norm_sq, total);
}

// One thread: the same rule as prepare_update in mlp_cpu.cpp (kernels/mlp_update_rule.h).
__global__ void prepare_update_kernel(TrainScalars* s, OptimizerConfig config) {
  prepare_update_rule(s, config);
}

__global__ void sgd_update_kernel(float* params, const float* grads, const TrainScalars* s,
                                  float lr, std::int64_t n) {
  if (s->skip) return;
  const float step = lr * s->grad_multiplier;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    params[i] -= step * grads[i];
}

__global__ void adamw_update_kernel(float* params, float* m, float* v, const float* grads,
                                    const TrainScalars* s, OptimizerConfig c, std::int64_t n) {
  if (s->skip) return;
  const AdamwCoefficients k = adamw_coefficients(s, c);
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    adamw_element(params[i], m[i], v[i], grads[i], k);
}

__global__ void begin_step_kernel(TrainScalars* s) {
  s->loss = 0;
  s->grad_norm_sq = 0;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// kernel launchers

namespace {
// The caller binds the handle to the stream once (MlpGpuModel::cublas_on): setting it here, per
// GEMM, would reset the handle's workspace (see there).
void require_bound(cublasHandle_t handle, cudaStream_t stream) {
  cudaStream_t bound = nullptr;
  CUBLAS_CHECK(cublasGetStream(handle, &bound));
  if (bound != stream)
    throw std::logic_error("mlp: cuBLAS handle is bound to another stream than the launch's");
}
}  // namespace

template <typename T>
void matmul_forward(float* out, const T* inp, const T* weight, int B, int IC, int OC,
                    cublasHandle_t handle, cudaStream_t stream) {
  // outᵀ (OC,B) = W (OC,IC) · inpᵀ (IC,B); W is stored as Wᵀ column-major, hence OP_T.
  const float alpha = 1.0f, beta = 0.0f;
  require_bound(handle, stream);
  CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, OC, B, IC, &alpha, weight,
                            cuda_type<T>(), IC, inp, cuda_type<T>(), IC, &beta, out, CUDA_R_32F, OC,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

template <typename T>
void bias_relu_forward(T* act, const float* pre, const float* bias, int B, int N,
                       cudaStream_t stream) {
  bias_relu_forward_kernel<T>
      <<<grid_for(std::int64_t{B} * N), kThreads, 0, stream>>>(act, pre, bias, B, N);
  CUDA_CHECK(cudaGetLastError());
}

void bias_add_forward(float* out, const float* bias, int B, int N, cudaStream_t stream) {
  bias_add_forward_kernel<<<grid_for(std::int64_t{B} * N), kThreads, 0, stream>>>(out, bias, B, N);
  CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void softmax_cross_entropy(TrainScalars* scalars, T* dlogits, const float* logits,
                           const int* labels, int accum_steps, int B, int C, cudaStream_t stream) {
  const float row_weight = 1.0f / (static_cast<float>(B) * static_cast<float>(accum_steps));
  const int rows_per_block = kThreads / 32;
  softmax_cross_entropy_kernel<T>
      <<<(B + rows_per_block - 1) / rows_per_block, kThreads, 0, stream>>>(
          scalars, dlogits, logits, labels, row_weight, B, C);
  CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void matmul_backward_weight(float* dweight, const T* dout, const T* inp, int B, int IC, int OC,
                            cublasHandle_t handle, cudaStream_t stream) {
  // dWᵀ (IC,OC) += inpᵀ (IC,B) · dout (B,OC); dout is stored as doutᵀ column-major, hence OP_T.
  const float alpha = 1.0f, beta = 1.0f;
  require_bound(handle, stream);
  CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_T, IC, OC, B, &alpha, inp,
                            cuda_type<T>(), IC, dout, cuda_type<T>(), OC, &beta, dweight,
                            CUDA_R_32F, IC, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

template <typename T>
void bias_backward(float* dbias, const T* dout, int B, int N, cudaStream_t stream) {
  const int rows_per_block = std::max(256, (B + 1023) / 1024);
  const dim3 grid((N + 31) / 32, (B + rows_per_block - 1) / rows_per_block);
  bias_backward_kernel<T><<<grid, dim3(32, 8), 0, stream>>>(dbias, dout, B, N, rows_per_block);
  CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void matmul_backward_input(float* dinp, const T* dout, const T* weight, int B, int IC, int OC,
                           cublasHandle_t handle, cudaStream_t stream) {
  // dinpᵀ (IC,B) = Wᵀ (IC,OC) · doutᵀ (OC,B): both already column-major as stored.
  const float alpha = 1.0f, beta = 0.0f;
  require_bound(handle, stream);
  CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, IC, B, OC, &alpha, weight,
                            cuda_type<T>(), IC, dout, cuda_type<T>(), OC, &beta, dinp, CUDA_R_32F,
                            IC, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

template <typename T>
void relu_backward(T* dact, const float* dpre, const T* act, std::int64_t n, cudaStream_t stream) {
  relu_backward_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(dact, dpre, act, n);
  CUDA_CHECK(cudaGetLastError());
}

void grad_norm_squared(TrainScalars* scalars, const float* grads, std::int64_t n,
                       cudaStream_t stream) {
  grad_norm_squared_kernel<<<grid_for(n), kThreads, 0, stream>>>(scalars, grads, n);
  CUDA_CHECK(cudaGetLastError());
}

void prepare_update(TrainScalars* scalars, const OptimizerConfig& config, cudaStream_t stream) {
  prepare_update_kernel<<<1, 1, 0, stream>>>(scalars, config);
  CUDA_CHECK(cudaGetLastError());
}

void sgd_update(float* params, const float* grads, const TrainScalars* scalars,
                const OptimizerConfig& config, std::int64_t n, cudaStream_t stream) {
  sgd_update_kernel<<<grid_for(n), kThreads, 0, stream>>>(params, grads, scalars, config.lr, n);
  CUDA_CHECK(cudaGetLastError());
}

void adamw_update(float* params, float* m, float* v, const float* grads,
                  const TrainScalars* scalars, const OptimizerConfig& config, std::int64_t n,
                  cudaStream_t stream) {
  adamw_update_kernel<<<grid_for(n), kThreads, 0, stream>>>(params, m, v, grads, scalars, config,
                                                            n);
  CUDA_CHECK(cudaGetLastError());
}

void mlp_begin_step(float* grads, TrainScalars* scalars, std::int64_t n_params,
                    cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(grads, 0, static_cast<std::size_t>(n_params) * sizeof(float), stream));
  begin_step_kernel<<<1, 1, 0, stream>>>(scalars);
  CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void convert_to(T* out, const float* in, std::int64_t n, cudaStream_t stream) {
  convert_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(out, in, n);
  CUDA_CHECK(cudaGetLastError());
}

#define OFFLOADBENCH_MLP_INSTANTIATE(T)                                                         \
  template void matmul_forward<T>(float*, const T*, const T*, int, int, int, cublasHandle_t,    \
                                  cudaStream_t);                                                \
  template void bias_relu_forward<T>(T*, const float*, const float*, int, int, cudaStream_t);   \
  template void softmax_cross_entropy<T>(TrainScalars*, T*, const float*, const int*, int, int, \
                                         int, cudaStream_t);                                    \
  template void matmul_backward_weight<T>(float*, const T*, const T*, int, int, int,            \
                                          cublasHandle_t, cudaStream_t);                        \
  template void bias_backward<T>(float*, const T*, int, int, cudaStream_t);                     \
  template void matmul_backward_input<T>(float*, const T*, const T*, int, int, int,             \
                                         cublasHandle_t, cudaStream_t);                         \
  template void relu_backward<T>(T*, const float*, const T*, std::int64_t, cudaStream_t);       \
  template void convert_to<T>(T*, const float*, std::int64_t, cudaStream_t);
OFFLOADBENCH_MLP_INSTANTIATE(float)
OFFLOADBENCH_MLP_INSTANTIATE(__nv_bfloat16)
OFFLOADBENCH_MLP_INSTANTIATE(__half)
#undef OFFLOADBENCH_MLP_INSTANTIATE

}  // namespace offloadbench
