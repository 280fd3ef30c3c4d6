// Inference with the weights packed once, as an inference runtime packs them when it loads a model:
// oneDNN's matmul primitive with W1 and W2 reordered at construction into the blocked layout it
// picks for this CPU, bias and ReLU fused into the first GEMM's epilogue and the bias into the
// second's. Why: a GEMM call packs its operands every time, and at the MLP's skinny forward shapes
// that packing is a large share of the call: packed once, a forward GEMM runs 2-3x faster than
// either library's at 12288→64, batch 64, and 1.1-1.4x at 784→128, batch 4096
// (lab/records/cpu-baseline.md). Not everywhere faster (12288→64 at batch 1, 2 threads: a quarter
// slower than dnnl_sgemm), so the benchmark times it against the planned GEMM library and keeps the
// faster.
#pragma once
#include <memory>

#include "kernels/mlp.h"

namespace offloadbench {

class MlpPackedInference {
 public:
  // Whether this build has oneDNN (without it the constructor throws std::invalid_argument).
  static bool available();
  // A snapshot of the model's weights and biases at batch model.batch: later changes to the model
  // do not reach it (build another). Packs for the calling thread's OpenMP thread count.
  explicit MlpPackedInference(const MlpCpuModel& model);
  ~MlpPackedInference();
  MlpPackedInference(const MlpPackedInference&) = delete;
  MlpPackedInference& operator=(const MlpPackedInference&) = delete;
  // logits (batch, classes) of x (batch, inputs), row-major; the same as mlp_infer's up to
  // rounding.
  void run(const float* x, float* logits);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace offloadbench
