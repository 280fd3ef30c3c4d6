// MlpGpuModel: the buffers of one GPU training run and the step composed from the layer launchers
// in mlp.cu, in the same order as mlp_forward / mlp_forward_backward / mlp_optimizer_step on the
// CPU. Only enqueues work, so a whole step can be captured into a CUDA Graph.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "kernels/cuda/cublas_check.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_raii.h"
#include "kernels/mlp_gpu.h"

namespace offloadbench {

namespace {

constexpr std::size_t kCublasWorkspaceBytes =
    32u << 20;  // set explicitly: no allocation inside a capture

std::size_t element_bytes(Precision precision) { return precision == Precision::fp32 ? 4 : 2; }

// Calls f with a value of the compute type, so the template helpers below see T.
template <typename F>
void with_compute_type(Precision precision, F&& f) {
  switch (precision) {
    case Precision::fp32:
      return f(float{});
    case Precision::bf16:
      return f(__nv_bfloat16{});
    case Precision::fp16:
      return f(__half{});
  }
}

}  // namespace

struct MlpGpuModel::Buffers {
  DeviceBuffer workspace;  // declared before the handle, so the handle goes first
  CublasHandle cublas;
  cudaStream_t cublas_stream = nullptr;  // the stream the handle is bound to
  DeviceBuffer params, grads, m, v;      // fp32, mlp_param_layout
  DeviceBuffer params_compute;           // the weights in the compute type (unused for fp32)
  DeviceBuffer x_compute;                // (B,D) input in the compute type (unused for fp32)
  DeviceBuffer pre1, act1, logits, dlogits, dpre1, dact1;
  DeviceBuffer scalars;  // one TrainScalars
};

std::size_t MlpGpuModel::device_bytes(const MlpShape& s, int batch, Precision precision) {
  const std::size_t n = mlp_param_layout(s).count, e = element_bytes(precision);
  const std::size_t bh = static_cast<std::size_t>(batch * s.hidden),
                    bc = static_cast<std::size_t>(batch * s.classes);
  std::size_t bytes = kCublasWorkspaceBytes + 4 * n * 4 + sizeof(TrainScalars);
  if (precision != Precision::fp32) bytes += n * e + static_cast<std::size_t>(batch * s.inputs) * e;
  bytes += bh * (4 + e + 4 + e) + bc * (4 + e);
  return bytes;
}

MlpGpuModel::MlpGpuModel(const MlpShape& s, int batch, Precision precision,
                         const std::vector<float>& host_params)
    : shape_(s), batch_(batch), precision_(precision) {
  validate_mlp_shape(s, batch);
  b_ = std::make_unique<Buffers>();
  const std::size_t n = mlp_param_layout(s).count, e = element_bytes(precision);
  if (host_params.size() != n)
    throw std::invalid_argument(fmt::format("mlp: {} parameters given, shape {} has {}",
                                            host_params.size(), to_string(s), n));
  const std::size_t bh = static_cast<std::size_t>(batch * s.hidden),
                    bc = static_cast<std::size_t>(batch * s.classes);
  b_->workspace = DeviceBuffer(kCublasWorkspaceBytes);
  CUBLAS_CHECK(cublasSetWorkspace(b_->cublas.get(), b_->workspace.data(), kCublasWorkspaceBytes));
  b_->params = DeviceBuffer(n * 4);
  b_->grads = DeviceBuffer(n * 4);
  b_->m = DeviceBuffer(n * 4);
  b_->v = DeviceBuffer(n * 4);
  if (precision != Precision::fp32) {
    b_->params_compute = DeviceBuffer(n * e);
    b_->x_compute = DeviceBuffer(static_cast<std::size_t>(batch * s.inputs) * e);
  }
  b_->pre1 = DeviceBuffer(bh * 4);
  b_->act1 = DeviceBuffer(bh * e);
  b_->dpre1 = DeviceBuffer(bh * 4);
  b_->dact1 = DeviceBuffer(bh * e);
  b_->logits = DeviceBuffer(bc * 4);
  b_->dlogits = DeviceBuffer(bc * e);
  b_->scalars = DeviceBuffer(sizeof(TrainScalars));
  reset(host_params, TrainScalars{});
}

void MlpGpuModel::reset(const std::vector<float>& host_params, const TrainScalars& scalars) {
  const std::size_t n = mlp_param_layout(shape_).count;
  if (host_params.size() != n)
    throw std::invalid_argument(fmt::format("mlp: {} parameters given, shape {} has {}",
                                            host_params.size(), to_string(shape_), n));
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(b_->params.data(), host_params.data(), n * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(b_->grads.data(), 0, n * 4));
  CUDA_CHECK(cudaMemset(b_->m.data(), 0, n * 4));
  CUDA_CHECK(cudaMemset(b_->v.data(), 0, n * 4));
  set_scalars(scalars);
  with_compute_type(precision_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, float>) {
      convert_to<T>(b_->params_compute.as<T>(), b_->params.as<float>(),
                    static_cast<std::int64_t>(n), nullptr);
    }
  });
  CUDA_CHECK(cudaDeviceSynchronize());
}

