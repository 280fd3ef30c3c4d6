// The compute family: elementwise ops (BabelStream's set plus add-a-scalar) and matmul, each on the
// GPU (data resident, or with its transfers from pinned or pageable memory counted) and on the CPU
// (one thread, all threads). compute.cpp is the table of cases; compute_host.cpp runs the CPU views,
// compute_gpu.cpp the GPU ones (compute_gpu_none.cpp skips them in a build without CUDA).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include <benchmark/benchmark.h>

#include "harness/measure.h"
#include "harness/suite.h"
#include "kernels/matmul.h"

namespace offloadbench {

enum class ComputeView { gpu_kernel, gpu_pinned, gpu_pageable, cpu_1t, cpu_all };
const char* to_string(ComputeView view);
inline bool is_gpu_view(ComputeView view) { return view != ComputeView::cpu_1t && view != ComputeView::cpu_all; }

// In BabelStream's terms; in our buffers every op reads x (and y) and writes z (dot: one double).
enum class ElementwiseOp {
  copy,        // z = x           (c = a)
  scale,       // z = s·x         (b = s·c)
  add,         // z = x + y       (c = a + b)
  triad,       // z = x + s·y     (a = b + s·c)
  dot,         // sum = Σ x·y
  add_scalar,  // z = x + 10      (y = x + 10)
};

struct ElementwiseOpInfo {
  ElementwiseOp op;
  const char* name;
  int inputs;        // arrays read: 1 (x) or 2 (x, y)
  bool writes_array; // false for dot, whose output is one number
  int arrays_moved;  // BabelStream's weight: bytes = arrays_moved · n · sizeof(T)
  double scalar;     // s (scale, triad) or the added constant (add_scalar); unused otherwise
};
const ElementwiseOpInfo& op_info(ElementwiseOp op);

enum class ElementType { fp32, fp64 };
const char* to_string(ElementType type);

struct ElementwiseCase {
  ElementwiseOp op;
  ElementType type;
  std::uint64_t elements;
  ComputeView view;
  int device;   // GPU views
  int threads;  // CPU views
};

enum class GemmEngine { tiled, cublas, openblas };

struct MatmulCase {
  GemmEngine engine;
  GemmPrecision precision;
  int m, n, k;
  ComputeView view;
  int device;   // GPU views
  int threads;  // CPU views
};

// The arrays of the latest case, kept for the next case with the same key: consecutive cases (the
// ops of one element type and size, the repetitions of one case) then share one allocation, fill
// and upload instead of paying for them each time. Owned by the registered cases (each holds a
// shared_ptr), so it lives as long as they do; holding one key's arrays at a time bounds the memory
// to the largest case's, and the table registers sizes largest first so that the smallest stay.
template <typename Arrays>
class ReusedArrays {
 public:
  // The arrays for `key`, made by make() (a std::unique_ptr<Arrays>) when the key changed.
  template <typename Make>
  Arrays& get(const std::string& key, Make&& make) {
    if (!arrays_ || key != key_) {
      arrays_.reset();  // free the old arrays before allocating new ones
      key_.clear();
      checked_.clear();
      arrays_ = make();
      key_ = key;
    }
    return *arrays_;
  }
  // Whether `check` (a case's identity) already passed on these arrays, in an earlier repetition.
  bool checked(const std::string& check) const { return checked_.count(check) > 0; }
  void set_checked(const std::string& check) { checked_.insert(check); }

 private:
  std::string key_;
  std::unique_ptr<Arrays> arrays_;
  std::set<std::string> checked_;
};

// What each runner family reuses (defined by the runner files; opaque here).
struct ElementwiseHostArrays;  // compute_host.cpp
struct ElementwiseGpuArrays;   // compute_gpu.cpp
struct MatmulGpuArrays;        // compute_gpu.cpp
// One set per registration of the suite; made by the runner files, which know the types.
std::shared_ptr<ReusedArrays<ElementwiseHostArrays>> make_elementwise_host_reuse();
std::shared_ptr<ReusedArrays<ElementwiseGpuArrays>> make_elementwise_gpu_reuse();
std::shared_ptr<ReusedArrays<MatmulGpuArrays>> make_matmul_gpu_reuse();

// Inputs every elementwise case starts from, exact in fp32, and the value each output must have.
double elementwise_input_x(std::size_t i);
double elementwise_input_y(std::size_t i);
template <typename T> void fill_elementwise_inputs(T* x, T* y, std::size_t n, int threads);
// "" when z (or the dot sum) is what `op` on the inputs gives, else what differs.
template <typename T>
std::string check_elementwise_output(ElementwiseOp op, const T* z, double dot_sum, std::size_t n);

// Setups for the measurement layer (harness/measure.h), run once per case. The measurement points
// into `reuse`'s arrays, which stay put until the next case's setup (the layer releases this case first).
// CPU (compute_host.cpp).
MeasuredCase setup_elementwise_cpu(const ElementwiseCase& c, ReusedArrays<ElementwiseHostArrays>& reuse);
MeasuredCase setup_matmul_cpu(const MatmulCase& c);

// GPU (compute_gpu.cpp, or compute_gpu_none.cpp without CUDA).
MeasuredCase setup_elementwise_gpu(const ElementwiseCase& c, ReusedArrays<ElementwiseGpuArrays>& reuse);
MeasuredCase setup_matmul_gpu(const MatmulCase& c, ReusedArrays<MatmulGpuArrays>& reuse);

// "" when `bytes_needed` of host memory can be had (keeping a margin), else why not.
std::string host_memory_problem(std::uint64_t bytes_needed);

void register_compute_suite(const RunConfig& config);

}  // namespace offloadbench
