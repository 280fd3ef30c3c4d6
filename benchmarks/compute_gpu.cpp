// The compute family's GPU views, timed with CUDA events on one stream:
//  - gpu_kernel: inputs already on the device; before every sample a memset twice the size of L2
//    evicts them (cold), and only the kernel sits between the events;
//  - gpu_pinned / gpu_pageable: H2D of the inputs + kernel + D2H of the output between the events,
//    plus the host wall time of the same sequence (what a caller waits for).
// Every case first runs once and checks the output against the CPU reference, outside the timing.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/compute.h"
#include "benchmarks/compute_peaks.h"
#include "harness/benchmark_case.h"
#include "harness/cuda/cublas_check.h"
#include "harness/cuda/cuda_raii.h"
#include "harness/gpu_info.h"
#include "harness/system_info.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"

namespace offloadbench {

namespace {

using WallClock = std::chrono::steady_clock;

HostMemoryKind host_kind(ComputeView view) {
  return view == ComputeView::gpu_pinned ? HostMemoryKind::pinned : HostMemoryKind::pageable;
}

// Twice L2 (64 MiB when L2 is unknown) written before each cold sample.
std::size_t flush_bytes(int device) {
  const auto l2 = gpu_inventory().gpus.at(device).l2_cache_bytes;
  return l2 ? 2 * l2 : (64ull << 20);
}

// One timed sample per Google Benchmark iteration. `transfers_in` and `transfers_out` are empty for
// the kernel view; the L2 flush is queued before the start event so it is never timed.
struct SampleTotals {
  double device_seconds = 0;
  double host_seconds = 0;
};

SampleTotals time_samples(benchmark::State& state, const CudaStream& stream, ComputeView view, int device,
                          const std::function<void()>& transfers_in, const std::function<void()>& work,
                          const std::function<void()>& transfers_out) {
  const bool cold = view == ComputeView::gpu_kernel;
  DeviceBuffer flush = cold ? DeviceBuffer(flush_bytes(device)) : DeviceBuffer();
  CudaEvent start, end;
  SampleTotals totals;
  int sample = 0;
  for (auto _ : state) {
    if (cold) CUDA_CHECK(cudaMemsetAsync(flush.data(), ++sample & 0xff, flush.bytes(), stream.get()));
    const auto wall_start = WallClock::now();
    start.record(stream.get());
    if (!cold) transfers_in();
    work();
    if (!cold) transfers_out();
    end.record(stream.get());
    const double seconds = elapsed_seconds(start, end);  // synchronizes on `end`
    totals.host_seconds += std::chrono::duration<double>(WallClock::now() - wall_start).count();
    totals.device_seconds += seconds;
    state.SetIterationTime(seconds);
  }
  return totals;
}

template <typename T>
void run_elementwise_op_gpu(ElementwiseOp op, T* z, double* sum, const T* x, const T* y, std::size_t n,
                            cudaStream_t stream) {
  const T s = static_cast<T>(op_info(op).scalar);
  switch (op) {
    case ElementwiseOp::copy: return gpu::copy(z, x, n, stream);
    case ElementwiseOp::scale: return gpu::scale(z, x, s, n, stream);
    case ElementwiseOp::add: return gpu::add(z, x, y, n, stream);
    case ElementwiseOp::triad: return gpu::triad(z, x, y, s, n, stream);
    case ElementwiseOp::dot: return gpu::dot(sum, x, y, n, stream);
    case ElementwiseOp::add_scalar: return gpu::add_scalar(z, x, s, n, stream);
  }
}

template <typename T>
void run_elementwise_gpu_typed(benchmark::State& state, const ElementwiseCase& c) {
  const auto& info = op_info(c.op);
  const std::size_t n = c.elements, array_bytes = n * sizeof(T);
  const std::size_t output_bytes = info.writes_array ? array_bytes : sizeof(double);
  const std::size_t device_bytes = info.inputs * array_bytes + output_bytes +
                                   (c.view == ComputeView::gpu_kernel ? flush_bytes(c.device) : 0);
  if (auto problem = device_fit_problem(device_bytes); !problem.empty()) return skip_case(state, problem);
  if (auto problem = host_memory_problem(info.inputs * array_bytes + output_bytes); !problem.empty())
    return skip_case(state, problem);

  const auto kind = host_kind(c.view);
  const bool has_y = info.inputs == 2;
  HostBuffer host_x(array_bytes, kind), host_z(output_bytes, kind);
  HostBuffer host_y = has_y ? HostBuffer(array_bytes, kind) : HostBuffer();
  DeviceBuffer x(array_bytes), z(output_bytes);
  DeviceBuffer y = has_y ? DeviceBuffer(array_bytes) : DeviceBuffer();
  fill_elementwise_inputs(host_x.as<T>(), has_y ? host_y.as<T>() : nullptr, n,
                          query_host_info().omp_threads);
  CudaStream stream;
  const auto transfers_in = [&] {
    CUDA_CHECK(cudaMemcpyAsync(x.data(), host_x.data(), array_bytes, cudaMemcpyHostToDevice, stream.get()));
    if (has_y)
      CUDA_CHECK(cudaMemcpyAsync(y.data(), host_y.data(), array_bytes, cudaMemcpyHostToDevice, stream.get()));
  };
  const auto work = [&] {
    run_elementwise_op_gpu(c.op, z.as<T>(), z.as<double>(), x.as<T>(), y.as<T>(), n, stream.get());
  };
  const auto transfers_out = [&] {
    CUDA_CHECK(cudaMemcpyAsync(host_z.data(), z.data(), output_bytes, cudaMemcpyDeviceToHost, stream.get()));
  };

  transfers_in();
  work();
  transfers_out();
  stream.synchronize();
  const double dot_sum = info.writes_array ? 0.0 : *host_z.as<double>();
  if (auto problem = check_elementwise_output(c.op, info.writes_array ? host_z.as<T>() : nullptr, dot_sum, n);
      !problem.empty())
    return invalidate_case(state, problem);
  mark_validated(state);

  const auto totals = time_samples(state, stream, c.view, c.device, transfers_in, work, transfers_out);
  const double bytes = static_cast<double>(info.arrays_moved) * array_bytes;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  report_device_seconds(state, totals.device_seconds);
  report_host_seconds(state, totals.host_seconds);
  if (c.view == ComputeView::gpu_kernel) {
    const double peak = gpu_inventory().gpus.at(c.device).dram_bytes_per_second;
    set_bytes_ceiling(state, peak);
    if (peak > 0 && totals.device_seconds > 0) {
      state.counters["peak_bytes_per_second"] = peak;
      state.counters["percent_of_peak"] = 100.0 * bytes * state.iterations() / totals.device_seconds / peak;
    }
  }
}

// Host copies of A and B in the multiply's input precision (what a caller would hold).
void convert_inputs(GemmPrecision precision, const std::vector<float>& from, void* to) {
  switch (precision) {
    case GemmPrecision::fp32:
    case GemmPrecision::tf32: std::memcpy(to, from.data(), from.size() * sizeof(float)); return;
    case GemmPrecision::bf16: {
      auto* out = static_cast<__nv_bfloat16*>(to);
      for (std::size_t i = 0; i < from.size(); ++i) out[i] = __float2bfloat16(from[i]);
      return;
    }
    case GemmPrecision::fp16: {
      auto* out = static_cast<__half*>(to);
      for (std::size_t i = 0; i < from.size(); ++i) out[i] = __float2half(from[i]);
      return;
    }
  }
}

double sm_clock_hz(int device) {
  int khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  return khz * 1e3;
}

void run_matmul_gpu_checked(benchmark::State& state, const MatmulCase& c) {
  const std::size_t a_count = static_cast<std::size_t>(c.m) * c.k, b_count = static_cast<std::size_t>(c.k) * c.n,
                    c_count = static_cast<std::size_t>(c.m) * c.n;
  const std::size_t element = input_element_bytes(c.precision);
  const std::size_t a_bytes = a_count * element, b_bytes = b_count * element, c_bytes = c_count * sizeof(float);
  const std::size_t device_bytes =
      a_bytes + b_bytes + c_bytes + (c.view == ComputeView::gpu_kernel ? flush_bytes(c.device) : 0);
  if (auto problem = device_fit_problem(device_bytes); !problem.empty()) return skip_case(state, problem);
  if (auto problem = host_memory_problem(2 * (a_count + b_count) * sizeof(float) + c_bytes); !problem.empty())
    return skip_case(state, problem);

  std::vector<float> a(a_count), b(b_count);
  fill_exact_matrix(a.data(), a_count, 1);
  fill_exact_matrix(b.data(), b_count, 2);
  const auto kind = host_kind(c.view);
  HostBuffer host_a(a_bytes, kind), host_b(b_bytes, kind), host_c(c_bytes, kind);
  convert_inputs(c.precision, a, host_a.data());
  convert_inputs(c.precision, b, host_b.data());
  DeviceBuffer device_a(a_bytes), device_b(b_bytes), device_c(c_bytes);
  CudaStream stream;
  std::unique_ptr<CublasHandle> cublas;
  if (c.engine == GemmEngine::cublas) cublas = std::make_unique<CublasHandle>();

  const auto transfers_in = [&] {
    CUDA_CHECK(cudaMemcpyAsync(device_a.data(), host_a.data(), a_bytes, cudaMemcpyHostToDevice, stream.get()));
    CUDA_CHECK(cudaMemcpyAsync(device_b.data(), host_b.data(), b_bytes, cudaMemcpyHostToDevice, stream.get()));
  };
  const auto work = [&] {
    if (c.engine == GemmEngine::tiled)
      gpu::matmul(device_c.as<float>(), device_a.as<float>(), device_b.as<float>(), c.m, c.n, c.k, stream.get());
    else
      gpu::matmul_cublas(cublas->get(), c.precision, device_c.as<float>(), device_a.data(), device_b.data(), c.m, c.n,
                         c.k, stream.get());
  };
  const auto transfers_out = [&] {
    CUDA_CHECK(cudaMemcpyAsync(host_c.data(), device_c.data(), c_bytes, cudaMemcpyDeviceToHost, stream.get()));
  };

  transfers_in();
  work();  // also cuBLAS's first call at this shape (heuristics, module loading): never timed
  transfers_out();
  stream.synchronize();
  if (auto problem = sampled_matmul_mismatches(host_c.as<float>(), a.data(), b.data(), c.m, c.n, c.k,
                                               input_roundoff(c.precision));
      !problem.empty())
    return invalidate_case(state, problem);
  mark_validated(state);

  const auto totals = time_samples(state, stream, c.view, c.device, transfers_in, work, transfers_out);
  const double flops = 2.0 * c.m * c.n * c.k;
  set_flops_per_iteration(state, flops);
  report_device_seconds(state, totals.device_seconds);
  report_host_seconds(state, totals.host_seconds);
  const auto& gpu_info = gpu_inventory().gpus.at(c.device);
  const double peak = flop_peak_per_second(c.precision, gpu_info.cc_major, gpu_info.cc_minor, gpu_info.sm_count,
                                           sm_clock_hz(c.device));
  set_flops_ceiling(state, peak);
  if (peak > 0 && totals.device_seconds > 0) {
    state.counters["peak_flop_per_second"] = peak;
    state.counters["percent_of_peak"] = 100.0 * flops * state.iterations() / totals.device_seconds / peak;
  }
}

// A CUDA or cuBLAS error while the case runs skips the row with the error's text; other rows go on.
void skip_on_gpu_error(benchmark::State& state, int device, const std::function<void()>& body) {
  if (auto reason = gpu_unavailable_reason(device); !reason.empty()) return skip_case(state, reason);
  try {
    CUDA_CHECK(cudaSetDevice(device));
    body();
  } catch (const CudaError& e) {
    skip_case(state, e.what());
  } catch (const CublasError& e) {
    skip_case(state, e.what());
  }
}

}  // namespace

void run_elementwise_gpu(benchmark::State& state, const ElementwiseCase& c) {
  skip_on_gpu_error(state, c.device, [&] {
    if (c.type == ElementType::fp32) run_elementwise_gpu_typed<float>(state, c);
    else run_elementwise_gpu_typed<double>(state, c);
  });
}

void run_matmul_gpu(benchmark::State& state, const MatmulCase& c) {
  skip_on_gpu_error(state, c.device, [&] { run_matmul_gpu_checked(state, c); });
}

}  // namespace offloadbench