MlpGpuModel::~MlpGpuModel() = default;

// cublasSetStream also resets the handle's workspace to cuBLAS's own pool, which may allocate
// inside a CUDA Graph capture: bind only when the stream changes, and give the workspace back each
// time.
cublasHandle_t MlpGpuModel::cublas_on(cudaStream_t stream) {
  if (stream != b_->cublas_stream) {
    CUBLAS_CHECK(cublasSetStream(b_->cublas.get(), stream));
    CUBLAS_CHECK(cublasSetWorkspace(b_->cublas.get(), b_->workspace.data(), kCublasWorkspaceBytes));
    b_->cublas_stream = stream;
  }
  return b_->cublas.get();
}

namespace {

// The weights and input the GEMMs read: the fp32 buffers themselves, or their compute-type copies.
template <typename T>
const T* compute_weights(const DeviceBuffer& params, const DeviceBuffer& params_compute) {
  if constexpr (std::is_same_v<T, float>)
    return params.as<float>();
  else
    return params_compute.as<T>();
}

template <typename T>
const T* compute_input(const float* x, const DeviceBuffer& x_compute, std::int64_t n,
                       cudaStream_t stream) {
  if constexpr (std::is_same_v<T, float>) {
    (void)x_compute, (void)n, (void)stream;
    return x;
  } else {
    convert_to<T>(x_compute.as<T>(), x, n, stream);
    return x_compute.as<T>();
  }
}

}  // namespace

void MlpGpuModel::begin_step(cudaStream_t stream) {
  mlp_begin_step(b_->grads.as<float>(), b_->scalars.as<TrainScalars>(),
                 static_cast<std::int64_t>(mlp_param_layout(shape_).count), stream);
}

void MlpGpuModel::forward(const float* x, cudaStream_t stream) {
  const auto l = mlp_param_layout(shape_);
  const int B = batch_, D = static_cast<int>(shape_.inputs), H = static_cast<int>(shape_.hidden),
            C = static_cast<int>(shape_.classes);
  with_compute_type(precision_, [&](auto tag) {
    using T = decltype(tag);
    const T* w = compute_weights<T>(b_->params, b_->params_compute);
    const T* xin = compute_input<T>(x, b_->x_compute, std::int64_t{B} * D, stream);
    const float* params = b_->params.as<float>();
    matmul_forward<T>(b_->pre1.as<float>(), xin, w + l.w1, B, D, H, cublas_on(stream), stream);
    bias_relu_forward<T>(b_->act1.as<T>(), b_->pre1.as<float>(), params + l.b1, B, H, stream);
    matmul_forward<T>(b_->logits.as<float>(), b_->act1.as<T>(), w + l.w2, B, H, C,
                      cublas_on(stream), stream);
    bias_add_forward(b_->logits.as<float>(), params + l.b2, B, C, stream);
  });
}

