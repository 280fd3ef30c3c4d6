// The compute family: elementwise ops (BabelStream's set plus add-a-scalar) and matmul, each on the
// GPU (data resident, or with its transfers from pinned or pageable memory counted) and on the CPU
// (one thread, all threads). compute_cases.cpp is the table of cases; compute_run_cpu.cpp runs the
// CPU views, compute_run_gpu.cpp the GPU ones (built with CUDA only: harness/gpu_runner.h). The
// elementwise ops themselves (math, byte weights, scalars, inputs, checks) live in
// kernels/elementwise.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include <benchmark/benchmark.h>

#include "harness/measure.h"
#include "harness/suite.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"

namespace offloadbench {

enum class ComputeView { gpu_kernel, gpu_pinned, gpu_pageable, cpu_1t, cpu_all };
const char* to_string(ComputeView view);
inline bool is_gpu_view(ComputeView view) {
  return view != ComputeView::cpu_1t && view != ComputeView::cpu_all;
}

enum class ElementType { fp32, fp64 };
const char* to_string(ElementType type);

struct ElementwiseCase {
  ElementwiseOp op;
  ElementType type;
  std::uint64_t elements;
  ComputeView view;
  int device;   // GPU views
  int threads;  // CPU views
  ElementwiseKernel kernel =
      ElementwiseKernel::one_per_thread;  // gpu_kernel view: both are measured
};

// tiled and vectorized: the project's own kernels (kernels/matmul.h); the fastest on the GPU at
// hand is the one to read against cuBLAS.
enum class GemmEngine { tiled, vectorized, cublas, openblas, onednn };

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
  std::shared_ptr<Arrays>
      arrays_;  // shared_ptr: its deleter is bound where make() ran, so this header
                // and the table can hold a ReusedArrays of a type they never see
  std::set<std::string> checked_;
};

// A later process of a run checks every this-many-th period of an elementwise output
// (check_outputs_in_full).
inline constexpr std::size_t kSampledCheckPeriodStride = 64;

// What each runner family reuses (defined by the runner files; opaque here). The table makes one
// ReusedArrays of each per registration of the suite.
struct ElementwiseHostArrays;  // compute_run_cpu.cpp
struct ElementwiseGpuArrays;   // compute_run_gpu.cpp
struct MatmulGpuArrays;        // compute_run_gpu.cpp

// Setups for the measurement layer (harness/measure.h), run once per case. The measurement points
// into `reuse`'s arrays, which stay put until the next case's setup (the layer releases this case
// first). CPU (compute_run_cpu.cpp).
MeasuredCase setup_elementwise_cpu(const ElementwiseCase& c,
                                   ReusedArrays<ElementwiseHostArrays>& reuse);
MeasuredCase setup_matmul_cpu(const MatmulCase& c);

// GPU (compute_run_gpu.cpp, built with CUDA only; the table calls them through
// OFFLOADBENCH_GPU_RUNNER).
MeasuredCase setup_elementwise_gpu(const ElementwiseCase& c,
                                   ReusedArrays<ElementwiseGpuArrays>& reuse);
MeasuredCase setup_matmul_gpu(const MatmulCase& c, ReusedArrays<MatmulGpuArrays>& reuse);

void register_compute_suite(const RunConfig& config);
// The suite: its name, what it measures, and the function above (benchmarks/suites.h lists it).
Suite compute_suite();

}  // namespace offloadbench
