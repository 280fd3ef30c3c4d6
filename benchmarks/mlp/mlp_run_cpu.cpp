// The mlp suite's CPU runner: one fp32 step (inference or training) per iteration with the
// reference's GEMMs (OpenBLAS or oneDNN, one library per step, planned at set-up; for inference
// also oneDNN's matmul with the weights packed once) and fused loops, at 1 thread or all. Checked
// before timing: inference logits against a plain triple loop; training by kMlpCheckSteps steps
// that must lower the first batch's loss.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "benchmarks/mlp/mlp_cases.h"
#include "harness/benchmark_case.h"
#include "harness/system_info.h"
#include "kernels/cpu_gemm.h"
#include "kernels/mlp_packed.h"

namespace offloadbench {

namespace {

CpuGemmPin& pin_in_use() {
  static CpuGemmPin pin;
  return pin;
}

// How many of `values` are subnormal: arithmetic on them is slow on x86 (kMlpRestartSteps).
std::int64_t count_subnormal(const std::vector<float>& values) {
  return std::count_if(values.begin(), values.end(),
                       [](float x) { return std::fpclassify(x) == FP_SUBNORMAL; });
}

// Sets the OpenMP and OpenBLAS thread counts for one case and restores them after.
class CpuThreads {
 public:
  explicit CpuThreads(int threads)
      : omp_(omp_get_max_threads()), blas_(openblas_get_num_threads()) {
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
  }
  ~CpuThreads() {
    omp_set_num_threads(omp_);
    openblas_set_num_threads(blas_);
  }
  CpuThreads(const CpuThreads&) = delete;
  CpuThreads& operator=(const CpuThreads&) = delete;

