// The streams suite's GPU runners. Every kernel case first calibrates the FMA iterations so the
// kernel lasts workload_ratio × the H2D time of the same data, measures the three stages alone
// and the serial pass (the bound and the speedups come from those), checks one pass's output
// against the CPU twin; then the measurement layer times passes with CUDA events (and the host wall
// clock around each). Passes are enqueued inside the timed window, as user code does; the row's
// host_enqueue_time_s and enqueue_bound say when enqueuing took longer than the device did.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/streams/streams_cases.h"
#include "benchmarks/streams/streams_check.h"
#include "benchmarks/streams/streams_model.h"
#include "harness/benchmark_case.h"
#include "harness/cuda/event_timer.h"
#include "harness/cuda/gpu_checks.h"
#include "harness/gpu_info.h"
#include "harness/system_info.h"
#include "kernels/cuda/cuda_raii.h"
#include "kernels/fma_workload.h"
#include "kernels/tolerance.h"

namespace offloadbench {

namespace {

// in: host → device; out: device → host. Bidirectional uses in for H2D and out for D2H at once.
struct Buffers {
  std::uint64_t elements = 0;
  HostBuffer host_in, host_out;
  DeviceBuffer device_in, device_out;
};

std::string allocation_problem(const StreamsCase& c) {
  if (auto problem = device_fit_problem(2 * c.bytes); !problem.empty()) return problem;
  return host_fit_problem(2 * c.bytes);
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
  CUDA_CHECK(cudaMemcpyAsync(b.device_in.as<float>() + chunk.offset,
                             b.host_in.as<float>() + chunk.offset, chunk.count * sizeof(float),
                             cudaMemcpyHostToDevice, stream));
}

void compute(const Buffers& b, Chunk chunk, int fma_iterations, cudaStream_t stream) {
  fma_workload(b.device_out.as<float>() + chunk.offset, b.device_in.as<float>() + chunk.offset,
               chunk.count, fma_iterations, stream);
}

void copy_out(const Buffers& b, Chunk chunk, cudaStream_t stream) {
  CUDA_CHECK(cudaMemcpyAsync(b.host_out.as<float>() + chunk.offset,
                             b.device_out.as<float>() + chunk.offset, chunk.count * sizeof(float),
                             cudaMemcpyDeviceToHost, stream));
}

// What naive code does: blocking copies around a kernel on the legacy default stream.
void enqueue_serial(const Buffers& b, int fma_iterations) {
  const auto bytes = b.elements * sizeof(float);
  CUDA_CHECK(cudaMemcpy(b.device_in.data(), b.host_in.data(), bytes, cudaMemcpyHostToDevice));
  fma_workload(b.device_out.as<float>(), b.device_in.as<float>(), b.elements, fma_iterations,
               nullptr);
  CUDA_CHECK(cudaMemcpy(b.host_out.data(), b.device_out.data(), bytes, cudaMemcpyDeviceToHost));
}

// ---- timing ----
// Device seconds of what `enqueue` puts on `stream`, by the measurement layer's event timer.
double time_on(cudaStream_t stream, const std::function<void()>& enqueue) {
  EventTimerOptions timing;
  timing.stream = stream;
  EventTimer timer(timing);
  return time_once(timer, enqueue);
}

// The median of three such timings: the stage times the bound and the speedups are made of.
double median_seconds_on(cudaStream_t stream, const std::function<void()>& enqueue) {
  return median_of(3, [&] { return time_on(stream, enqueue); });
}

// K streams: one pass forks from the lead stream, enqueues every chunk, and joins back to it.
class Pipeline {
 public:
  explicit Pipeline(int streams) : streams_(streams), joined_(streams) {}

  cudaStream_t lead() const { return streams_[0].get(); }

  void enqueue(const Buffers& b, const std::vector<Chunk>& chunks, IssueOrder order,
               int fma_iterations) {
    const auto k = streams_.size();
    forked_.record(lead());
    for (std::size_t s = 1; s < k; ++s)
      CUDA_CHECK(cudaStreamWaitEvent(streams_[s].get(), forked_.get(), 0));
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
      CUDA_CHECK(cudaStreamWaitEvent(lead(), joined_[s].get(), 0));
    }
  }

