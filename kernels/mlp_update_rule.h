// The optimizer's rules, shared by the CPU reference (mlp_cpu.cpp) and the CUDA kernels (mlp.cu),
// so the twins cannot drift. prepare_update_rule decides the step: skip it when the gradients
// overflowed (and halve the loss scale), else unscale and clip them, count the step, and grow the
// scale after growth_interval good steps (GradScaler's rule). adamw_element is AdamW's per-element
// update.
#pragma once
#include <cmath>

#include "kernels/mlp.h"

#ifdef __CUDACC__
#define OFFLOADBENCH_HOST_DEVICE __host__ __device__
#else
#define OFFLOADBENCH_HOST_DEVICE
#endif

namespace offloadbench {

OFFLOADBENCH_HOST_DEVICE inline void prepare_update_rule(TrainScalars* s,
                                                         const OptimizerConfig& config) {
  const bool finite = std::isfinite(s->grad_norm_sq);
  const float unscale = 1.0f / s->loss_scale;
  const float norm = std::sqrt(s->grad_norm_sq) * unscale;
  float clip = 1.0f;
  if (config.max_grad_norm > 0 && norm > config.max_grad_norm)
    clip = config.max_grad_norm / (norm + 1e-6f);
  s->skip = finite ? 0 : 1;
  s->grad_multiplier = unscale * clip;
  if (!finite) {
    ++s->skipped_steps;
    if (config.dynamic_loss_scale) s->loss_scale *= 0.5f, s->good_steps = 0;
    return;
  }
  ++s->step;
  if (config.dynamic_loss_scale && ++s->good_steps >= config.growth_interval)
    s->loss_scale *= 2.0f, s->good_steps = 0;
}

// What one AdamW step multiplies by, computed once per step (t = s->step, after
// prepare_update_rule).
struct AdamwCoefficients {
  float beta1, beta2, lr, eps;
  float inv_correction1, inv_correction2;  // 1 / (1 − βᵗ), the bias corrections
  float decay;                             // 1 − lr·weight_decay (decoupled weight decay)
  float grad_multiplier;                   // unscale × clip
};

OFFLOADBENCH_HOST_DEVICE inline AdamwCoefficients adamw_coefficients(const TrainScalars* s,
                                                                     const OptimizerConfig& c) {
  const float t = static_cast<float>(s->step);
  return {c.beta1,
          c.beta2,
          c.lr,
          c.eps,
          1.0f / (1.0f - std::pow(c.beta1, t)),
          1.0f / (1.0f - std::pow(c.beta2, t)),
          1.0f - c.lr * c.weight_decay,
          s->grad_multiplier};
}

// PyTorch's AdamW on one element: moments updated in place, then the decayed parameter minus the
// step.
OFFLOADBENCH_HOST_DEVICE inline void adamw_element(float& param, float& m, float& v, float grad,
                                                   const AdamwCoefficients& k) {
  const float g = grad * k.grad_multiplier;
  const float m_new = k.beta1 * m + (1.0f - k.beta1) * g;
  const float v_new = k.beta2 * v + (1.0f - k.beta2) * g * g;
  m = m_new;
  v = v_new;
  param = param * k.decay -
          k.lr * (m_new * k.inv_correction1) / (std::sqrt(v_new * k.inv_correction2) + k.eps);
}

}  // namespace offloadbench