 private:
  int omp_, blas_;
};

// Logits of row 0 recomputed with plain loops in double; "" when the model's agree.
std::string check_inference(MlpCpuModel& model, const float* x) {
  const auto& s = model.shape;
  const auto l = mlp_param_layout(s);
  const float* p = model.params.data();
  for (std::int64_t c = 0; c < s.classes; ++c) {
    double logit = p[l.b2 + c];
    for (std::int64_t h = 0; h < s.hidden; ++h) {
      double pre = p[l.b1 + h];
      for (std::int64_t d = 0; d < s.inputs; ++d)
        pre += static_cast<double>(p[l.w1 + h * s.inputs + d]) * x[d];
      logit += static_cast<double>(p[l.w2 + c * s.hidden + h]) * std::max(pre, 0.0);
    }
    const double got = model.logits[c];
    if (!(std::abs(got - logit) <= 1e-5 + 1e-4 * std::abs(logit)))
      return fmt::format("logit {} of row 0 is {:.8g}, a plain loop gives {:.8g}", c, got, logit);
  }
  return "";
}

// How a case's step runs: every GEMM on one library, or (inference only) oneDNN's matmul with the
// weights packed once and the bias and ReLU fused (MlpPackedInference).
// A case asked for several threads may run its whole step on one, where that was timed faster
// (plan_mlp_threads: tiny batch-1 training steps); the label says so.
struct CpuPlan {
  CpuGemmLibrary library = CpuGemmLibrary::openblas;
  bool packed = false;
  int threads = 0;  // the case's own count unless the plan chose 1
  std::string label() const {
    const std::string gemms = packed ? "GEMMs: oneDNN matmul, weights packed once"
                                     : fmt::format("GEMMs: all {}", to_string(library));
    return threads == 1 ? gemms + "; the step on 1 thread (timed faster than all at set-up)"
                        : gemms;
  }
};

// The plan whose label an earlier process of this run recorded for the case (run --processes), if
// any.
std::optional<CpuPlan> plan_labelled(const std::string& label, bool can_pack) {
  for (auto library : cpu_gemm_libraries())
    for (bool packed : {false, true})
      for (int threads : {0, 1}) {
        const CpuPlan plan{library, packed && can_pack, threads};
        if (plan.label() == label) return plan;
      }
  return std::nullopt;
}

// Chosen once per case and thread count in a process, so that repetitions set up again (random
// interleaving) time the same code; OFFLOADBENCH_CPU_GEMM pins it (set_cpu_gemm_pin), else the
// first process of the run planned it (its row's label), else it is planned by timing the step each
// way.
CpuPlan plan_for(const MlpCase& c, const std::string& case_name, MlpCpuModel& model,
                 const std::function<void()>& step, bool& use_packed) {
  static std::map<std::string, CpuPlan>
      chosen;  // set-ups run one at a time, on the benchmark thread
  const std::string key =
      fmt::format("{}/{}/b{}/{}t", to_string(c.shape), to_string(c.step), c.batch, c.cpu_threads);
  auto found = chosen.find(key);
  const bool can_pack = !c.trains() && MlpPackedInference::available();
  const auto* earlier = calibration_row(case_name);
  const auto earlier_plan =
      earlier ? plan_labelled(earlier->value("label", ""), can_pack) : std::nullopt;
  if (found == chosen.end() && earlier_plan) found = chosen.emplace(key, *earlier_plan).first;
  if (found == chosen.end()) {
    CpuPlan plan;
    const CpuGemmPin& pin = pin_in_use();
    if (pin.pinned) {
      plan.library = pin.library;
      plan.packed = can_pack && pin.packed_inference;
    } else {
      plan.library = plan_mlp_gemms(model, step);
      if (can_pack) {
        model.gemm_library = plan.library;
        const auto packed_step = [&] {
          use_packed = true;
          step();
        };
        const auto library_step = [&] {
          use_packed = false;
          step();
        };
        plan.packed = runs_faster(packed_step, library_step, 7);
      }
    }
    // The packed primitive was built for the case's thread count, so only library steps are
    // re-planned.
    if (!plan.packed && c.cpu_threads > 1) {
      model.gemm_library = plan.library;
      use_packed = false;
      plan.threads = plan_mlp_threads(model, step, c.cpu_threads);
    }
    found = chosen.emplace(key, plan).first;
  }
  model.gemm_library = found->second.library;
  use_packed = found->second.packed;
  if (found->second.threads == 1) {  // the case's CpuThreads restores both counts when it ends
    omp_set_num_threads(1);
    openblas_set_num_threads(1);
  }
  return found->second;
}

}  // namespace

void set_cpu_gemm_pin(const CpuGemmPin& pin) { pin_in_use() = pin; }

MeasuredCase setup_mlp_cpu(const MlpCase& c, const std::string& case_name) {
  try {
    validate_mlp_shape(c.shape, c.samples_per_step());
  } catch (const std::invalid_argument& e) { return MeasuredCase::skip(e.what()); }
  // params, grads, m, v and the seeded copy a training restart returns to; then the activations.
  const std::uint64_t model_bytes =
      mlp_param_layout(c.shape).count * 20 +
      static_cast<std::uint64_t>(c.batch) * (c.shape.hidden * 12 + c.shape.classes * 8);
  const std::uint64_t bytes = mlp_dataset_bytes(c.shape, c.samples_per_step()) + model_bytes;
  if (auto problem = host_fit_problem(bytes); !problem.empty()) return MeasuredCase::skip(problem);

  // The case's state, kept across its calls; threads are set for the whole case and restored after.
  struct Stepper {
    explicit Stepper(const MlpCase& c)
        : threads(c.cpu_threads),
          data(make_mlp_dataset(c.shape, c.samples_per_step())),
          config(c.optimizer_config()),
          model(c.shape, c.batch, kMlpWeightSeed) {}
    CpuThreads threads;
    MlpDataset data;
    OptimizerConfig config;
    MlpCpuModel model;
    std::unique_ptr<MlpPackedInference>
        packed;  // inference where oneDNN is available: its weights packed once
    bool use_packed = false;
    LossCheck loss;
    int next_batch = 0;
    std::vector<float> initial_params = model.params;
    std::int64_t steps_since_restart = 0;
    // Back to the seeded weights, zero moments and step 0 (kMlpRestartSteps); the plan is kept.
    void restart() {
      model.params = initial_params;
      std::fill(model.m.begin(), model.m.end(), 0.0f);
      std::fill(model.v.begin(), model.v.end(), 0.0f);
      model.scalars = TrainScalars{};
      next_batch = 0;
      steps_since_restart = 0;
    }
  };
  auto s = std::make_shared<Stepper>(c);
  if (!c.trains() && MlpPackedInference::available()) {
    try {
      s->packed =
          std::make_unique<MlpPackedInference>(s->model);  // packs at this case's thread count
    } catch (const std::exception& e) {
      return MeasuredCase::skip(
          fmt::format("oneDNN could not set up the packed inference: {}", e.what()));
    }
  }

  MeasuredCase made;
  Measurement& m = made.measurement;
  // One step, cycling through the data set.
  m.call = [s, c] {
    const int i = s->next_batch;
    const float* x = s->data.x_at(i, c.shape.inputs);
    if (!c.trains()) {
      if (s->use_packed)
        s->packed->run(x, s->model.logits.data());
      else
        mlp_infer(s->model, x);
    } else {
      mlp_train_step_fast(s->model, x, s->data.labels_at(i), c.accum_steps(), s->config);
      ++s->steps_since_restart;
    }
    benchmark::DoNotOptimize(s->model.logits.data());
    benchmark::ClobberMemory();
    s->next_batch = (i + 1) % s->data.batches;
  };
  const CpuPlan plan = plan_for(c, case_name, s->model, m.call, s->use_packed);
  m.verify = [s, c]() -> std::string {
    const float* x0 = s->data.x.data();
    if (!c.trains()) {
      if (s->use_packed)
        s->packed->run(x0, s->model.logits.data());
      else
        mlp_infer(s->model, x0);
      return check_inference(s->model, x0);
    }
    s->loss.first = mlp_loss(s->model, x0, s->data.labels.data());
    for (int step = 0; step < kMlpCheckSteps; ++step) {
      const int i = step % s->data.batches;
      mlp_train_step_fast(s->model, s->data.x_at(i, c.shape.inputs), s->data.labels_at(i),
                          c.accum_steps(), s->config);
    }
    s->loss.last = mlp_loss(s->model, x0, s->data.labels.data());
    s->loss.checked = true;
    return s->loss.problem();
  };
  m.verify_warms_up = true;  // an inference on the first batch, or kMlpCheckSteps training steps
  if (c.trains()) {
    m.before_batch = [s] {
      if (s->steps_since_restart >= kMlpRestartSteps) s->restart();
    };
  }
  m.work.flops = c.flops_per_step();
  m.work.items = static_cast<double>(c.samples_per_step());
  m.work.items_rate = "samples_per_second";
  m.report = [s, plan, trains = c.trains()](benchmark::State& state, const Totals&) {
    s->loss.report(state);
    if (trains)
      state.counters["subnormal_moments"] =
          static_cast<double>(count_subnormal(s->model.m) + count_subnormal(s->model.v));
    state.SetLabel(plan.label());
  };
  return made;
}

}  // namespace offloadbench
