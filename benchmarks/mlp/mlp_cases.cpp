// The mlp suite's table of cases. Models: 784-128-10 (MNIST-sized, the default), 12288-64-10 (a
// 64×64 RGB image), and a hidden-width sweep 64…4096 at 784 inputs (full). Batches 1…4096 in powers
// of two (quick: 1, 64, 1024 at 784-128-10). FLOPs: 2·M·N·K per GEMM, forward and backward
// (mlp_train_flops). Every GPU row pairs with the CPU rows of its compare_group; view tells the
// data path apart.
#include "benchmarks/mlp/mlp_cases.h"

#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/property_table.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_runner.h"
#include "harness/results/sizes.h"
#include "harness/system_info.h"
#include "kernels/cpu_gemm.h"
#include "kernels/cpu_vector.h"
#include "kernels/mlp_packed.h"

namespace offloadbench {

// Every mlp step and what it is: the one place a step's properties are written.
constexpr MlpStepInfo kMlpSteps[] = {
    //                       name                trains optimizer          clip  accum
    //                       quick_step_only
    {MlpStep::inference, "inference", false, Optimizer::sgd, 0.0f, 1, false},
    {MlpStep::train_sgd, "train_sgd", true, Optimizer::sgd, 0.0f, 1, false},
    {MlpStep::train_adamw, "train_adamw", true, Optimizer::adamw, 0.0f, 1, false},
    {MlpStep::train_adamw_clip, "train_adamw_clip", true, Optimizer::adamw, 1.0f, 1, true},
    {MlpStep::train_sgd_accum4, "train_sgd_accum4", true, Optimizer::sgd, 0.0f, 4, true},
};

const MlpStepInfo& mlp_step_info(MlpStep step) {
  return row_for(kMlpSteps, &MlpStepInfo::step, step, "kMlpSteps");
}

const char* to_string(MlpStep step) { return mlp_step_info(step).name; }

const char* to_string(MlpSweep sweep) { return sweep == MlpSweep::batch ? "batch" : "hidden"; }

const char* to_string(LaunchMode mode) { return mode == LaunchMode::eager ? "eager" : "graph"; }

namespace {
// Every data path: its name (the row's data_path) and the view its GPU rows are compared in.
struct DataPathInfo {
  DataPath path;
  const char* name;
  const char* view;
};
constexpr DataPathInfo kDataPaths[] = {
    {DataPath::resident, "resident", "gpu_kernel"},
    {DataPath::pageable, "pageable", "gpu_pageable"},
    {DataPath::pinned_overlap, "pinned_overlap", "gpu_pinned_overlap"},
};

const DataPathInfo& data_path_info(DataPath path) {
  return row_for(kDataPaths, &DataPathInfo::path, path, "kDataPaths");
}
}  // namespace

const char* to_string(DataPath path) { return data_path_info(path).name; }

double MlpCase::flops_per_step() const {
  return trains() ? accum_steps() * mlp_train_flops(shape, batch) : mlp_forward_flops(shape, batch);
}

OptimizerConfig MlpCase::optimizer_config() const {
  const auto& info = mlp_step_info(step);
  return make_optimizer_config(info.optimizer, info.max_grad_norm);
}

namespace {
// Enough distinct batches that a step never reuses the one before it (2 to 8, at most 4096 rows
// unless one batch is larger), without gigabytes of input or seconds of set-up per repetition.
int dataset_batches(std::int64_t rows_per_batch) {
  return static_cast<int>(std::clamp<std::int64_t>((std::int64_t{1} << 12) / rows_per_batch, 2, 8));
}
}  // namespace

namespace {
// The seeded rows of one (inputs, classes), kept for the process: make_synthetic_dataset draws its
// teacher first and then the rows in order, so the first k rows of a longer draw are the k rows a
// shorter one gives, and every case of a shape copies a prefix instead of drawing again (drawing
// 4096 rows took ~0.1 s of every MLP case's set-up, in every process of `run --processes`).
struct SyntheticRows {
  std::int64_t rows = 0;
  std::vector<float> x;
  std::vector<int> labels;
};
const SyntheticRows& synthetic_rows(const MlpShape& shape, std::int64_t rows) {
  static std::map<std::pair<std::int64_t, std::int64_t>, SyntheticRows> drawn;
  auto& d = drawn[{shape.inputs, shape.classes}];
  if (d.rows < rows) {
    d.rows = rows;
    d.x.resize(static_cast<std::size_t>(rows * shape.inputs));
    d.labels.resize(static_cast<std::size_t>(rows));
    make_synthetic_dataset(d.x.data(), d.labels.data(), rows, shape, 42);
  }
  return d;
}
}  // namespace

MlpDataset make_mlp_dataset(const MlpShape& shape, std::int64_t rows_per_batch) {
  MlpDataset d;
  d.batches = dataset_batches(rows_per_batch);
  d.rows_per_batch = rows_per_batch;
  const std::int64_t rows = d.batches * rows_per_batch;
  const auto& drawn = synthetic_rows(shape, rows);
  d.x.assign(drawn.x.begin(), drawn.x.begin() + rows * shape.inputs);
  d.labels.assign(drawn.labels.begin(), drawn.labels.begin() + rows);
  return d;
}

std::uint64_t mlp_dataset_bytes(const MlpShape& shape, std::int64_t rows_per_batch) {
  return static_cast<std::uint64_t>(dataset_batches(rows_per_batch) * rows_per_batch *
                                    (shape.inputs * 4 + 4));
}

namespace {

// One row of the table before it is split into views: the question a compare_group answers.
struct MlpQuestion {
  MlpShape shape;
  int batch = 64;
  MlpStep step = MlpStep::train_sgd;
  MlpSweep sweep = MlpSweep::batch;
};

MlpCase case_for(const MlpQuestion& q) {
  MlpCase c;
  c.shape = q.shape;
  c.batch = q.batch;
  c.step = q.step;
  return c;
}

// The summary shows one size per label: the target (SGD training step, batch 64).
bool is_headline(const MlpQuestion& q) {
  return q.sweep == MlpSweep::batch && q.batch == 64 && q.step == MlpStep::train_sgd;
}

std::string compare_group(const MlpQuestion& q) {
  if (q.sweep == MlpSweep::hidden)
    return fmt::format("mlp/{}-hidden-{}/b{}/{}", q.shape.inputs, q.shape.classes, q.batch,
                       to_string(q.step));
  return fmt::format("mlp/{}/{}", to_string(q.shape), to_string(q.step));
}

nlohmann::json common_fields(const MlpQuestion& q, const MlpCase& c) {
  nlohmann::json f = {{"op", "mlp_step"},
                      {"model", to_string(q.shape)},
                      {"inputs", q.shape.inputs},
                      {"hidden", q.shape.hidden},
                      {"classes", q.shape.classes},
                      {"batch", q.batch},
                      {"variant", c.trains() ? "train" : "inference"},
                      {"step_variant", to_string(q.step)},
                      {"accum_steps", c.accum_steps()},
                      {"samples_per_step", c.samples_per_step()},
                      {"flops_per_step", c.flops_per_step()},
                      {"compare_group", compare_group(q)},
                      {"sweep", to_string(q.sweep)}};
  const auto& info = mlp_step_info(q.step);
  f["optimizer"] =
      info.trains ? nlohmann::json(to_string(info.optimizer)) : nlohmann::json(nullptr);
  f["max_grad_norm"] =
      info.max_grad_norm > 0 ? nlohmann::json(info.max_grad_norm) : nlohmann::json(nullptr);
  return f;
}

std::string case_prefix(const MlpQuestion& q) {
  const std::string sweep = q.sweep == MlpSweep::hidden ? "hidden_sweep/" : "";
  return fmt::format("mlp/{}{}/{}/b{}", sweep, to_string(q.shape), to_string(q.step), q.batch);
}

void register_cpu_views(const MlpQuestion& q) {
  const int all_threads = query_host_info().omp_threads;
  for (int threads : {1, all_threads}) {
    MlpCase c = case_for(q);
    c.cpu_threads = threads;
    const std::string view = threads == 1 ? "cpu_1t" : "cpu_all";
    auto fields = common_fields(q, c);
    fields.update({{"view", view},
                   {"series", ""},
                   {"precision", "fp32"},
                   {"device", "cpu"},
                   {"cpu_threads", threads},
                   {"launch_mode", nullptr},
                   {"data_path", "host"}});
    fields["library"] = fmt::format(
        "GEMMs: {}, each timed on the case's shapes at set-up and the faster kept "
        "(the row's label names which){}; own loops ({}) for the rest",
        cpu_gemm_library_list(),
        !c.trains() && MlpPackedInference::available()
            ? ", or oneDNN's matmul with the weights packed once and bias and ReLU fused"
            : "",
        vector_clone_level());
    fields["threading"] = fmt::format(
        "{} threads: OpenBLAS ({}); oneDNN, the loops above {} elements "
        "and AdamW above {} parameters on OpenMP (libgomp){}",
        threads, openblas_threading(), kCpuParallelLoopElements, kCpuParallelUpdateParams,
        threads > 1 ? "; a step timed faster on 1 thread at set-up runs on 1 "
                      "(the label says so)"
                    : "");
    // How mlp_train_step_fast runs the step, in its order of preference; say so in the row. The
    // batch is split only where every library the plan may pick runs alone on each thread of a
    // team.
    bool every_library_alone = true;
    for (auto library : cpu_gemm_libraries())
      every_library_alone = every_library_alone && gemm_runs_alone_in_team(library);
    const auto n_params = static_cast<std::int64_t>(mlp_param_layout(c.shape).count);
    if (c.trains() && every_library_alone &&
        splits_batch_over_threads(c.optimizer_config(), c.accum_steps(), c.batch, n_params,
                                  threads)) {
      fields["cpu_update"] = "batch_split_over_threads";
      fields["threading"] = fields["threading"].get<std::string>() +
                            "; this step splits its batch over the threads, each running "
                            "one-thread GEMMs on its rows";
    } else if (c.trains() &&
               adamw_forms_w1_gradient_in_update(c.optimizer_config(), c.accum_steps(), c.batch))
      fields["cpu_update"] = "adamw_forms_w1_gradient";
    else if (c.trains() && sgd_folds_into_weight_gemm(c.optimizer_config(), c.accum_steps()))
      fields["cpu_update"] = "sgd_fused_into_weight_gemm";
    if (is_headline(q))
      fields["headline"] =
          fmt::format("mlp {} {} b64 {}", to_string(q.shape), to_string(q.step), view);
    const auto name = fmt::format("{}/{}", case_prefix(q), view);
    register_case(measured_case(name, "mlp", fields, Clock::host_wall,
                                [c, name] { return setup_mlp_cpu(c, name); }));
    if (all_threads == 1) break;
  }
}

struct GpuVariant {
  Precision precision;
  LaunchMode launch;
  DataPath path;
};

// Quick: fp32 as a graph over every data path plus eager resident (what graphs save), bf16 and fp16
// as resident graphs. Full: fp32 in every launch mode and data path; bf16/fp16 eager and graph
// resident, and graph with overlapped pinned input.
std::vector<GpuVariant> gpu_variants(bool quick) {
  std::vector<GpuVariant> v;
  for (auto launch : {LaunchMode::eager, LaunchMode::graph})
    for (auto path : {DataPath::resident, DataPath::pageable, DataPath::pinned_overlap})
      if (!quick || launch == LaunchMode::graph || path == DataPath::resident)
        v.push_back({Precision::fp32, launch, path});
  for (auto precision : {Precision::bf16, Precision::fp16}) {
    if (!quick) v.push_back({precision, LaunchMode::eager, DataPath::resident});
    v.push_back({precision, LaunchMode::graph, DataPath::resident});
    if (!quick) v.push_back({precision, LaunchMode::graph, DataPath::pinned_overlap});
  }
  return v;
}

void register_gpu_views(const RunConfig& config, const MlpQuestion& q,
                        const std::vector<GpuVariant>& variants) {
  for (int device : config.gpu_devices)
    for (const auto& g : variants) {
      MlpCase c = case_for(q);
      c.device = device;
      c.precision = g.precision;
      c.launch = g.launch;
      c.data_path = g.path;
      const std::string series = fmt::format("{} {}", to_string(g.precision), to_string(g.launch));
      auto fields = common_fields(q, c);
      fields.update({{"view", data_path_info(g.path).view},
                     {"series", series},
                     {"precision", to_string(g.precision)},
                     {"device", device},
                     {"launch_mode", to_string(g.launch)},
                     {"data_path", to_string(g.path)}});
      if (is_headline(q) && g.precision == Precision::fp32 && g.launch == LaunchMode::graph)
        fields["headline"] = fmt::format("mlp {} {} b64 gpu fp32 graph {}", to_string(q.shape),
                                         to_string(q.step), to_string(g.path));
      const std::string gpu = config.gpu_devices.size() > 1 ? fmt::format("gpu:{}", device) : "gpu";
      register_case(
          measured_case(fmt::format("{}/{}/{}/{}/{}", case_prefix(q), gpu, to_string(g.precision),
                                    to_string(g.launch), to_string(g.path)),
                        "mlp", fields, Clock::device_events,
                        [c] { return OFFLOADBENCH_GPU_RUNNER(setup_mlp_gpu)(c); }));
    }
}

std::vector<MlpQuestion> mlp_questions(bool quick) {
  std::vector<MlpQuestion> questions;
  const MlpShape mnist{784, 128, 10}, image{12288, 64, 10};
  const std::vector<int> batches = quick ? std::vector<int>{1, 64, 1024} : std::vector<int>{};
  auto batch_sweep = [&](const MlpShape& shape, MlpStep step) {
    std::vector<int> sizes = batches;
    if (sizes.empty())
      for (int b = 1; b <= 4096; b *= 2) sizes.push_back(b);
    for (int b : sizes) {
      MlpQuestion q;
      q.shape = shape;
      q.batch = b;
      q.step = step;
      questions.push_back(q);
    }
  };
  const MlpStep core_steps[] = {MlpStep::inference, MlpStep::train_sgd, MlpStep::train_adamw};
  for (auto step : core_steps) batch_sweep(mnist, step);
  // Steps that change the step alone (clipping, accumulation): one batch in quick mode, the whole
  // sweep in full.
  for (const auto& info : kMlpSteps) {
    if (!info.quick_step_only) continue;
    if (!quick) {
      batch_sweep(mnist, info.step);
      continue;
    }
    MlpQuestion q;
    q.shape = mnist;
    q.step = info.step;
    questions.push_back(q);  // batch 64
  }
  if (!quick) {
    for (auto step : core_steps) batch_sweep(image, step);
    for (std::int64_t hidden = 64; hidden <= 4096; hidden *= 2) {
      MlpQuestion q;
      q.shape = MlpShape{784, hidden, 10};
      q.batch = 256;
      q.step = MlpStep::train_sgd;
      q.sweep = MlpSweep::hidden;
      questions.push_back(q);
    }
  }
  return questions;
}

}  // namespace

void register_mlp_suite(const RunConfig& config) {
  const auto variants = gpu_variants(config.quick);
  // Quick mode times clipping and accumulation as one resident fp32 graph: they change the step,
  // not the data path or the precision.
  const std::vector<GpuVariant> step_only = {
      {Precision::fp32, LaunchMode::graph, DataPath::resident}};
  for (auto q : mlp_questions(config.quick)) {
    if (config.refine) {  // a crossover refinement: listed batch sweeps (each once, at its first
                          // batch, 1) at their batches
      const auto it = config.refine->find(compare_group(q));
      if (q.sweep != MlpSweep::batch || q.batch != 1 || it == config.refine->end()) continue;
      for (auto batch : it->second) {
        q.batch = static_cast<int>(batch);
        register_gpu_views(config, q, variants);
        register_cpu_views(q);
      }
      continue;
    }
    const bool step_only_here = config.quick && mlp_step_info(q.step).quick_step_only;
    register_gpu_views(config, q, step_only_here ? step_only : variants);
    register_cpu_views(q);
  }
}

std::string LossCheck::problem() const {
  if (std::isfinite(last) && last < first) return "";
  return fmt::format(
      "{} training steps did not lower the loss on the first batch: {:.6g} -> {:.6g}",
      kMlpCheckSteps, first, last);
}

void LossCheck::report(benchmark::State& state) const {
  if (!checked) return;
  state.counters["initial_loss"] = first;
  state.counters["final_loss"] = last;
  state.counters["loss_steps"] = kMlpCheckSteps;
}

Suite mlp_suite() {
  return {"mlp",
          "Linear-ReLU-Linear training steps and inference: CPU threads vs GPU precisions, launch "
          "modes, data paths",
          register_mlp_suite,
          "",  // batches and layer sizes are fixed: --sizes is refused
          "batch"};
}

}  // namespace offloadbench