 private:
  std::vector<CudaStream> streams_;
  std::vector<CudaEvent> joined_;
  CudaEvent forked_;
};

// ---- calibration and the measured parts ----
struct Parts {
  int fma_iterations = 0;
  StageTimes stages;
  double serial_s = 0;
  int async_engine_count = 0;
  OverlapBound bound = OverlapBound::no_overlap;
  double bound_s = 0;
  double both_directions_s = 0;  // H2D and D2H of the whole buffer at once (two copy engines only)
  double shared_link_bound_s = 0;
  int calibration_attempts = 0;  // > 1: the first calibration disagreed with its own serial pass
};

double kernel_seconds(const Buffers& b, int fma_iterations, cudaStream_t stream) {
  const Chunk all{0, b.elements};
  return median_seconds_on(stream, [&] { compute(b, all, fma_iterations, stream); });
}

// Two probes give a linear model; one more point corrects it near the target.
int calibrate_fma_iterations(const Buffers& b, double target_s, cudaStream_t stream) {
  constexpr int probe_a = 16, probe_b = 1024;
  const double seconds_b = kernel_seconds(b, probe_b, stream);
  int iterations =
      fma_iterations_for(target_s, probe_a, kernel_seconds(b, probe_a, stream), probe_b, seconds_b);
  if (iterations != probe_b)
    iterations = fma_iterations_for(target_s, probe_b, seconds_b, iterations,
                                    kernel_seconds(b, iterations, stream));
  return iterations;
}

// The whole buffer in and out at once on two streams: what the shared link allows both ways.
double both_directions_seconds(const Buffers& b, cudaStream_t up) {
  const Chunk all{0, b.elements};
  CudaStream down;
  EventTimerOptions timing;
  timing.stream = up;
  timing.side_streams = {down.get()};
  return median_of(3, [&] {
    EventTimer timer(timing);
    return time_once(timer, [&] {
      copy_in(b, all, up);
      copy_out(b, all, down.get());
    });
  });
}

// Copies both ways and a kernel, untimed, for at least kWarmUpSeconds: the first work at a new size
// meets an idle link and idle clocks, and a stage timed then sizes the kernel wrongly.
void warm_up(const Buffers& b, cudaStream_t stream) {
  constexpr double kWarmUpSeconds = 0.05;
  const Chunk all{0, b.elements};
  const double start = steady_wall_clock().now_seconds();
  for (int pass = 0; pass < 3 || steady_wall_clock().now_seconds() - start < kWarmUpSeconds;
       ++pass) {
    copy_in(b, all, stream);
    compute(b, all, 16, stream);
    copy_out(b, all, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (pass > 1000) break;
  }
}

Parts measure_parts(const StreamsCase& c, const Buffers& b, cudaStream_t stream) {
  const Chunk all{0, b.elements};
  Parts p;
  warm_up(b, stream);
  // Calibrated again (at most three times) while the serial pass disagrees with its stages.
  for (p.calibration_attempts = 1;; ++p.calibration_attempts) {
    p.stages.h2d_s = median_seconds_on(stream, [&] { copy_in(b, all, stream); });
    p.fma_iterations = calibrate_fma_iterations(b, c.workload_ratio * p.stages.h2d_s, stream);
    p.stages.kernel_s = kernel_seconds(b, p.fma_iterations, stream);
    p.stages.d2h_s = median_seconds_on(stream, [&] { copy_out(b, all, stream); });
    p.serial_s = median_seconds_on(nullptr, [&] { enqueue_serial(b, p.fma_iterations); });
    if (calibration_consistent(p.stages, p.serial_s) || p.calibration_attempts >= 3) break;
  }
  p.async_engine_count = gpu_inventory().gpus.at(c.device).async_engine_count;
  p.bound = overlap_bound_for(p.async_engine_count);
  p.bound_s = bound_seconds(p.stages, p.bound);
  if (p.bound == OverlapBound::two_copy_engines)
    p.both_directions_s = both_directions_seconds(b, stream);
  p.shared_link_bound_s = shared_link_bound_seconds(p.stages, p.bound, p.both_directions_s);
  return p;
}

}  // namespace

// See streams_cases.h. Two slots, pinned and pageable, for one (device, size) at a time.
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
  std::optional<Slot>& slot_for(HostMemoryKind kind) {
    return kind == HostMemoryKind::pinned ? pinned_ : pageable_;
  }
  int device_ = -1;
  std::uint64_t bytes_ = 0;
  std::optional<Slot> pinned_, pageable_;
};

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
  return check_pipeline_output(b.host_in.as<float>(), b.host_out.as<float>(), b.elements, chunks,
                               fma_iterations);
}

