// The streams suite's GPU runners. Every kernel case first calibrates the FMA iterations so the
// kernel lasts workload_ratio × the H2D time of the same data, measures the three stages alone
// and the serial pass (the bound and the speedups come from those), checks one pass's output
// against the CPU twin, then times passes with CUDA events (and the host wall clock around each).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/streams.h"
#include "benchmarks/streams_check.h"
#include "benchmarks/streams_model.h"
#include "harness/benchmark_case.h"
#include "harness/cuda/cuda_raii.h"
#include "harness/gpu_info.h"
#include "harness/sizes.h"
#include "harness/system_info.h"
#include "kernels/fma_workload.h"
#include "kernels/tolerance.h"

namespace offloadbench {

namespace {

using WallClock = std::chrono::steady_clock;

double seconds_since(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

// Times one pass per iteration: device seconds (the pass's own events, which it synchronizes on)
// go to Google Benchmark; the totals of device and host wall time come back.
template <typename Pass>
std::pair<double, double> time_passes(benchmark::State& state, Pass&& pass) {
  double device_s = 0, host_s = 0;
  for (auto _ : state) {
    const auto start = WallClock::now();
    const double seconds = pass();
    host_s += seconds_since(start);
    device_s += seconds;
    state.SetIterationTime(seconds);
  }
  return {device_s, host_s};
}

// in: host → device; out: device → host. Bidirectional uses in for H2D and out for D2H at once.
struct Buffers {
  std::uint64_t elements = 0;
  HostBuffer host_in, host_out;
  DeviceBuffer device_in, device_out;
};

std::string allocation_problem(const StreamsCase& c) {
  if (auto problem = device_fit_problem(2 * c.bytes); !problem.empty()) return problem;
  const auto available = host_memory_available_bytes();
  if (available && 2 * c.bytes + (512ull << 20) > available)
    return fmt::format("needs {} of host memory, {} available", format_size(2 * c.bytes), format_size(available));
  return "";
}

Buffers allocate_buffers(const StreamsCase& c) {
  Buffers b;
  b.elements = c.bytes / sizeof(float);
  b.host_in = HostBuffer(c.bytes, c.host_memory);
  b.host_out = HostBuffer(c.bytes, c.host_memory);
  b.device_in = DeviceBuffer(c.bytes);
  b.device_out = DeviceBuffer(c.bytes);
  float* in = b.host_in.as<float>();
  const auto n = static_cast<std::int64_t>(b.elements);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) in[i] = streams_input_value(static_cast<std::uint64_t>(i));
  return b;
}

// ---- the three stages, per chunk ----
void copy_in(const Buffers& b, Chunk chunk, cudaStream_t stream) {
  CUDA_CHECK(cudaMemcpyAsync(b.device_in.as<float>() + chunk.offset, b.host_in.as<float>() + chunk.offset,
                             chunk.count * sizeof(float), cudaMemcpyHostToDevice, stream));
}

void compute(const Buffers& b, Chunk chunk, int fma_iterations, cudaStream_t stream) {
  fma_workload(b.device_out.as<float>() + chunk.offset, b.device_in.as<float>() + chunk.offset, chunk.count,
               fma_iterations, stream);
}

void copy_out(const Buffers& b, Chunk chunk, cudaStream_t stream) {
  CUDA_CHECK(cudaMemcpyAsync(b.host_out.as<float>() + chunk.offset, b.device_out.as<float>() + chunk.offset,
                             chunk.count * sizeof(float), cudaMemcpyDeviceToHost, stream));
}

// What naive code does: blocking copies around a kernel on the legacy default stream.
void enqueue_serial(const Buffers& b, int fma_iterations) {
  const auto bytes = b.elements * sizeof(float);
  CUDA_CHECK(cudaMemcpy(b.device_in.data(), b.host_in.data(), bytes, cudaMemcpyHostToDevice));
  fma_workload(b.device_out.as<float>(), b.device_in.as<float>(), b.elements, fma_iterations, nullptr);
  CUDA_CHECK(cudaMemcpy(b.host_out.data(), b.device_out.data(), bytes, cudaMemcpyDeviceToHost));
}

// ---- timing ----
// Device seconds of what `enqueue` puts on `stream`, between two events (synchronizes).
double time_on(cudaStream_t stream, const std::function<void()>& enqueue) {
  CudaEvent start, end;
  start.record(stream);
  enqueue();
  end.record(stream);
  return elapsed_seconds(start, end);
}

double median_of_runs(int runs, const std::function<double()>& run) {
  std::vector<double> samples;
  for (int i = 0; i < runs; ++i) samples.push_back(run());
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

// K streams joined by events: one pass enqueues every chunk and returns its device seconds.
class Pipeline {
 public:
  explicit Pipeline(int streams) : streams_(streams), joined_(streams) {}

  double run(const Buffers& b, const std::vector<Chunk>& chunks, IssueOrder order, int fma_iterations) {
    const auto k = streams_.size();
    const cudaStream_t lead = streams_[0].get();
    start_.record(lead);
    for (std::size_t s = 1; s < k; ++s) CUDA_CHECK(cudaStreamWaitEvent(streams_[s].get(), start_.get(), 0));
    auto on = [&](std::size_t i) { return streams_[i % k].get(); };
    if (order == IssueOrder::depth_first) {
      for (std::size_t i = 0; i < chunks.size(); ++i) {
        copy_in(b, chunks[i], on(i));
        compute(b, chunks[i], fma_iterations, on(i));
        copy_out(b, chunks[i], on(i));
      }
    } else {
      for (std::size_t i = 0; i < chunks.size(); ++i) copy_in(b, chunks[i], on(i));
      for (std::size_t i = 0; i < chunks.size(); ++i) compute(b, chunks[i], fma_iterations, on(i));
      for (std::size_t i = 0; i < chunks.size(); ++i) copy_out(b, chunks[i], on(i));
    }
    for (std::size_t s = 1; s < k; ++s) {
      joined_[s].record(streams_[s].get());
      CUDA_CHECK(cudaStreamWaitEvent(lead, joined_[s].get(), 0));
    }
    end_.record(lead);
    return elapsed_seconds(start_, end_);
  }

 private:
  std::vector<CudaStream> streams_;
  std::vector<CudaEvent> joined_;
  CudaEvent start_, end_;
};

// ---- calibration and the measured parts ----
struct Parts {
  int fma_iterations = 0;
  StageTimes stages;
  double serial_s = 0;
  int async_engine_count = 0;
  OverlapBound bound = OverlapBound::no_overlap;
  double bound_s = 0;
};

double kernel_seconds(const Buffers& b, int fma_iterations, cudaStream_t stream) {
  const Chunk all{0, b.elements};
  return median_of_runs(3, [&] { return time_on(stream, [&] { compute(b, all, fma_iterations, stream); }); });
}

// Two probes give a linear model; one more point corrects it near the target.
int calibrate_fma_iterations(const Buffers& b, double target_s, cudaStream_t stream) {
  constexpr int probe_a = 16, probe_b = 1024;
  const double seconds_b = kernel_seconds(b, probe_b, stream);
  int iterations = fma_iterations_for(target_s, probe_a, kernel_seconds(b, probe_a, stream), probe_b, seconds_b);
  if (iterations != probe_b)
    iterations = fma_iterations_for(target_s, probe_b, seconds_b, iterations, kernel_seconds(b, iterations, stream));
  return iterations;
}

Parts measure_parts(const StreamsCase& c, const Buffers& b, cudaStream_t stream) {
  const Chunk all{0, b.elements};
  Parts p;
  p.stages.h2d_s = median_of_runs(3, [&] { return time_on(stream, [&] { copy_in(b, all, stream); }); });
  p.fma_iterations = calibrate_fma_iterations(b, c.workload_ratio * p.stages.h2d_s, stream);
  p.stages.kernel_s = kernel_seconds(b, p.fma_iterations, stream);
  p.stages.d2h_s = median_of_runs(3, [&] { return time_on(stream, [&] { copy_out(b, all, stream); }); });
  p.serial_s = median_of_runs(3, [&] { return time_on(nullptr, [&] { enqueue_serial(b, p.fma_iterations); }); });
  p.async_engine_count = gpu_inventory().gpus.at(c.device).async_engine_count;
  p.bound = overlap_bound_for(p.async_engine_count);
  p.bound_s = bound_seconds(p.stages, p.bound);
  return p;
}

}  // namespace

// See streams.h. Two slots, pinned and pageable, for one (device, size) at a time.
class StreamsWorkspace {
 public:
  // "" once buffers for c's device, size and memory kind are allocated, else why they cannot be.
  std::string prepare(const StreamsCase& c) {
    if (c.device != device_ || c.bytes != bytes_) release();
    device_ = c.device;
    bytes_ = c.bytes;
    auto& slot = slot_for(c.host_memory);
    if (slot) return "";
    if (auto problem = allocation_problem(c); !problem.empty()) return problem;
    slot.emplace(Slot{allocate_buffers(c), {}});
    return "";
  }
  Buffers& buffers(const StreamsCase& c) { return slot_for(c.host_memory)->buffers; }
  // Calibrated and measured once per workload ratio.
  const Parts& parts(const StreamsCase& c) {
    auto& slot = *slot_for(c.host_memory);
    auto it = slot.parts.find(c.workload_ratio);
    if (it == slot.parts.end()) {
      CudaStream stream;
      it = slot.parts.emplace(c.workload_ratio, measure_parts(c, slot.buffers, stream.get())).first;
    }
    return it->second;
  }
  void release() {
    pinned_.reset();
    pageable_.reset();
    device_ = -1;
    bytes_ = 0;
  }