void MlpGpuModel::forward_backward(const float* x, const int* labels, int accum_steps,
                                   cudaStream_t stream) {
  const auto l = mlp_param_layout(shape_);
  const int B = batch_, D = static_cast<int>(shape_.inputs), H = static_cast<int>(shape_.hidden),
            C = static_cast<int>(shape_.classes);
  forward(x, stream);  // leaves the compute-type input in x_compute
  with_compute_type(precision_, [&](auto tag) {
    using T = decltype(tag);
    const T* w = compute_weights<T>(b_->params, b_->params_compute);
    const T* xin = std::is_same_v<T, float> ? reinterpret_cast<const T*>(x) : b_->x_compute.as<T>();
    float* grads = b_->grads.as<float>();
    auto* handle = cublas_on(stream);
    softmax_cross_entropy<T>(b_->scalars.as<TrainScalars>(), b_->dlogits.as<T>(),
                             b_->logits.as<float>(), labels, accum_steps, B, C, stream);
    matmul_backward_weight<T>(grads + l.w2, b_->dlogits.as<T>(), b_->act1.as<T>(), B, H, C, handle,
                              stream);
    bias_backward<T>(grads + l.b2, b_->dlogits.as<T>(), B, C, stream);
    matmul_backward_input<T>(b_->dpre1.as<float>(), b_->dlogits.as<T>(), w + l.w2, B, H, C, handle,
                             stream);
    relu_backward<T>(b_->dact1.as<T>(), b_->dpre1.as<float>(), b_->act1.as<T>(),
                     std::int64_t{B} * H, stream);
    matmul_backward_weight<T>(grads + l.w1, b_->dact1.as<T>(), xin, B, D, H, handle, stream);
    bias_backward<T>(grads + l.b1, b_->dact1.as<T>(), B, H, stream);
  });
}

void MlpGpuModel::optimizer_step(const OptimizerConfig& config, cudaStream_t stream) {
  const auto n = static_cast<std::int64_t>(mlp_param_layout(shape_).count);
  auto* scalars = b_->scalars.as<TrainScalars>();
  if (needs_grad_norm(config)) grad_norm_squared(scalars, b_->grads.as<float>(), n, stream);
  prepare_update(scalars, config, stream);
  if (config.kind == Optimizer::sgd)
    sgd_update(b_->params.as<float>(), b_->grads.as<float>(), scalars, config, n, stream);
  else
    adamw_update(b_->params.as<float>(), b_->m.as<float>(), b_->v.as<float>(),
                 b_->grads.as<float>(), scalars, config, n, stream);
  with_compute_type(precision_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, float>)
      convert_to<T>(b_->params_compute.as<T>(), b_->params.as<float>(), n, stream);
  });
}

void MlpGpuModel::train_step(const float* x, const int* labels, const OptimizerConfig& config,
                             cudaStream_t stream) {
  begin_step(stream);
  forward_backward(x, labels, 1, stream);
  optimizer_step(config, stream);
}

float MlpGpuModel::loss(const float* x, const int* labels, cudaStream_t stream) {
  begin_step(stream);
  forward_backward(x, labels, 1, stream);
  return scalars().loss;
}

namespace {
std::vector<float> read_back(const DeviceBuffer& buffer, std::size_t count) {
  CUDA_CHECK(cudaDeviceSynchronize());  // the model's streams do not synchronize with cudaMemcpy's
  std::vector<float> host(count);
  CUDA_CHECK(cudaMemcpy(host.data(), buffer.data(), count * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}
}  // namespace

std::vector<float> MlpGpuModel::params() const {
  return read_back(b_->params, mlp_param_layout(shape_).count);
}
std::vector<float> MlpGpuModel::grads() const {
  return read_back(b_->grads, mlp_param_layout(shape_).count);
}
std::vector<float> MlpGpuModel::logits() const {
  return read_back(b_->logits, static_cast<std::size_t>(batch_ * shape_.classes));
}

TrainScalars MlpGpuModel::scalars() const {
  CUDA_CHECK(cudaDeviceSynchronize());
  TrainScalars s;
  CUDA_CHECK(cudaMemcpy(&s, b_->scalars.data(), sizeof s, cudaMemcpyDeviceToHost));
  return s;
}

void MlpGpuModel::set_scalars(const TrainScalars& s) {
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(b_->scalars.data(), &s, sizeof s, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());  // from pageable memory it returns once staged; the model's
                                        // streams won't wait
}

}  // namespace offloadbench