void report_parts(benchmark::State& state, const Parts& p, double achieved_s) {
  state.counters["fma_iterations"] = p.fma_iterations;
  state.counters["workload_ratio_measured"] = p.stages.kernel_s / p.stages.h2d_s;
  state.counters["h2d_time_s"] = p.stages.h2d_s;
  state.counters["kernel_time_s"] = p.stages.kernel_s;
  state.counters["d2h_time_s"] = p.stages.d2h_s;
  state.counters["serial_time_s"] = p.serial_s;
  state.counters["calibration_attempts"] = p.calibration_attempts;
  state.counters["calibration_consistent"] = calibration_consistent(p.stages, p.serial_s) ? 1 : 0;
  state.counters["bound_time_s"] = p.bound_s;
  state.counters["bound_speedup"] = p.serial_s / p.bound_s;
  state.counters["speedup_over_serial"] = p.serial_s / achieved_s;
  state.counters["overlap_efficiency"] = overlap_efficiency(p.bound_s, achieved_s);
  state.counters["overlap_realized"] = overlap_realized(p.serial_s, p.bound_s, achieved_s);
  if (p.both_directions_s > 0) state.counters["both_directions_time_s"] = p.both_directions_s;
  state.counters["shared_link_bound_time_s"] = p.shared_link_bound_s;
  state.counters["shared_link_efficiency"] = overlap_efficiency(p.shared_link_bound_s, achieved_s);
  state.counters["async_engine_count"] = p.async_engine_count;
}

// The fastest shape of c.search by the median of three timed passes after a warm-up pass (one
// timing each picked a breadth-first shape 38% slower than the depth-first one at 64 MiB on an
// H100).
PipelineShape search_best_shape(const StreamsCase& c, const Buffers& b, int fma_iterations) {
  PipelineShape best = c.search.front();
  double best_s = 0;
  for (const auto& shape : c.search) {
    Pipeline pipeline(shape.streams);
    const auto chunks = split_into_chunks(b.elements, shape.chunks);
    auto pass = [&] { pipeline.enqueue(b, chunks, shape.order, fma_iterations); };
    time_on(pipeline.lead(), pass);
    const double seconds = median_seconds_on(pipeline.lead(), pass);
    if (best_s == 0 || seconds < best_s) {
      best = shape;
      best_s = seconds;
    }
  }
  return best;
}

// Frees the suite's shared workspace when the case holding it is torn down (after its last
// repetition). Not copyable: a copied-from temporary would release the workspace as it died (it
// did, once: every case re-pinned and re-calibrated, so rows of one group did not share their
// serial time).
struct ReleaseWorkspace {
  explicit ReleaseWorkspace(std::shared_ptr<StreamsWorkspace> w) : workspace(std::move(w)) {}
  ReleaseWorkspace(const ReleaseWorkspace&) = delete;
  ReleaseWorkspace& operator=(const ReleaseWorkspace&) = delete;
  ~ReleaseWorkspace() {
    if (armed) workspace->release();
  }
  std::shared_ptr<StreamsWorkspace> workspace;
  bool armed = true;
};

// Every case's measurement: one pass per call, `bytes` in and out, against twice the link's
// ceiling.
Measurement pass_measurement(const StreamsCase& c, EventTimerOptions timing) {
  Measurement m;
  m.work.bytes = 2.0 * static_cast<double>(c.bytes);
  m.device = std::make_shared<EventTimer>(std::move(timing));
  m.bytes_ceiling = 2 * gpu_inventory().gpus.at(c.device).link.ceiling_bytes_per_second();
  return m;
}

