// How closely a GPU step must match the CPU reference (kernels/mlp.h) on the same weights and
// batch. In bf16 and fp16 the GPU multiplies x, W1 and W2 rounded to that type (biases stay fp32),
// so the reference is given the same rounded values (round_mlp_inputs): what is checked is the
// GPU's arithmetic, not how far rounding the inputs moves the answer. That move is large and grows
// with the batch: one rounding of W2 perturbs every row's gradient alike while the rows' gradients
// cancel in the mean, so against unrounded inputs fp16 at batch 1024 was 0.0094 of the norm off on
// an H100 (and 0.0106 in a NumPy emulation) against 0.0004 at batch 64; with the rounded inputs the
// emulation stays within 0.0011 (fp16) and 0.0023 (bf16) from batch 1 to 4096. fp32 differs only in
// summation order (cuBLAS vs OpenBLAS): the loss within 1e-4 relative, each gradient within
// 1e-4·|ref| + 1e-5·max|ref| plus its ReLU-tie allowance (below). bf16 (unit roundoff 2⁻⁸) and fp16
// (2⁻¹¹) also round h, dlogits and dh, and flip ReLUs near zero, so they are held to a normwise
// bound: ‖got − ref‖ ≤ rtol·‖ref‖ with rtol 6e-2 (bf16) and 5e-3 (fp16), and the loss within 2e-2
// and 5e-3 relative. (The bounds were set against unrounded inputs: 0.039 for bf16 at batch 64 on
// an H100. The rows' check_grad_difference counters say how much room they leave now.)
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "kernels/mlp.h"

namespace offloadbench {

double mlp_loss_rtol(Precision precision);

// `value` as the GPU stores it in `precision`: rounded to nearest, ties to even; fp16 with its
// subnormals, and ±inf from 65520 up; NaN and inf unchanged; fp32 as it is.
float round_to_precision(float value, Precision precision);

// The reference's inputs for a GPU step in `precision`: the first x_count values of x and the
// weights W1 and W2 of params rounded as the GPU rounds them; the biases stay fp32, as the GPU
// reads them.
void round_mlp_inputs(float* params, float* x, std::size_t x_count, const MlpShape& shape,
                      Precision precision);

// "" when the gradients (or logits) match under the rule above, else what differs and where.
// allowance (fp32 only; n values or null) is added to each element's bound.
std::string mlp_gradient_mismatch(const float* got, const float* ref, std::size_t n,
                                  Precision precision, const float* allowance = nullptr);

// Why fp32 needs an allowance: a hidden unit whose pre-activation x_b·W1_h + b1_h lies within fp32
// rounding of zero may pass the ReLU on one side and not on the other. Then its whole row of dW1
// differs by dpre_bh·x_b and its db1 by dpre_bh (dpre = dlogits·W2, before the mask), far beyond
// any elementwise rtol, though both sides computed correctly. With the benchmark's seeds
// 12288-64-10 has such units from batch 64 up (|pre| 3.4e-7 against a rounding scale of ~2e-6).
//
// Per parameter (mlp_param_layout order), how far a correct fp32 gradient may differ from the
// reference for that reason: for every (b, h) with |pre_bh| ≤ tie_width_bh, |dpre_bh|·|x_b| on W1's
// row h, |dpre_bh| on b1_h and |dlogits_b|·2·tie_width_bh on W2's column h; 0 elsewhere. tie_width
// is 8 × 2⁻²⁴·√D·‖x_b‖∞·‖W1_h‖₂, eight times a dot product's typical rounding error (an upper bound
// on √Σ(x_k·w_k)² stands in for the exact sum). x is (B, D), dlogits (B, C) as the reference's
// backward used them (scaled by 1/B).
struct ReluTieAllowance {
  std::vector<float> per_param;
  std::size_t ties = 0;  // (b, h) pairs within their tie width
};
ReluTieAllowance mlp_relu_tie_allowance(const float* params, const float* x, const float* dlogits,
                                        const MlpShape& shape, int B);

}  // namespace offloadbench