 private:
  struct Slot {
    Buffers buffers;
    std::map<double, Parts> parts;
  };
  std::optional<Slot>& slot_for(HostMemoryKind kind) { return kind == HostMemoryKind::pinned ? pinned_ : pageable_; }
  int device_ = -1;
  std::uint64_t bytes_ = 0;
  std::optional<Slot> pinned_, pageable_;
};

std::shared_ptr<StreamsWorkspace> make_streams_workspace() { return std::make_shared<StreamsWorkspace>(); }

namespace {

// ---- the output check ----
// Poisons both outputs with NaN, runs one pass, checks it.
std::string verify_pass(const Buffers& b, const std::vector<Chunk>& chunks, int fma_iterations,
                        const std::function<void()>& pass) {
  CUDA_CHECK(cudaMemset(b.device_out.data(), 0xFF, b.device_out.bytes()));
  std::memset(b.host_out.data(), 0xFF, b.host_out.bytes());
  CUDA_CHECK(cudaDeviceSynchronize());  // the memset ran on the legacy stream; the pass may not
  pass();
  CUDA_CHECK(cudaDeviceSynchronize());
  return check_pipeline_output(b.host_in.as<float>(), b.host_out.as<float>(), b.elements, chunks, fma_iterations);
}

void report_parts(benchmark::State& state, const Parts& p, double achieved_s) {
  state.counters["fma_iterations"] = p.fma_iterations;
  state.counters["workload_ratio_measured"] = p.stages.kernel_s / p.stages.h2d_s;
  state.counters["h2d_time_s"] = p.stages.h2d_s;
  state.counters["kernel_time_s"] = p.stages.kernel_s;
  state.counters["d2h_time_s"] = p.stages.d2h_s;
  state.counters["serial_time_s"] = p.serial_s;
  state.counters["bound_time_s"] = p.bound_s;
  state.counters["bound_speedup"] = p.serial_s / p.bound_s;
  state.counters["speedup_over_serial"] = p.serial_s / achieved_s;
  state.counters["overlap_efficiency"] = overlap_efficiency(p.bound_s, achieved_s);
  state.counters["overlap_realized"] = overlap_realized(p.serial_s, p.bound_s, achieved_s);
  state.counters["async_engine_count"] = p.async_engine_count;
}

// The fastest shape of c.search, each timed once after a warm-up pass.
PipelineShape search_best_shape(const StreamsCase& c, const Buffers& b, int fma_iterations) {
  PipelineShape best = c.search.front();
  double best_s = 0;
  for (const auto& shape : c.search) {
    Pipeline pipeline(shape.streams);
    const auto chunks = split_into_chunks(b.elements, shape.chunks);
    pipeline.run(b, chunks, shape.order, fma_iterations);
    const double seconds = pipeline.run(b, chunks, shape.order, fma_iterations);
    if (best_s == 0 || seconds < best_s) {
      best = shape;
      best_s = seconds;
    }
  }
  return best;
}

void run_kernel_case(benchmark::State& state, const StreamsCase& c, StreamsWorkspace& workspace) {
  const Buffers& b = workspace.buffers(c);
  const Parts& parts = workspace.parts(c);
  const int iterations = parts.fma_iterations;

  PipelineShape shape{c.streams, c.chunks, c.order};
  if (c.op == StreamsOp::pipelined_best) {
    shape = search_best_shape(c, b, iterations);
    state.counters["streams"] = shape.streams;
    state.counters["chunks"] = shape.chunks;
    state.counters["breadth_first"] = shape.order == IssueOrder::breadth_first ? 1 : 0;
    state.counters["shapes_searched"] = static_cast<double>(c.search.size());
  }
  const auto chunks = split_into_chunks(b.elements, shape.chunks);
  Pipeline pipeline(shape.streams);
  std::function<double()> pass = [&] { return pipeline.run(b, chunks, shape.order, iterations); };
  if (c.op == StreamsOp::serial) pass = [&] { return time_on(nullptr, [&] { enqueue_serial(b, iterations); }); };

  if (auto problem = verify_pass(b, chunks, iterations, [&] { pass(); }); !problem.empty())
    return invalidate_case(state, problem);
  mark_validated(state);

  const auto [device_s, host_s] = time_passes(state, pass);
  const auto n = static_cast<double>(state.iterations());
  report_device_seconds(state, device_s);
  report_host_seconds(state, host_s);
  report_parts(state, parts, device_s / n);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * c.bytes));
  set_bytes_ceiling(state, 2 * gpu_inventory().gpus.at(c.device).link.theoretical_bytes_per_second());
}

// H2D of `in` and D2H of `out` at once on two streams; each alone is measured for comparison.
void run_bidirectional(benchmark::State& state, const StreamsCase& c, StreamsWorkspace& workspace) {
  const Buffers& b = workspace.buffers(c);
  const Chunk all{0, b.elements};
  CudaStream up, down;
  CudaEvent start, down_done, end;
  auto both = [&] {
    start.record(up.get());
    CUDA_CHECK(cudaStreamWaitEvent(down.get(), start.get(), 0));
    copy_in(b, all, up.get());
    copy_out(b, all, down.get());
    down_done.record(down.get());
    CUDA_CHECK(cudaStreamWaitEvent(up.get(), down_done.get(), 0));
    end.record(up.get());
    return elapsed_seconds(start, end);
  };
  // Check: device_out holds the input pattern, device_in and host_out are poisoned; after one
  // pass host_out must hold the pattern (D2H) and device_in must too (H2D, read back).
  CUDA_CHECK(cudaMemcpy(b.device_out.data(), b.host_in.data(), c.bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(b.device_in.data(), 0xFF, c.bytes));
  std::memset(b.host_out.data(), 0xFF, c.bytes);
  CUDA_CHECK(cudaDeviceSynchronize());
  both();
  const float* in = b.host_in.as<float>();
  const float* out = b.host_out.as<float>();
  if (auto bad = mismatches(out, in, b.elements, Tolerance{0, 0}); !bad.empty())
    return invalidate_case(state, "device-to-host: " + bad);
  CUDA_CHECK(cudaMemcpy(b.host_out.data(), b.device_in.data(), c.bytes, cudaMemcpyDeviceToHost));
  if (auto bad = mismatches(out, in, b.elements, Tolerance{0, 0}); !bad.empty())
    return invalidate_case(state, "host-to-device: " + bad);
  mark_validated(state);

  const double h2d_s = median_of_runs(3, [&] { return time_on(up.get(), [&] { copy_in(b, all, up.get()); }); });
  const double d2h_s = median_of_runs(3, [&] { return time_on(down.get(), [&] { copy_out(b, all, down.get()); }); });
  const auto [device_s, host_s] = time_passes(state, both);
  const double per_pass = device_s / static_cast<double>(state.iterations());
  const double one_direction = std::max(c.bytes / h2d_s, c.bytes / d2h_s);
  report_device_seconds(state, device_s);
  report_host_seconds(state, host_s);
  state.counters["h2d_time_s"] = h2d_s;
  state.counters["d2h_time_s"] = d2h_s;
  state.counters["h2d_bytes_per_second"] = c.bytes / h2d_s;
  state.counters["d2h_bytes_per_second"] = c.bytes / d2h_s;
  state.counters["speedup_over_one_direction"] = 2 * c.bytes / per_pass / one_direction;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * c.bytes));
  set_bytes_ceiling(state, 2 * gpu_inventory().gpus.at(c.device).link.theoretical_bytes_per_second());
}