Measurement kernel_case(const StreamsCase& c, StreamsWorkspace& workspace) {
  struct KernelRun {
    const Buffers* buffers;
    Parts parts;
    PipelineShape shape;
    std::vector<Chunk> chunks;
    std::unique_ptr<Pipeline> pipeline;
  };
  auto run = std::make_shared<KernelRun>();
  run->buffers = &workspace.buffers(c);
  run->parts = workspace.parts(c);
  const Buffers& b = *run->buffers;
  const int iterations = run->parts.fma_iterations;
  run->shape = {c.streams, c.chunks, c.order};
  if (c.op == StreamsOp::pipelined_best) run->shape = search_best_shape(c, b, iterations);
  run->chunks = split_into_chunks(b.elements, run->shape.chunks);
  run->pipeline = std::make_unique<Pipeline>(run->shape.streams);

  // Serial runs on the legacy default stream, where its blocking copies are ordered with the
  // events.
  const bool serial = c.op == StreamsOp::serial;
  EventTimerOptions timing;
  timing.stream = serial ? nullptr : run->pipeline->lead();
  Measurement m = pass_measurement(c, timing);
  m.call = [run, serial, iterations] {
    if (serial)
      enqueue_serial(*run->buffers, iterations);
    else
      run->pipeline->enqueue(*run->buffers, run->chunks, run->shape.order, iterations);
  };
  m.verify = [run, iterations, call = m.call] {
    return verify_pass(*run->buffers, run->chunks, iterations, call);
  };
  m.report = [run, c](benchmark::State& state, const Totals& totals) {
    report_parts(state, run->parts, totals.device_seconds / static_cast<double>(totals.calls));
    if (c.op != StreamsOp::pipelined_best) return;
    state.counters["streams"] = run->shape.streams;
    state.counters["chunks"] = run->shape.chunks;
    state.counters["breadth_first"] = run->shape.order == IssueOrder::breadth_first ? 1 : 0;
    state.counters["shapes_searched"] = static_cast<double>(c.search.size());
  };
  return m;
}

// One direction alone, `bytes` timed by `time`: a side rate <direction>_time_s,
// <direction>_bytes_per_second.
SideRate one_direction(const char* direction, std::uint64_t bytes, std::function<double()> time) {
  SideRate side;
  side.rate_counter = fmt::format("{}_bytes_per_second", direction);
  side.time_counter = fmt::format("{}_time_s", direction);
  side.bytes = static_cast<double>(bytes);
  side.time = std::move(time);
  return side;
}

