// Inference with the weights packed once, as an inference runtime packs them when it loads a model:
// oneDNN's matmul primitive with W1 and W2 reordered at construction into the blocked layout it picks
// for this CPU, bias and ReLU fused into the first GEMM's epilogue and the bias into the second's.
// Why: a GEMM call packs its operands every time, and at the MLP's skinny forward shapes that packing
// is a large share of the call. Measured on a 2-vCPU AMD EPYC (Zen 4, AVX-512), one forward GEMM,
// µs at 1 / 2 threads: 12288→64 at batch 64: OpenBLAS 1705 / 1120, dnnl_sgemm 2699 / 1338, this
// 900 / 486; 784→128 at batch 4096: 9841 / 5639, 8705 / 4533, 7735 / 4073. Not everywhere faster
// (12288→64 at batch 1, 2 threads: dnnl_sgemm 31 µs, this 39), so the benchmark times it against the
// planned GEMM library and keeps the faster.
#pragma once
#include <memory>

#include "kernels/mlp.h"

namespace offloadbench {

class MlpPackedInference {
 public:
  // Whether this build has oneDNN (without it the constructor throws std::invalid_argument).
  static bool available();
  // A snapshot of the model's weights and biases at batch model.batch: later changes to the model do
  // not reach it (build another). Packs for the calling thread's OpenMP thread count.
  explicit MlpPackedInference(const MlpCpuModel& model);
  ~MlpPackedInference();
  MlpPackedInference(const MlpPackedInference&) = delete;
  MlpPackedInference& operator=(const MlpPackedInference&) = delete;
  // logits (batch, classes) of x (batch, inputs), row-major; the same as mlp_infer's up to rounding.
  void run(const float* x, float* logits);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace offloadbench
