// The mlp family: full training steps (and inference) of a small Linear→ReLU→Linear network on the
// CPU and the GPU, across model widths, batch sizes, precisions, launch modes and input data paths
// — at what batch does the GPU win once the batch has to be moved there?
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "harness/measure.h"
#include "harness/suite.h"
#include "kernels/cpu_gemm.h"
#include "kernels/mlp.h"

namespace offloadbench {

// The step a case times. Every property of a step is its row of the table in mlp_cases.cpp; code
// asks the table (mlp_step_info), never the step's name.
enum class MlpStep { inference, train_sgd, train_adamw, train_adamw_clip, train_sgd_accum4 };
struct MlpStepInfo {
  MlpStep step;
  const char* name;      // the row's step_variant, and part of the case name
  bool trains;           // false: a forward pass only
  Optimizer optimizer;   // training steps
  float max_grad_norm;   // clip the global gradient norm to this; 0: no clipping
  int accum_steps;       // micro-batches per optimizer step
  bool quick_step_only;  // quick mode times it at one batch and one GPU view: it changes the step
                         // alone
};
const MlpStepInfo& mlp_step_info(MlpStep step);
const char* to_string(MlpStep step);

enum class MlpSweep { batch, hidden };  // what a compare_group varies
const char* to_string(MlpSweep sweep);

enum class LaunchMode { eager, graph };  // one launch per op, or the whole step as one CUDA Graph
enum class DataPath {
  resident,        // the batches already live on the GPU
  pageable,        // each step copies its batch from pageable host memory first
  pinned_overlap,  // pinned host memory; the next batch is copied on a second stream during this
                   // step
};
const char* to_string(LaunchMode mode);
const char* to_string(DataPath path);

struct MlpCase {
  MlpShape shape;
  int batch = 64;  // rows per micro-batch
  MlpStep step = MlpStep::train_sgd;
  // GPU cases
  Precision precision = Precision::fp32;
  LaunchMode launch = LaunchMode::eager;
  DataPath data_path = DataPath::resident;
  int device = -1;  // -1: a CPU case
  // CPU cases
  int cpu_threads = 1;

  bool trains() const { return mlp_step_info(step).trains; }
  int accum_steps() const { return mlp_step_info(step).accum_steps; }
  std::int64_t samples_per_step() const { return std::int64_t{batch} * accum_steps(); }
  double flops_per_step() const;
  OptimizerConfig optimizer_config() const;
};

// Training steps run (from the seeded initial weights) before timing, to check that they lower the
// loss on the first batch; its loss before and after goes into the row as initial_loss and
// final_loss.
inline constexpr int kMlpCheckSteps = 10;
// The training check both runners make before timing: kMlpCheckSteps steps must lower the loss on
// the first batch. Its losses go on every row of the case.
struct LossCheck {
  bool checked = false;
  float first = 0, last = 0;
  std::string problem() const;                 // "" when the loss fell
  void report(benchmark::State& state) const;  // initial_loss, final_loss, loss_steps
};
inline constexpr std::uint64_t kMlpWeightSeed = 1234;
// CPU training rows go back to the seeded weights and fresh optimizer state every this many steps,
// untimed (the measurement's before_batch). Left running on its few cycled batches, the model
// leaves units that no sample activates with zero gradients; AdamW's m then decays into the
// subnormal range after ~800 steps and sticks there (0.9·k·2^-149 rounds back to k·2^-149). x86 is
// slow on subnormals (batch-1 steps 10-12% slower, lab/records/cpu-baseline.md): the run's length
// would decide what is timed.
inline constexpr std::int64_t kMlpRestartSteps = 256;

// The seeded synthetic batches a case cycles through: `batches` steps' worth of rows.
struct MlpDataset {
  int batches = 0;
  std::int64_t rows_per_batch = 0;
  std::vector<float> x;     // (batches·rows_per_batch, D)
  std::vector<int> labels;  // (batches·rows_per_batch)
  const float* x_at(int i, std::int64_t inputs) const {
    return x.data() + i * rows_per_batch * inputs;
  }
  const int* labels_at(int i) const { return labels.data() + i * rows_per_batch; }
};
MlpDataset make_mlp_dataset(const MlpShape& shape, std::int64_t rows_per_batch);
std::uint64_t mlp_dataset_bytes(const MlpShape& shape, std::int64_t rows_per_batch);

// Setups for the measurement layer (harness/measure.h): mlp_run_cpu.cpp, and mlp_run_gpu.cpp
// (built with CUDA only; the table calls it through OFFLOADBENCH_GPU_RUNNER, harness/gpu_runner.h).
MeasuredCase setup_mlp_cpu(const MlpCase& c, const std::string& case_name);
// What the CPU steps run when pinned (OFFLOADBENCH_CPU_GEMM, which the command line parses and sets
// here once, before any case is set up); not pinned by default: planned.
void set_cpu_gemm_pin(const CpuGemmPin& pin);
MeasuredCase setup_mlp_gpu(const MlpCase& c);

void register_mlp_suite(const RunConfig& config);
// The suite: its name, what it measures, and the function above (benchmarks/suites.h lists it).
Suite mlp_suite();

}  // namespace offloadbench
