// The compute suite's table of cases.
// Elementwise: byte weights are BabelStream's (arrays moved × n × sizeof(T)); sizes quick 1Ki,
// 64Ki, 1Mi, 16Mi, 64Mi elements, full 1Ki..256Mi in powers of two, or --sizes (read as element
// counts). Matmul: 2·m·n·k FLOP per multiply; square n quick 64, 256, 1024, 4096, full 16..8192,
// plus the small network's layers (batch × 784 × 128 and batch × 128 × 10). Every GPU case has
// three views (kernel only with L2 flushed, end to end from pinned or pageable memory) and every
// CPU case two (one thread, all threads); rows carry the pairing fields.
#include "benchmarks/compute/compute_cases.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/compute/compute_peaks.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"
#include "harness/gpu_runner.h"
#include "harness/results/sizes.h"
#include "harness/system_info.h"
#include "kernels/cpu_gemm.h"

namespace offloadbench {

const char* to_string(ComputeView view) {
  switch (view) {
    case ComputeView::gpu_kernel:
      return "gpu_kernel";
    case ComputeView::gpu_pinned:
      return "gpu_pinned";
    case ComputeView::gpu_pageable:
      return "gpu_pageable";
    case ComputeView::cpu_1t:
      return "cpu_1t";
    case ComputeView::cpu_all:
      return "cpu_all";
  }
  return "unknown";
}

const char* to_string(ElementType type) { return type == ElementType::fp32 ? "fp32" : "fp64"; }

namespace {

// A cold kernel-view sample costs a 2×L2 flush, a gate and two synchronizations (~50 µs of wall
// time) on top of a kernel that may take 3 µs, and Google Benchmark counts only the kernel's time
// towards --benchmark_min_time: those cases measure a tenth of the mode's default instead.
double cold_min_time(const RunConfig& config) { return config.quick ? 0.002 : 0.01; }

// Quick mode keeps the CPU part short on a small machine: one 4096³ multiply takes seconds on two
// cores, so CPU matmuls above 2·1024³ FLOP are skipped there (--full runs them).
constexpr double kQuickCpuMatmulMaxFlops = 2.0 * 1024 * 1024 * 1024;

// Largest first (the arrays kept for reuse after the last case are then the smallest), no repeats.
std::vector<std::uint64_t> elementwise_sizes(const RunConfig& config) {
  std::vector<std::uint64_t> sizes =
      config.sizes   ? *config.sizes
      : config.quick ? std::vector<std::uint64_t>{1ull << 10, 64ull << 10, 1ull << 20, 16ull << 20,
                                                  64ull << 20}
                     : powers_of_two(1ull << 10, 256ull << 20);
  std::sort(sizes.rbegin(), sizes.rend());
  sizes.erase(std::unique(sizes.begin(), sizes.end()),
              sizes.end());  // "--sizes 1Ki,1024" is one size
  return sizes;
}

std::vector<int> square_sizes(const RunConfig& config) {
  if (config.quick) return {64, 256, 1024, 4096};
  std::vector<int> sizes;
  for (int n = 16; n <= 8192; n *= 2) sizes.push_back(n);
  return sizes;
}

std::vector<int> mlp_batches(const RunConfig& config) {
  if (config.quick) return {256, 4096};
  return {64, 256, 1024, 4096, 16384, 65536};
}

// "64Mi" for whole binary multiples, else the plain count.
std::string count_label(std::uint64_t n) {
  auto text = format_size(n);
  if (!text.empty() && text.back() == 'B') text.pop_back();
  return text;
}

// The views to register: GPU ones per device, CPU ones with their thread counts.
struct ViewSlot {
  ComputeView view;
  int device;   // -1 for CPU views
  int threads;  // 0 for GPU views
};

std::vector<ViewSlot> view_slots(const RunConfig& config) {
  std::vector<ViewSlot> slots;
  for (int device : config.gpu_devices)
    for (auto view : {ComputeView::gpu_kernel, ComputeView::gpu_pinned, ComputeView::gpu_pageable})
      slots.push_back({view, device, 0});
  const int all_threads = query_host_info().omp_threads;
  slots.push_back({ComputeView::cpu_1t, -1, 1});
  if (all_threads > 1) slots.push_back({ComputeView::cpu_all, -1, all_threads});
  return slots;
}

// Fields every compute row has: where it ran and how it pairs with the other side.
nlohmann::json view_fields(const ViewSlot& slot, const std::string& compare_group,
                           const std::string& series, const std::string& sweep) {
  nlohmann::json f = {{"view", to_string(slot.view)},
                      {"compare_group", compare_group},
                      {"series", series},
                      {"sweep", sweep}};
  if (is_gpu_view(slot.view)) {
    f["device"] = slot.device;
    if (slot.view == ComputeView::gpu_kernel)
      f["l2"] = "flushed";
    else
      f["host_memory"] = slot.view == ComputeView::gpu_pinned ? "pinned" : "pageable";
  } else {
    f["device"] = "cpu";
    f["cpu_threads"] = slot.threads;
    f["threading"] = fmt::format(
        "{} threads: OpenMP (libgomp) for elementwise (one thread below {} elements) and "
        "oneDNN sgemm, OpenBLAS ({}) for OpenBLAS sgemm",
        slot.threads, cpu::kElementwiseParallelGrain, openblas_threading());
  }
  return f;
}

// The elementwise ops measured (each op's math, weight and scalars: kernels/elementwise.h): every
// op in fp32, and add and triad in fp64 as well, for what the element type costs.
constexpr std::pair<ElementwiseOp, ElementType> kMeasuredElementwiseOps[] = {
    {ElementwiseOp::copy, ElementType::fp32},  {ElementwiseOp::scale, ElementType::fp32},
    {ElementwiseOp::add, ElementType::fp32},   {ElementwiseOp::triad, ElementType::fp32},
    {ElementwiseOp::dot, ElementType::fp32},   {ElementwiseOp::add_scalar, ElementType::fp32},
    {ElementwiseOp::axpby, ElementType::fp32}, {ElementwiseOp::add, ElementType::fp64},
    {ElementwiseOp::triad, ElementType::fp64},
};

void register_elementwise_case(
    const RunConfig& config, const ViewSlot& slot, const ElementwiseCase& c,
    const std::shared_ptr<ReusedArrays<ElementwiseHostArrays>>& host_reuse,
    const std::shared_ptr<ReusedArrays<ElementwiseGpuArrays>>& gpu_reuse) {
  const auto& info = op_info(c.op);
  const std::uint64_t n = c.elements, element_bytes = c.type == ElementType::fp32 ? 4 : 8;
  const bool four = c.kernel == ElementwiseKernel::four_per_thread;
  auto fields = view_fields(slot, fmt::format("compute/{}/{}", info.name, to_string(c.type)),
                            four ? to_string(c.kernel) : "", "elements");
  fields.update({{"op", info.name},
                 {"precision", to_string(c.type)},
                 {"elements", n},
                 {"arrays_moved", info.arrays_moved},
                 {"bytes", info.arrays_moved * n * element_bytes},
                 {"bytes_counted", "babelstream"}});
  if (is_gpu_view(slot.view)) fields["kernel"] = to_string(c.kernel);
  if (slot.view == ComputeView::gpu_pinned || slot.view == ComputeView::gpu_pageable)
    fields["transfer_bytes"] = (info.inputs * n + (info.writes_array ? n : 0)) * element_bytes +
                               (info.writes_array ? 0 : sizeof(double));
  if (c.op == ElementwiseOp::triad && c.type == ElementType::fp32 && !four)
    fields["headline"] = fmt::format("triad fp32 {}", to_string(slot.view));
  const bool gpu = is_gpu_view(slot.view);
  auto spec = measured_case(
      fmt::format("compute/{}/{}/{}/{}{}{}", info.name, to_string(c.type), to_string(slot.view),
                  count_label(n), four ? "/kernel:four_per_thread" : "",
                  gpu ? config.gpu_suffix(slot.device) : ""),
      "compute", fields, gpu ? Clock::device_events : Clock::host_wall,
      [c, gpu, host_reuse, gpu_reuse] {
        return gpu ? OFFLOADBENCH_GPU_RUNNER(setup_elementwise_gpu)(c, *gpu_reuse)
                   : setup_elementwise_cpu(c, *host_reuse);
      });
  spec.min_time_s = slot.view == ComputeView::gpu_kernel ? cold_min_time(config) : 0.0;
  register_case(std::move(spec));
}

// A crossover refinement's cases (RunConfig::refine): each listed group's views at its sizes, the
// kernel of one element a thread only (the one its crossovers are found with).
void register_elementwise_refinement(const RunConfig& config) {
  const auto host_reuse = std::make_shared<ReusedArrays<ElementwiseHostArrays>>();
  const auto gpu_reuse = std::make_shared<ReusedArrays<ElementwiseGpuArrays>>();
  for (const auto& slot : view_slots(config))
    for (const auto& [op, type] : kMeasuredElementwiseOps) {
      const auto it =
          config.refine->find(fmt::format("compute/{}/{}", op_info(op).name, to_string(type)));
      if (it == config.refine->end()) continue;
      for (auto n : it->second)
        register_elementwise_case(config, slot, {op, type, n, slot.view, slot.device, slot.threads},
                                  host_reuse, gpu_reuse);
    }
}

void register_elementwise(const RunConfig& config) {
  if (config.refine) return register_elementwise_refinement(config);
  const auto sizes = elementwise_sizes(config);
  const auto host_reuse = std::make_shared<ReusedArrays<ElementwiseHostArrays>>();
  const auto gpu_reuse = std::make_shared<ReusedArrays<ElementwiseGpuArrays>>();
  // Size outside op: the ops of one element type and size run back to back on the same arrays.
  for (const auto& slot : view_slots(config))
    for (auto n : sizes)
      for (const auto& [op, type] : kMeasuredElementwiseOps) {
        register_elementwise_case(config, slot, {op, type, n, slot.view, slot.device, slot.threads},
                                  host_reuse, gpu_reuse);
        // The kernel alone, four elements a thread: the same arrays, the next case.
        if (slot.view == ComputeView::gpu_kernel)
          register_elementwise_case(config, slot,
                                    {op, type, n, slot.view, slot.device, slot.threads,
                                     ElementwiseKernel::four_per_thread},
                                    host_reuse, gpu_reuse);
      }
}

struct GemmSeries {
  GemmEngine engine;
  GemmPrecision precision;
  const char* series;  // the row's `series`
  const char* slug;    // in the name
  const char* library;
};

constexpr GemmSeries kGpuSeries[] = {
    {GemmEngine::tiled, GemmPrecision::fp32, "tiled", "tiled", "offloadbench matmul_tiled_kernel"},
    {GemmEngine::vectorized, GemmPrecision::fp32, "vectorized", "vectorized",
     "offloadbench matmul_vectorized_kernel"},
    {GemmEngine::cublas, GemmPrecision::fp32, "cuBLAS fp32", "cublas_fp32", "cuBLAS"},
    {GemmEngine::cublas, GemmPrecision::tf32, "cuBLAS tf32", "cublas_tf32", "cuBLAS"},
    {GemmEngine::cublas, GemmPrecision::bf16, "cuBLAS bf16", "cublas_bf16", "cuBLAS"},
    {GemmEngine::cublas, GemmPrecision::fp16, "cuBLAS fp16", "cublas_fp16", "cuBLAS"},
};
// OpenBLAS keeps the empty series it always had (the CPU baseline older files name so); oneDNN is a
// second CPU series where the build has it.
std::vector<GemmSeries> cpu_series() {
  std::vector<GemmSeries> s{
      {GemmEngine::openblas, GemmPrecision::fp32, "", "openblas", "OpenBLAS"}};
  if (cpu_gemm_available(CpuGemmLibrary::onednn))
    s.push_back({GemmEngine::onednn, GemmPrecision::fp32, "oneDNN", "onednn", "oneDNN"});
  return s;
}

struct GemmShape {
  const char* group;  // compare_group suffix
  int m, n, k;
  const char* sweep;  // "n" or "batch"
};

void register_matmul_shape(const RunConfig& config, const GemmShape& shape,
                           const std::shared_ptr<ReusedArrays<MatmulGpuArrays>>& reuse) {
  const bool square = std::string(shape.sweep) == "n";
  for (const auto& slot : view_slots(config)) {
    const bool gpu = is_gpu_view(slot.view);
    std::vector<GemmSeries> series_list(std::begin(kGpuSeries), std::end(kGpuSeries));
    if (!gpu) series_list = cpu_series();
    for (const auto& s : series_list) {
      const MatmulCase c{s.engine, s.precision, shape.m,     shape.n,
                         shape.k,  slot.view,   slot.device, slot.threads};
      const double flops = 2.0 * shape.m * shape.n * shape.k;
      auto fields =
          view_fields(slot, fmt::format("compute/sgemm/{}", shape.group), s.series, shape.sweep);
      fields.update({{"op", "sgemm"},
                     {"precision", to_string(s.precision)},
                     {"accumulate", "fp32"},
                     {"library", s.library},
                     {"m", shape.m},
                     {"n", shape.n},
                     {"k", shape.k},
                     {"flops", flops},
                     {"bytes", (static_cast<std::uint64_t>(shape.m) * shape.k +
                                static_cast<std::uint64_t>(shape.k) * shape.n) *
                                       input_element_bytes(s.precision) +
                                   static_cast<std::uint64_t>(shape.m) * shape.n * 4}});
      if (!square) fields["batch"] = shape.m;
      if (gpu) {
        const auto& gpus = gpu_inventory().gpus;
        const auto device = static_cast<std::size_t>(slot.device);
        fields["peak_source"] =
            flop_peak_source(device < gpus.size() ? gpus[device].name : std::string(), s.precision);
      }
      if (square && slot.view != ComputeView::gpu_pinned && slot.view != ComputeView::gpu_pageable)
        fields["headline"] =
            fmt::format("sgemm {}{}{}", s.series, *s.series ? " " : "", to_string(slot.view));
      const std::string size_label =
          square ? std::to_string(shape.n) : fmt::format("batch:{}", shape.m);
      const bool capped = config.quick && !gpu && flops > kQuickCpuMatmulMaxFlops;
      auto spec = measured_case(
          fmt::format("compute/sgemm/{}/{}/{}/{}{}", shape.group, s.slug, to_string(slot.view),
                      size_label, gpu ? config.gpu_suffix(slot.device) : ""),
          "compute", fields, gpu ? Clock::device_events : Clock::host_wall,
          [c, gpu, capped, reuse] {
            if (capped)
              return MeasuredCase::skip(
                  "quick mode skips CPU matmuls above 2*1024^3 FLOP (seconds per multiply on "
                  "a small CPU); --full runs them");
            return gpu ? OFFLOADBENCH_GPU_RUNNER(setup_matmul_gpu)(c, *reuse) : setup_matmul_cpu(c);
          });
      spec.min_time_s = slot.view == ComputeView::gpu_kernel ? cold_min_time(config) : 0.0;
      register_case(std::move(spec));
    }
  }
}

void register_matmul(const RunConfig& config) {
  const auto reuse = std::make_shared<ReusedArrays<MatmulGpuArrays>>();
  for (int n : square_sizes(config)) register_matmul_shape(config, {"square", n, n, n, "n"}, reuse);
  for (int batch : mlp_batches(config)) {
    register_matmul_shape(config, {"mlp_784x128", batch, 128, 784, "batch"}, reuse);
    register_matmul_shape(config, {"mlp_128x10", batch, 10, 128, "batch"}, reuse);
  }
}

}  // namespace

void register_compute_suite(const RunConfig& config) {
  register_elementwise(config);
  if (!config.refine) register_matmul(config);  // matmul sweeps are not refined
}

Suite compute_suite() {
  return {"compute",
          "elementwise ops and matmul: GPU kernel only, GPU with transfers (pinned, pageable), CPU "
          "1 and all threads",
          register_compute_suite,
          "elements per array of the elementwise ops (matmul orders are fixed)", "elements"};
}

}  // namespace offloadbench
