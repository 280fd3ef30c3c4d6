// The optimizer's step decision, shared by the CPU reference (prepare_update in mlp_cpu.cpp) and the
// one-thread GPU kernel (prepare_update_kernel in mlp.cu), so the twins cannot drift: skip the step
// when the gradients overflowed (and halve the loss scale), else unscale and clip them, count the
// step, and grow the scale after growth_interval good steps (GradScaler's rule).
#pragma once
#include <cmath>

#include "kernels/mlp.h"

#ifdef __CUDACC__
#define OFFLOADBENCH_HOST_DEVICE __host__ __device__
#else
#define OFFLOADBENCH_HOST_DEVICE
#endif

namespace offloadbench {

OFFLOADBENCH_HOST_DEVICE inline void prepare_update_rule(TrainScalars* s, const OptimizerConfig& config) {
  const bool finite = std::isfinite(s->grad_norm_sq);
  const float unscale = 1.0f / s->loss_scale;
  const float norm = std::sqrt(s->grad_norm_sq) * unscale;
  float clip = 1.0f;
  if (config.max_grad_norm > 0 && norm > config.max_grad_norm) clip = config.max_grad_norm / (norm + 1e-6f);
  s->skip = finite ? 0 : 1;
  s->grad_multiplier = unscale * clip;
  if (!finite) {
    ++s->skipped_steps;
    if (config.dynamic_loss_scale) s->loss_scale *= 0.5f, s->good_steps = 0;
    return;
  }
  ++s->step;
  if (config.dynamic_loss_scale && ++s->good_steps >= config.growth_interval) s->loss_scale *= 2.0f, s->good_steps = 0;
}

}  // namespace offloadbench