// The asyncAPI idea: how long the host spends inside the calls, and how much host work it gets
// done while polling for the GPU to finish.
void run_host_overlap(benchmark::State& state, const StreamsCase& c, StreamsWorkspace& workspace) {
  const Buffers& b = workspace.buffers(c);
  const int iterations = workspace.parts(c).fma_iterations;
  CudaStream stream_owner;
  const cudaStream_t stream = c.synchronous_api ? nullptr : stream_owner.get();
  const Chunk all{0, b.elements};
  auto issue = [&] {
    if (c.synchronous_api) return enqueue_serial(b, iterations);
    copy_in(b, all, stream);
    compute(b, all, iterations, stream);
    copy_out(b, all, stream);
  };
  if (auto problem = verify_pass(b, {all}, iterations, issue); !problem.empty()) return invalidate_case(state, problem);
  mark_validated(state);

  constexpr int calibration_units = 4096;  // what one unit of host work costs here
  double sink = 0;
  const auto unit_start = WallClock::now();
  for (int i = 0; i < calibration_units; ++i) sink = host_work_unit(sink);
  const double unit_s = seconds_since(unit_start) / calibration_units;

  CudaEvent start, end;
  double device_s = 0, host_s = 0, api_s = 0, units = 0;
  for (auto _ : state) {
    const auto t0 = WallClock::now();
    start.record(stream);
    issue();
    end.record(stream);
    api_s += seconds_since(t0);
    cudaError_t rc;
    while ((rc = cudaEventQuery(end.get())) == cudaErrorNotReady) {
      sink = host_work_unit(sink);
      ++units;
    }
    CUDA_CHECK(rc);
    // Some runtimes keep "not ready" as the last error; clear only that, so the next launch
    // check does not report it.
    if (cudaPeekAtLastError() == cudaErrorNotReady) static_cast<void>(cudaGetLastError());
    host_s += seconds_since(t0);
    const double seconds = elapsed_seconds(start, end);
    device_s += seconds;
    state.SetIterationTime(seconds);
  }
  benchmark::DoNotOptimize(sink);
  const auto n = static_cast<double>(state.iterations());
  report_device_seconds(state, device_s);
  report_host_seconds(state, host_s);
  state.counters["host_api_time_s"] = api_s / n;
  state.counters["host_work_units"] = units / n;
  state.counters["host_work_unit_s"] = unit_s;
  state.counters["host_free_fraction"] = units * unit_s / host_s;
  state.counters["fma_iterations"] = iterations;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * c.bytes));
  set_bytes_ceiling(state, 2 * gpu_inventory().gpus.at(c.device).link.theoretical_bytes_per_second());
}

}  // namespace

void run_streams_gpu(benchmark::State& state, const StreamsCase& c, StreamsWorkspace* shared) {
  if (auto reason = gpu_unavailable_reason(c.device); !reason.empty()) return skip_case(state, reason);
  StreamsWorkspace own;
  StreamsWorkspace& workspace = shared ? *shared : own;
  // A CUDA error or a failed calibration at run time skips the case with its text; the RAII
  // owners release whatever was set up so far, the shared workspace included.
  try {
    CUDA_CHECK(cudaSetDevice(c.device));
    if (auto problem = workspace.prepare(c); !problem.empty()) return skip_case(state, problem);
    switch (c.op) {
      case StreamsOp::bidirectional: run_bidirectional(state, c, workspace); break;
      case StreamsOp::host_overlap: run_host_overlap(state, c, workspace); break;
      default: run_kernel_case(state, c, workspace); break;
    }
    if (c.release_after) workspace.release();
  } catch (const std::exception& e) {
    workspace.release();
    skip_case(state, e.what());
  }
}

}  // namespace offloadbench