// H2D of `in` and D2H of `out` at once on two streams; each alone is measured for comparison.
Measurement bidirectional_case(const StreamsCase& c, StreamsWorkspace& workspace) {
  struct BothRun {
    const Buffers* buffers;
    CudaStream up, down;
  };
  auto run = std::make_shared<BothRun>();
  run->buffers = &workspace.buffers(c);
  const Chunk all{0, run->buffers->elements};
  EventTimerOptions timing;
  timing.stream = run->up.get();
  timing.side_streams = {run->down.get()};
  Measurement m = pass_measurement(c, timing);
  m.call = [run, all] {
    copy_in(*run->buffers, all, run->up.get());
    copy_out(*run->buffers, all, run->down.get());
  };
  // device_out holds the input pattern, device_in and host_out are poisoned; after one pass
  // host_out must hold the pattern (D2H) and device_in must too (H2D, read back).
  m.verify = [run, c, call = m.call]() -> std::string {
    const Buffers& b = *run->buffers;
    CUDA_CHECK(cudaMemcpy(b.device_out.data(), b.host_in.data(), c.bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(b.device_in.data(), 0xFF, c.bytes));
    std::memset(b.host_out.data(), 0xFF, c.bytes);
    CUDA_CHECK(cudaDeviceSynchronize());
    call();
    CUDA_CHECK(cudaDeviceSynchronize());
    const float* in = b.host_in.as<float>();
    const float* out = b.host_out.as<float>();
    if (auto bad = mismatches(out, in, b.elements, Tolerance{0, 0}); !bad.empty())
      return "device-to-host: " + bad;
    CUDA_CHECK(cudaMemcpy(b.host_out.data(), b.device_in.data(), c.bytes, cudaMemcpyDeviceToHost));
    if (auto bad = mismatches(out, in, b.elements, Tolerance{0, 0}); !bad.empty())
      return "host-to-device: " + bad;
    return "";
  };
  const auto up = run->up.get(), down = run->down.get();
  m.side_rates = {one_direction("h2d", c.bytes,
                                [run, all, up] {
                                  return median_seconds_on(
                                      up, [&] { copy_in(*run->buffers, all, up); });
                                }),
                  one_direction("d2h", c.bytes, [run, all, down] {
                    return median_seconds_on(down, [&] { copy_out(*run->buffers, all, down); });
                  })};
  m.report = [c](benchmark::State& state, const Totals& totals) {
    const double per_pass = totals.device_seconds / static_cast<double>(totals.calls);
    const double one_direction = std::max(totals.side_bytes_per_second("h2d_bytes_per_second"),
                                          totals.side_bytes_per_second("d2h_bytes_per_second"));
    state.counters["speedup_over_one_direction"] = 2 * c.bytes / per_pass / one_direction;
  };
  return m;
}

// The asyncAPI idea: how long the host spends inside the calls, and how much host work it gets
// done while the GPU works (the layer calls while_waiting until the pass is done).
Measurement host_overlap_case(const StreamsCase& c, StreamsWorkspace& workspace) {
  struct OverlapRun {
    const Buffers* buffers;
    int iterations = 0;
    CudaStream stream;
    double sink = 0, units = 0, unit_s = 0;
  };
  auto run = std::make_shared<OverlapRun>();
  run->buffers = &workspace.buffers(c);
  run->iterations = workspace.parts(c).fma_iterations;
  const cudaStream_t stream = c.synchronous_api ? nullptr : run->stream.get();
  const Chunk all{0, run->buffers->elements};
  EventTimerOptions timing;
  timing.stream = stream;
  Measurement m = pass_measurement(c, timing);
  m.call = [run, stream, all, synchronous = c.synchronous_api] {
    const Buffers& b = *run->buffers;
    if (synchronous) return enqueue_serial(b, run->iterations);
    copy_in(b, all, stream);
    compute(b, all, run->iterations, stream);
    copy_out(b, all, stream);
  };
  m.verify = [run, all, call = m.call] {
    constexpr int calibration_units = 4096;  // what one unit of host work costs here
    run->unit_s = wall_seconds([&] {
                    for (int i = 0; i < calibration_units; ++i)
                      run->sink = host_work_unit(run->sink);
                  }) /
                  calibration_units;
    return verify_pass(*run->buffers, {all}, run->iterations, call);
  };
  m.while_waiting = [run] {
    run->sink = host_work_unit(run->sink);
    ++run->units;
  };
  m.report = [run](benchmark::State& state, const Totals& totals) {
    benchmark::DoNotOptimize(run->sink);
    const auto calls = static_cast<double>(totals.calls);
    state.counters["host_api_time_s"] = totals.enqueue_seconds / calls;
    state.counters["host_work_units"] = run->units / calls;
    state.counters["host_work_unit_s"] = run->unit_s;
    state.counters["host_free_fraction"] = run->units * run->unit_s / totals.host_seconds;
    state.counters["fma_iterations"] = run->iterations;
    run->units = 0;  // the next Google Benchmark call counts afresh
  };
  return m;
}

}  // namespace

MeasuredCase setup_streams_gpu(const StreamsCase& c, std::shared_ptr<StreamsWorkspaceSlot> slot) {
  if (auto reason = gpu_unavailable_reason(c.device); !reason.empty())
    return MeasuredCase::skip(reason);
  if (!slot->workspace) slot->workspace = std::make_shared<StreamsWorkspace>();
  auto workspace = slot->workspace;
  // A throw from here on skips the case; the workspace is released so nothing half-made stays.
  auto release = std::make_shared<ReleaseWorkspace>(workspace);
  CUDA_CHECK(cudaSetDevice(c.device));
  if (auto problem = workspace->prepare(c); !problem.empty()) return MeasuredCase::skip(problem);
  MeasuredCase made;
  switch (c.op) {
    case StreamsOp::bidirectional:
      made.measurement = bidirectional_case(c, *workspace);
      break;
    case StreamsOp::host_overlap:
      made.measurement = host_overlap_case(c, *workspace);
      break;
    default:
      made.measurement = kernel_case(c, *workspace);
      break;
  }
  // The measurement points into the workspace, so it holds it; the suite's last case frees it when
  // torn down, after its last repetition (a workspace of the case's own goes with the case anyway).
  release->armed = c.release_after;
  made.measurement.report = [report = std::move(made.measurement.report), release,
                             device = c.device](benchmark::State& state, const Totals& totals) {
    report(state, totals);
    report_link_under_load(state, device, 2);  // every case moves its bytes both ways
  };
  return made;
}

}  // namespace offloadbench
