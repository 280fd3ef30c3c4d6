// The mlp suite's GPU runner. A step is enqueued op by op (eager) or replayed as a CUDA Graph
// captured once per input slot; its batch is resident, copied from pageable memory first, or
// prefetched from pinned memory on a copy stream during the previous step. The measurement layer
// times batches of kStepsPerBatch steps with CUDA events (GPU busy time; the copy stream joined
// before the end) and the host clock (launch time, and wall time to the sync); Google Benchmark's
// iterations count steps. Checked before timing: loss and gradients (logits for inference) against
// the CPU reference, then kMlpCheckSteps steps through the timed path must lower the loss.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/mlp/mlp_cases.h"
#include "harness/benchmark_case.h"
#include "harness/cuda/event_timer.h"
#include "harness/cuda/gpu_checks.h"
#include "harness/system_info.h"
#include "kernels/cuda/cuda_graph.h"
#include "kernels/cuda/cuda_raii.h"
#include "kernels/mlp_check.h"
#include "kernels/mlp_gpu.h"

namespace offloadbench {

namespace {

constexpr int kStepsPerBatch = 10;
constexpr float kInitialLossScale = 65536.0f;  // GradScaler's default

// Device memory in use on the current device (everything, not only this case's).
std::size_t device_used_bytes() {
  std::size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return total - free;
}

// One case's GPU state: the model, its input slots, streams, events and (graph mode) one graph per
// slot.
class GpuStepper {
 public:
  GpuStepper(const MlpCase& c, const MlpDataset& data, const std::vector<float>& params)
      : c_(c),
        data_(data),
        model_(c.shape, c.batch, c.precision, params),
        config_(c.optimizer_config()) {
    rows_ = c.samples_per_step();
    x_bytes_ = static_cast<std::size_t>(rows_ * c.shape.inputs) * sizeof(float);
    labels_bytes_ = static_cast<std::size_t>(rows_) * sizeof(int);
    const int slots = c.data_path == DataPath::resident   ? data.batches
                      : c.data_path == DataPath::pageable ? 1
                                                          : 2;
    for (int s = 0; s < slots; ++s) {
      x_.emplace_back(x_bytes_);
      labels_.emplace_back(labels_bytes_);
    }
    if (c.data_path == DataPath::resident)
      for (int s = 0; s < slots; ++s) upload(s, s);
    if (c.data_path == DataPath::pinned_overlap) {
      pinned_x_ = HostBuffer(data.x.size() * sizeof(float), HostMemoryKind::pinned);
      pinned_labels_ = HostBuffer(data.labels.size() * sizeof(int), HostMemoryKind::pinned);
      std::memcpy(pinned_x_.data(), data.x.data(), pinned_x_.bytes());
      std::memcpy(pinned_labels_.data(), data.labels.data(), pinned_labels_.bytes());
      prefetch(0, 0);                           // the first step's batch
      compute_done_[1].record(compute_.get());  // nothing uses slot 1 yet
    }
    if (c.precision == Precision::fp16) {
      config_.dynamic_loss_scale = true;
      TrainScalars s;
      s.loss_scale = kInitialLossScale;
      model_.set_scalars(s);
    }
    if (c.launch == LaunchMode::graph) {
      // One eager step first: cuBLAS picks its kernels and loads modules outside the capture. That
      // step trained the model: back to the seeded weights, so graph rows start where eager and CPU
      // rows do (the same initial_loss).
      const TrainScalars start = model_.scalars();
      CUDA_CHECK(cudaDeviceSynchronize());
      enqueue_step(0);
      CUDA_CHECK(cudaStreamSynchronize(compute_.get()));
      for (int s = 0; s < slots; ++s)
        graphs_.push_back(capture_graph(compute_.get(), [&] { enqueue_step(s); }));
      model_.reset(params, start);
    }
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  // Enqueues the next step, its input movement included.
  void step() {
    const int batch = static_cast<int>(step_ % data_.batches);
    int slot = 0;
    if (c_.data_path == DataPath::resident) {
      slot = batch;
    } else if (c_.data_path == DataPath::pageable) {
      CUDA_CHECK(cudaMemcpyAsync(x_[0].data(), data_.x_at(batch, c_.shape.inputs), x_bytes_,
                                 cudaMemcpyHostToDevice, compute_.get()));
      CUDA_CHECK(cudaMemcpyAsync(labels_[0].data(), data_.labels_at(batch), labels_bytes_,
                                 cudaMemcpyHostToDevice, compute_.get()));
    } else {
      slot = static_cast<int>(step_ % 2);
      CUDA_CHECK(cudaStreamWaitEvent(compute_.get(), copy_done_[slot].get(), 0));
    }
    if (c_.launch == LaunchMode::graph)
      graphs_[slot].launch(compute_.get());
    else
      enqueue_step(slot);
    if (c_.data_path == DataPath::pinned_overlap) {
      compute_done_[slot].record(compute_.get());
      prefetch(1 - slot, static_cast<int>((step_ + 1) % data_.batches));  // overlaps with this step
    }
    ++step_;
  }

  cudaStream_t stream() const { return compute_.get(); }
  cudaStream_t copy_stream() const { return copy_.get(); }
  MlpGpuModel& model() { return model_; }

 private:
  void upload(int slot, int batch) {
    CUDA_CHECK(cudaMemcpy(x_[slot].data(), data_.x_at(batch, c_.shape.inputs), x_bytes_,
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(labels_[slot].data(), data_.labels_at(batch), labels_bytes_,
                          cudaMemcpyHostToDevice));
  }

  // Copies `batch` into `slot` on the copy stream once the step that last read the slot is done.
  void prefetch(int slot, int batch) {
    CUDA_CHECK(cudaStreamWaitEvent(copy_.get(), compute_done_[slot].get(), 0));
    const auto offset = static_cast<std::size_t>(batch) * rows_;
    CUDA_CHECK(cudaMemcpyAsync(x_[slot].data(), pinned_x_.as<float>() + offset * c_.shape.inputs,
                               x_bytes_, cudaMemcpyHostToDevice, copy_.get()));
    CUDA_CHECK(cudaMemcpyAsync(labels_[slot].data(), pinned_labels_.as<int>() + offset,
                               labels_bytes_, cudaMemcpyHostToDevice, copy_.get()));
    copy_done_[slot].record(copy_.get());
  }

  void enqueue_step(int slot) {
    const float* x = x_[slot].as<float>();
    const int* labels = labels_[slot].as<int>();
    const cudaStream_t s = compute_.get();
    if (!c_.trains()) return model_.forward(x, s);
    model_.begin_step(s);
    for (int micro = 0; micro < c_.accum_steps(); ++micro)
      model_.forward_backward(x + std::int64_t{micro} * c_.batch * c_.shape.inputs,
                              labels + micro * c_.batch, c_.accum_steps(), s);
    model_.optimizer_step(config_, s);
  }

  const MlpCase& c_;
  const MlpDataset& data_;
  CudaStream compute_, copy_;  // before the model: its cuBLAS handle is destroyed before its stream
  MlpGpuModel model_;
  OptimizerConfig config_;
  std::int64_t rows_ = 0;
  std::size_t x_bytes_ = 0, labels_bytes_ = 0;
  std::vector<DeviceBuffer> x_, labels_;  // input slots
  HostBuffer pinned_x_, pinned_labels_;
  CudaEvent copy_done_[2], compute_done_[2];
  std::vector<CudaGraphExec> graphs_;
  std::int64_t step_ = 0;
};

// The GPU's loss and gradients (logits for inference) on the first micro-batch against the CPU's.
// ‖got − ref‖ / ‖ref‖ over n values: the measured margin a row reports beside its verdict.
double normwise_difference(const float* got, const float* ref, std::size_t n) {
  double diff_sq = 0, ref_sq = 0;
  for (std::size_t i = 0; i < n; ++i) {
    diff_sq += (static_cast<double>(got[i]) - ref[i]) * (static_cast<double>(got[i]) - ref[i]);
    ref_sq += static_cast<double>(ref[i]) * ref[i];
  }
  return std::sqrt(diff_sq / std::max(ref_sq, 1e-300));
}

// `margins` gets the normwise difference of the gradients from the CPU's, whole and per tensor.
std::string check_against_cpu(const MlpCase& c, const MlpDataset& data,
                              const std::vector<float>& params,
                              std::map<std::string, double>& margins) {
  MlpCpuModel cpu(c.shape, c.batch, kMlpWeightSeed);
  cpu.params = params;
  MlpGpuModel gpu(c.shape, c.batch, c.precision, params);
  // The reference multiplies what the GPU multiplies: x, W1 and W2 rounded to the precision.
  const auto x_count = static_cast<std::size_t>(c.batch * c.shape.inputs);
  std::vector<float> x_ref(data.x.begin(), data.x.begin() + static_cast<std::ptrdiff_t>(x_count));
  round_mlp_inputs(cpu.params.data(), x_ref.data(), x_count, c.shape, c.precision);
  DeviceBuffer x(static_cast<std::size_t>(c.batch * c.shape.inputs) * sizeof(float));
  DeviceBuffer labels(static_cast<std::size_t>(c.batch) * sizeof(int));
  CUDA_CHECK(cudaMemcpy(x.data(), data.x.data(), x.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(labels.data(), data.labels.data(), labels.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());  // a pageable cudaMemcpy returns once staged; `stream` is
                                        // non-blocking
  CudaStream stream;
  if (!c.trains()) {
    mlp_forward(cpu.activations(), cpu.params.data(), x_ref.data(), c.shape, c.batch);
    gpu.forward(x.as<float>(), stream.get());
    const auto logits = gpu.logits();
    if (auto problem =
            mlp_gradient_mismatch(logits.data(), cpu.logits.data(), logits.size(), c.precision);
        !problem.empty())
      return "logits: " + problem;
    return "";
  }
  if (c.precision == Precision::fp16) {
    // The case trains with loss scaling; the check uses a scale of B, so (p − y)·scale/B lies in
    // [−1, 1] at every batch: unscaled, batch 4096's would reach fp16's subnormals, and the run's
    // first scale, 65536, overflows fp16 at batch 1.
    cpu.scalars.loss_scale = static_cast<float>(c.batch);
    TrainScalars scaled;
    scaled.loss_scale = cpu.scalars.loss_scale;
    gpu.set_scalars(scaled);
  }
  mlp_begin_step(cpu.grads.data(), &cpu.scalars, static_cast<std::int64_t>(params.size()));
  mlp_forward_backward(cpu.grads.data(), &cpu.scalars, cpu.activations(), cpu.params.data(),
                       x_ref.data(), data.labels.data(), 1, c.shape, c.batch);
  gpu.begin_step(stream.get());
  gpu.forward_backward(x.as<float>(), labels.as<int>(), 1, stream.get());
  const float gpu_loss = gpu.scalars().loss, cpu_loss = cpu.scalars.loss;
  if (!(std::abs(gpu_loss - cpu_loss) <= mlp_loss_rtol(c.precision) * std::abs(cpu_loss)))
    return fmt::format("{} loss {:.8g} differs from the CPU's {:.8g}", to_string(c.precision),
                       gpu_loss, cpu_loss);
  const auto grads = gpu.grads();
  const auto layout = mlp_param_layout(c.shape);
  margins["check_grad_difference"] =
      normwise_difference(grads.data(), cpu.grads.data(), grads.size());
  const std::pair<const char*, std::size_t> tensors[] = {{"w1", layout.w1},
                                                         {"b1", layout.b1},
                                                         {"w2", layout.w2},
                                                         {"b2", layout.b2},
                                                         {nullptr, layout.count}};
  for (int t = 0; t < 4; ++t) {
    const std::size_t begin = tensors[t].second, end = tensors[t + 1].second;
    margins[fmt::format("check_grad_difference_{}", tensors[t].first)] =
        normwise_difference(grads.data() + begin, cpu.grads.data() + begin, end - begin);
  }
  ReluTieAllowance ties;  // fp32 only: the normwise bounds of bf16 and fp16 already cover ReLU ties
  if (c.precision == Precision::fp32)
    ties =
        mlp_relu_tie_allowance(params.data(), data.x.data(), cpu.dlogits.data(), c.shape, c.batch);
  if (auto problem =
          mlp_gradient_mismatch(grads.data(), cpu.grads.data(), grads.size(), c.precision,
                                ties.per_param.empty() ? nullptr : ties.per_param.data());
      !problem
           .empty())  // an invalid row keeps no counters: the per-tensor margins go in its reason
    return fmt::format("gradients: {} (per tensor: w1 {:.3g}, b1 {:.3g}, w2 {:.3g}, b2 {:.3g})",
                       problem, margins["check_grad_difference_w1"],
                       margins["check_grad_difference_b1"], margins["check_grad_difference_w2"],
                       margins["check_grad_difference_b2"]);
  return "";
}

// The case's state, kept across its calls. The stepper holds the device memory the steps use.
struct MlpGpuRun {
  MlpCase c;  // the stepper keeps references to this and to data
  MlpDataset data;
  std::vector<float> params;
  std::size_t used_before = 0;
  std::unique_ptr<GpuStepper> stepper;
  LossCheck loss;
  std::map<std::string, double> margins;  // from the check against the CPU
};

// kMlpCheckSteps steps through the timed path must lower the loss on the first batch.
std::string check_training(const MlpCase& c, MlpGpuRun& run) {
  GpuStepper& stepper = *run.stepper;
  DeviceBuffer x0(static_cast<std::size_t>(c.batch * c.shape.inputs) * sizeof(float));
  DeviceBuffer labels0(static_cast<std::size_t>(c.batch) * sizeof(int));
  CUDA_CHECK(cudaMemcpy(x0.data(), run.data.x.data(), x0.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(
      cudaMemcpy(labels0.data(), run.data.labels.data(), labels0.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());  // as in check_against_cpu
  run.loss.first = stepper.model().loss(x0.as<float>(), labels0.as<int>(), stepper.stream());
  for (int step = 0; step < kMlpCheckSteps; ++step) stepper.step();
  run.loss.last = stepper.model().loss(x0.as<float>(), labels0.as<int>(), stepper.stream());
  run.loss.checked = true;
  CUDA_CHECK(cudaDeviceSynchronize());
  return run.loss.problem();
}

}  // namespace

MeasuredCase setup_mlp_gpu(const MlpCase& c) {
  const std::size_t slots = c.data_path == DataPath::pageable         ? 1
                            : c.data_path == DataPath::pinned_overlap ? 2
                                                                      : 8;
  const std::size_t device_bytes =
      2 * MlpGpuModel::device_bytes(c.shape, c.batch, c.precision) +
      slots * static_cast<std::size_t>(c.samples_per_step() * (c.shape.inputs + 1) * 4);
  if (auto problem = gpu_problem(c.device, device_bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  const std::uint64_t host_bytes = 3 * mlp_dataset_bytes(c.shape, c.samples_per_step());
  if (auto problem = host_fit_problem(host_bytes); !problem.empty())
    return MeasuredCase::skip(problem);

  auto run = std::make_shared<MlpGpuRun>();
  run->c = c;
  run->data = make_mlp_dataset(c.shape, c.samples_per_step());
  run->params.resize(mlp_param_layout(c.shape).count);
  mlp_init_params(run->params.data(), c.shape, kMlpWeightSeed);

  run->used_before = device_used_bytes();
  run->stepper = std::make_unique<GpuStepper>(run->c, run->data, run->params);

  MeasuredCase made;
  Measurement& m = made.measurement;
  // Against the CPU first (a model of its own), then, for training, through the stepper.
  m.verify = [c, run]() -> std::string {
    if (auto problem = check_against_cpu(c, run->data, run->params, run->margins); !problem.empty())
      return problem;
    return c.trains() ? check_training(c, *run) : "";
  };
  m.call = [run] { run->stepper->step(); };
  m.calls_per_batch = kStepsPerBatch;
  // Not gated: a pageable step blocks the host in its copy, and an eager step's many launches
  // are part of what the row measures (host_launch_s says how long they took).
  EventTimerOptions timing;
  timing.stream = run->stepper->stream();
  // Each step prefetches the next step's batch: the timer joins the copy stream so a batch's last
  // prefetch ends inside its window (else copy-bound rows read one copy per batch fast).
  if (c.data_path == DataPath::pinned_overlap) timing.side_streams = {run->stepper->copy_stream()};
  m.device = std::make_shared<EventTimer>(timing);
  m.work.flops = c.flops_per_step();
  m.work.items = static_cast<double>(c.samples_per_step());
  m.work.items_rate = "samples_per_second";
  m.report = [c, run](benchmark::State& state, const Totals& totals) {
    const std::size_t used_after = device_used_bytes();
    const auto steps = static_cast<double>(totals.calls);
    state.counters["host_launch_s"] = totals.enqueue_seconds / steps;
    for (const auto& [name, value] : run->margins) state.counters[name] = value;
    state.counters["gpu_busy_s"] = totals.device_seconds / steps;
    state.counters["peak_device_memory_bytes"] =
        static_cast<double>(used_after > run->used_before ? used_after - run->used_before : 0);
    run->loss.report(state);
    if (c.precision == Precision::fp16) {
      const auto scalars = run->stepper->model().scalars();
      state.counters["loss_scale"] = scalars.loss_scale;
      state.counters["skipped_steps"] = scalars.skipped_steps;
    }
  };
  return made;
}

}  // namespace offloadbench
