// The compute family's GPU views, timed by the measurement layer with CUDA events on one stream:
//  - gpu_kernel: inputs already on the device; before every sample a memset twice the size of L2
//    evicts them (cold), a gate holds the stream while the host enqueues, and only the kernel sits
//    between the events;
//  - gpu_pinned / gpu_pageable: H2D of the inputs + kernel + D2H of the output between the events,
//    plus the host wall time of the same sequence (what a caller waits for). Not gated: a pageable
//    copy may block the host until the stream reaches it.
// Every case first runs once and checks the output against the CPU reference, outside the timing.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/compute/compute_cases.h"
#include "benchmarks/compute/compute_peaks.h"
#include "harness/benchmark_case.h"
#include "harness/cuda/event_timer.h"
#include "harness/gpu_info.h"
#include "harness/system_info.h"
#include "kernels/cuda/cublas_check.h"
#include "kernels/cuda/cuda_raii.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"

namespace offloadbench {

namespace {

HostMemoryKind host_kind(ComputeView view) {
  return view == ComputeView::gpu_pinned ? HostMemoryKind::pinned : HostMemoryKind::pageable;
}

// Twice L2 (64 MiB when L2 is unknown) written before each cold sample.
std::size_t flush_bytes(int device) {
  const auto l2 = gpu_inventory().gpus.at(device).l2_cache_bytes;
  return l2 ? 2 * l2 : (64ull << 20);
}

// One timed call: the kernel alone (cold: L2 flushed, gated), or transfers in + kernel + transfer
// out.
struct GpuCall {
  std::function<void()> transfers_in, work, transfers_out;
};

Measurement gpu_measurement(ComputeView view, int device, cudaStream_t stream, GpuCall call) {
  const bool cold = view == ComputeView::gpu_kernel;
  EventTimerOptions timing;
  timing.stream = stream;
  timing.gated = cold;
  timing.flush_bytes = cold ? flush_bytes(device) : 0;
  Measurement m;
  m.call = cold ? call.work : [call] {
    call.transfers_in();
    call.work();
    call.transfers_out();
  };
  m.device = std::make_shared<EventTimer>(timing);
  return m;
}

// Counters for a throughput against its peak, from the layer's totals.
void report_percent_of_peak(benchmark::State& state, const char* peak_key, double peak,
                            double work_per_call, const Totals& totals) {
  if (peak <= 0 || totals.device_seconds <= 0) return;
  state.counters[peak_key] = peak;
  state.counters["percent_of_peak"] =
      100.0 * work_per_call * totals.calls / totals.device_seconds / peak;
}

}  // namespace

// Inputs uploaded once per element type, size and view; z holds the output of the op that ran last.
// Host memory is pinned or pageable as the view says (pageable for the kernel view: setup only).
struct ElementwiseGpuArrays {
  ElementwiseGpuArrays(std::size_t array_bytes, std::size_t output_bytes, HostMemoryKind kind)
      : host_x(array_bytes, kind),
        host_y(array_bytes, kind),
        host_z(output_bytes, kind),
        x(array_bytes),
        y(array_bytes),
        z(output_bytes) {}
  HostBuffer host_x, host_y, host_z;
  DeviceBuffer x, y, z;
  CudaStream stream;
};

namespace {

template <typename T>
MeasuredCase setup_elementwise_gpu_typed(const ElementwiseCase& c,
                                         ReusedArrays<ElementwiseGpuArrays>& reuse) {
  const auto& info = op_info(c.op);
  const std::size_t n = c.elements, array_bytes = n * sizeof(T);
  const std::size_t z_bytes = std::max(array_bytes, sizeof(double));  // dot writes one double
  const std::size_t output_bytes =
      info.writes_array ? array_bytes : sizeof(double);  // what D2H moves
  const std::size_t device_bytes =
      2 * array_bytes + z_bytes + (c.view == ComputeView::gpu_kernel ? flush_bytes(c.device) : 0);
  if (auto problem = device_fit_problem(device_bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  if (auto problem = host_fit_problem(2 * array_bytes + z_bytes); !problem.empty())
    return MeasuredCase::skip(problem);

  const auto key =
      fmt::format("{}/{}/{}/gpu:{}", to_string(c.type), n, to_string(c.view), c.device);
  // A named maker: GCC 13's -Wdangling-reference flags a reference bound to a call with a temporary
  // argument.
  const auto make_arrays = [&] {
    auto made = std::make_unique<ElementwiseGpuArrays>(array_bytes, z_bytes, host_kind(c.view));
    fill_elementwise_inputs(made->host_x.as<T>(), made->host_y.as<T>(), n,
                            query_host_info().omp_threads);
    CUDA_CHECK(
        cudaMemcpy(made->x.data(), made->host_x.data(), array_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(
        cudaMemcpy(made->y.data(), made->host_y.data(), array_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());  // a pageable cudaMemcpy returns once staged; the case's
                                          // stream won't wait
    return made;
  };
  ElementwiseGpuArrays* arrays = &reuse.get(key, make_arrays);
  const cudaStream_t stream = arrays->stream.get();
  GpuCall call;
  call.transfers_in = [arrays, array_bytes, inputs = info.inputs, stream] {
    CUDA_CHECK(cudaMemcpyAsync(arrays->x.data(), arrays->host_x.data(), array_bytes,
                               cudaMemcpyHostToDevice, stream));
    if (inputs == 2)
      CUDA_CHECK(cudaMemcpyAsync(arrays->y.data(), arrays->host_y.data(), array_bytes,
                                 cudaMemcpyHostToDevice, stream));
  };
  call.work = [run = gpu::elementwise<T>(c.op, c.kernel),
               args = elementwise_args(c.op, arrays->z.as<T>(), arrays->z.as<double>(),
                                       arrays->x.as<const T>(), arrays->y.as<const T>(), n),
               stream] { run(args, stream); };
  call.transfers_out = [arrays, output_bytes, stream] {
    CUDA_CHECK(cudaMemcpyAsync(arrays->host_z.data(), arrays->z.data(), output_bytes,
                               cudaMemcpyDeviceToHost, stream));
  };

  MeasuredCase made;
  Measurement& m = made.measurement;
  m = gpu_measurement(c.view, c.device, stream, call);
  m.verify = [arrays, call, op = c.op, n, writes_array = info.writes_array] {
    call.work();
    call.transfers_out();
    arrays->stream.synchronize();
    const double dot_sum = writes_array ? 0.0 : *arrays->host_z.as<double>();
    return check_elementwise_output(op, arrays->host_z.as<T>(), dot_sum, n,
                                    check_outputs_in_full() ? 1 : kSampledCheckPeriodStride);
  };
  // BabelStream's bytes of the op in every view; the end-to-end views' time also covers the
  // transfers, whose size is the row's transfer_bytes field.
  m.work.bytes = static_cast<double>(info.arrays_moved) * array_bytes;
  if (c.view == ComputeView::gpu_kernel) {
    m.bytes_ceiling = gpu_inventory().gpus.at(c.device).dram_bytes_per_second;
    m.report = [peak = m.bytes_ceiling, bytes = m.work.bytes](benchmark::State& state,
                                                              const Totals& totals) {
      report_percent_of_peak(state, "peak_bytes_per_second", peak, bytes, totals);
    };
  }
  return made;
}

// Host copies of A and B in the multiply's input precision (what a caller would hold).
void convert_inputs(GemmPrecision precision, const std::vector<float>& from, void* to) {
  switch (precision) {
    case GemmPrecision::fp32:
    case GemmPrecision::tf32:
      std::memcpy(to, from.data(), from.size() * sizeof(float));
      return;
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

}  // namespace

// A, B and C of one shape, input precision and view; C holds the output of the series that ran
// last. The float copies of A and B (exact in every input precision) are what the check multiplies.
struct MatmulGpuArrays {
  MatmulGpuArrays(int m, int n, int k, std::size_t element_bytes, HostMemoryKind kind)
      : a(static_cast<std::size_t>(m) * k),
        b(static_cast<std::size_t>(k) * n),
        host_a(a.size() * element_bytes, kind),
        host_b(b.size() * element_bytes, kind),
        host_c(static_cast<std::size_t>(m) * n * sizeof(float), kind),
        device_a(host_a.bytes()),
        device_b(host_b.bytes()),
        device_c(host_c.bytes()) {}
  std::vector<float> a, b;
  HostBuffer host_a, host_b, host_c;
  DeviceBuffer device_a, device_b, device_c;
  CudaStream stream;
  std::unique_ptr<CublasHandle> cublas;  // made by the first cuBLAS case
};

namespace {

MeasuredCase setup_matmul_gpu_checked(const MatmulCase& c, ReusedArrays<MatmulGpuArrays>& reuse) {
  const std::size_t a_count = static_cast<std::size_t>(c.m) * c.k,
                    b_count = static_cast<std::size_t>(c.k) * c.n,
                    c_count = static_cast<std::size_t>(c.m) * c.n;
  const std::size_t element = input_element_bytes(c.precision);
  const std::size_t a_bytes = a_count * element, b_bytes = b_count * element,
                    c_bytes = c_count * sizeof(float);
  const std::size_t device_bytes =
      a_bytes + b_bytes + c_bytes + (c.view == ComputeView::gpu_kernel ? flush_bytes(c.device) : 0);
  if (auto problem = device_fit_problem(device_bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  if (auto problem = host_fit_problem(2 * (a_count + b_count) * sizeof(float) + c_bytes);
      !problem.empty())
    return MeasuredCase::skip(problem);

  // fp32 and tf32 multiply the same float arrays; bf16 and fp16 have their own.
  const char* storage = element == 4 ? "float" : to_string(c.precision);
  const auto key =
      fmt::format("{}x{}x{}/{}/{}/gpu:{}", c.m, c.n, c.k, storage, to_string(c.view), c.device);
  const auto make_arrays = [&] {  // named: see setup_elementwise_gpu_typed
    auto made = std::make_unique<MatmulGpuArrays>(c.m, c.n, c.k, element, host_kind(c.view));
    fill_exact_matrix(made->a.data(), a_count, 1);
    fill_exact_matrix(made->b.data(), b_count, 2);
    convert_inputs(c.precision, made->a, made->host_a.data());
    convert_inputs(c.precision, made->b, made->host_b.data());
    CUDA_CHECK(
        cudaMemcpy(made->device_a.data(), made->host_a.data(), a_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(
        cudaMemcpy(made->device_b.data(), made->host_b.data(), b_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());  // as for the elementwise arrays
    return made;
  };
  MatmulGpuArrays* arrays = &reuse.get(key, make_arrays);
  if (c.engine == GemmEngine::cublas && !arrays->cublas)
    arrays->cublas = std::make_unique<CublasHandle>();
  const cudaStream_t stream = arrays->stream.get();

  GpuCall call;
  call.transfers_in = [arrays, a_bytes, b_bytes, stream] {
    CUDA_CHECK(cudaMemcpyAsync(arrays->device_a.data(), arrays->host_a.data(), a_bytes,
                               cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(arrays->device_b.data(), arrays->host_b.data(), b_bytes,
                               cudaMemcpyHostToDevice, stream));
  };
  call.work = [arrays, c, stream] {
    if (c.engine == GemmEngine::tiled || c.engine == GemmEngine::vectorized)
      gpu::matmul(
          arrays->device_c.as<float>(), arrays->device_a.as<float>(), arrays->device_b.as<float>(),
          c.m, c.n, c.k, stream,
          c.engine == GemmEngine::vectorized ? MatmulKernel::vectorized : MatmulKernel::tiled);
    else
      gpu::matmul_cublas(arrays->cublas->get(), c.precision, arrays->device_c.as<float>(),
                         arrays->device_a.data(), arrays->device_b.data(), c.m, c.n, c.k, stream);
  };
  call.transfers_out = [arrays, c_bytes, stream] {
    CUDA_CHECK(cudaMemcpyAsync(arrays->host_c.data(), arrays->device_c.data(), c_bytes,
                               cudaMemcpyDeviceToHost, stream));
  };

  MeasuredCase made;
  Measurement& m = made.measurement;
  m = gpu_measurement(c.view, c.device, stream, call);
  // The check's multiply is also cuBLAS's first call at this shape (heuristics, module loading).
  m.verify = [arrays, call, c] {
    call.work();
    call.transfers_out();
    arrays->stream.synchronize();
    return sampled_matmul_mismatches(arrays->host_c.as<float>(), arrays->a.data(), arrays->b.data(),
                                     c.m, c.n, c.k, input_roundoff(c.precision));
  };
  m.work.flops = 2.0 * c.m * c.n * c.k;
  const auto& gpu_info = gpu_inventory().gpus.at(c.device);
  // The ceiling at the highest clock (nothing runs faster); percent_of_peak against the peak the
  // datasheet prints, at its published clock where known (compute_peaks.h).
  m.flops_ceiling = flop_peak_per_second(c.precision, gpu_info.cc_major, gpu_info.cc_minor,
                                         gpu_info.sm_count, sm_clock_hz(c.device));
  const double peak =
      flop_peak_per_second(c.precision, gpu_info.cc_major, gpu_info.cc_minor, gpu_info.sm_count,
                           peak_clock_hz(gpu_info.name, c.precision, sm_clock_hz(c.device)));
  m.report = [peak, flops = m.work.flops](benchmark::State& state, const Totals& totals) {
    report_percent_of_peak(state, "peak_flop_per_second", peak, flops, totals);
  };
  return made;
}

}  // namespace

MeasuredCase setup_elementwise_gpu(const ElementwiseCase& c,
                                   ReusedArrays<ElementwiseGpuArrays>& reuse) {
  if (auto reason = gpu_unavailable_reason(c.device); !reason.empty())
    return MeasuredCase::skip(reason);
  CUDA_CHECK(cudaSetDevice(c.device));
  if (c.type == ElementType::fp32) return setup_elementwise_gpu_typed<float>(c, reuse);
  return setup_elementwise_gpu_typed<double>(c, reuse);
}

MeasuredCase setup_matmul_gpu(const MatmulCase& c, ReusedArrays<MatmulGpuArrays>& reuse) {
  if (auto reason = gpu_unavailable_reason(c.device); !reason.empty())
    return MeasuredCase::skip(reason);
  CUDA_CHECK(cudaSetDevice(c.device));
  return setup_matmul_gpu_checked(c, reuse);
}

}  // namespace offloadbench
