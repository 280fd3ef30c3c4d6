// How closely a GPU step must match the CPU reference (kernels/mlp.h) on the same weights and batch.
// fp32 differs only in summation order (cuBLAS vs OpenBLAS): the loss within 1e-4 relative, each
// gradient within 1e-4·|ref| + 1e-5·max|ref| plus its ReLU-tie allowance (below). bf16 (unit roundoff
// 2⁻⁸) and fp16 (2⁻¹¹) round every GEMM input and flip ReLUs near zero by the hundred, so they are held
// to a normwise bound: ‖got − ref‖ ≤ rtol·‖ref‖ with rtol 6e-2 (bf16, ~15 unit roundoffs) and 5e-3
// (fp16, ~10), and the loss within 2e-2 and 5e-3 relative. The step rounds x, W1, h, W2, dlogits and
// dh before their GEMMs, and the ReLU flips add whole rows: on an H100, 784-128-10 at batch 64 gave
// 0.039 for bf16 (10 roundoffs), above the 3e-2 first guessed, with its 200-step loss curve on the CPU's.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "kernels/mlp.h"

namespace offloadbench {

double mlp_loss_rtol(Precision precision);

// "" when the gradients (or logits) match under the rule above, else what differs and where.
// allowance (fp32 only; n values or null) is added to each element's bound.
std::string mlp_gradient_mismatch(const float* got, const float* ref, std::size_t n, Precision precision,
                                  const float* allowance = nullptr);

// Why fp32 needs an allowance: a hidden unit whose pre-activation x_b·W1_h + b1_h lies within fp32
// rounding of zero may pass the ReLU on one side and not on the other. Then its whole row of dW1
// differs by dpre_bh·x_b and its db1 by dpre_bh (dpre = dlogits·W2, before the mask), far beyond any
// elementwise rtol, though both sides computed correctly. With the benchmark's seeds 12288-64-10 has
// such units from batch 64 up (|pre| 3.4e-7 against a rounding scale of ~2e-6).
//
// Per parameter (mlp_param_layout order), how far a correct fp32 gradient may differ from the
// reference for that reason: for every (b, h) with |pre_bh| ≤ tie_width_bh, |dpre_bh|·|x_b| on W1's
// row h, |dpre_bh| on b1_h and |dlogits_b|·2·tie_width_bh on W2's column h; 0 elsewhere. tie_width is
// 8 × 2⁻²⁴·√D·‖x_b‖∞·‖W1_h‖₂, eight times a dot product's typical rounding error (an upper bound
// on √Σ(x_k·w_k)² stands in for the exact sum). x is (B, D), dlogits (B, C) as the reference's
// backward used them (scaled by 1/B).
struct ReluTieAllowance {
  std::vector<float> per_param;
  std::size_t ties = 0;  // (b, h) pairs within their tie width
};
ReluTieAllowance mlp_relu_tie_allowance(const float* params, const float* x, const float* dlogits,
                                        const MlpShape& shape, int B);

}  // namespace offloadbench
