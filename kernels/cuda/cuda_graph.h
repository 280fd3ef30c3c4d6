// An owner for an executable CUDA Graph and the capture that makes one: what a callable enqueues on
// a stream becomes one graph, replayed later with one launch. Capture is thread-local, so other
// threads' CUDA calls are not swept into it.
#pragma once
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.h"

namespace offloadbench {

class CudaGraphExec {
 public:
  CudaGraphExec() = default;
  explicit CudaGraphExec(cudaGraphExec_t exec) : exec_(exec) {}
  ~CudaGraphExec() {
    if (exec_) CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec_));
  }
  CudaGraphExec(CudaGraphExec&& other) noexcept : exec_(other.exec_) { other.exec_ = nullptr; }
  CudaGraphExec(const CudaGraphExec&) = delete;
  CudaGraphExec& operator=(const CudaGraphExec&) = delete;
  CudaGraphExec& operator=(CudaGraphExec&&) = delete;
  void launch(cudaStream_t stream) const { CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

// Captures what `enqueue()` puts on `stream` (which must not be the legacy default stream).
template <typename Enqueue>
CudaGraphExec capture_graph(cudaStream_t stream, Enqueue&& enqueue) {
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    enqueue();
  } catch (...) {
    if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t rc = cudaGraphInstantiate(&exec, graph, 0);
  CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph));
  CUDA_CHECK(rc);
  return CudaGraphExec(exec);
}

}  // namespace offloadbench
