// The mlp suite's CPU runner: one fp32 step (inference or training) per iteration with OpenBLAS and
// the reference's fused loops, at 1 thread or all. Checked before timing: inference logits against a
// plain triple loop; training by kMlpCheckSteps steps that must lower the first batch's loss.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "benchmarks/mlp.h"
#include "harness/benchmark_case.h"
#include "harness/current_case.h"
#include "harness/injected_slowdown.h"
#include "harness/sizes.h"
#include "harness/system_info.h"

namespace offloadbench {

namespace {

using WallClock = std::chrono::steady_clock;

// Sets the OpenMP and OpenBLAS thread counts for one case and restores them after.
class CpuThreads {
 public:
  explicit CpuThreads(int threads) : omp_(omp_get_max_threads()), blas_(openblas_get_num_threads()) {
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
      for (std::int64_t d = 0; d < s.inputs; ++d) pre += static_cast<double>(p[l.w1 + h * s.inputs + d]) * x[d];
      logit += static_cast<double>(p[l.w2 + c * s.hidden + h]) * std::max(pre, 0.0);
    }
    const double got = model.logits[c];
    if (!(std::abs(got - logit) <= 1e-5 + 1e-4 * std::abs(logit)))
      return fmt::format("logit {} of row 0 is {:.8g}, a plain loop gives {:.8g}", c, got, logit);
  }
  return "";
}

}  // namespace

void run_mlp_cpu(benchmark::State& state, const MlpCase& c) {
  try {
    validate_mlp_shape(c.shape, c.samples_per_step());
  } catch (const std::invalid_argument& e) {
    return skip_case(state, e.what());
  }
  const std::uint64_t model_bytes =
      mlp_param_layout(c.shape).count * 16 + static_cast<std::uint64_t>(c.batch) * (c.shape.hidden * 12 + c.shape.classes * 8);
  const std::uint64_t bytes = mlp_dataset_bytes(c.shape, c.samples_per_step()) + model_bytes;
  const auto available = host_memory_available_bytes();
  if (available != 0 && bytes + (512ull << 20) > available)
    return skip_case(state, fmt::format("needs {} of host memory, {} available", format_size(bytes), format_size(available)));

  CpuThreads threads(c.cpu_threads);
  const auto data = make_mlp_dataset(c.shape, c.samples_per_step());
  const auto config = c.optimizer_config();
  MlpCpuModel model(c.shape, c.batch, kMlpWeightSeed);

  // ---- check, outside the timed region ----
  if (c.variant == MlpVariant::inference) {
    mlp_forward(model.activations(), model.params.data(), data.x.data(), c.shape, c.batch);
    if (auto problem = check_inference(model, data.x.data()); !problem.empty()) return invalidate_case(state, problem);
  } else {
    const float first = mlp_loss(model, data.x.data(), data.labels.data());
    for (int step = 0; step < kMlpCheckSteps; ++step) {
      const int i = step % data.batches;
      mlp_train_step_fast(model, data.x_at(i, c.shape.inputs), data.labels_at(i), c.accum_steps, config);
    }
    const float last = mlp_loss(model, data.x.data(), data.labels.data());
    if (!check_loss_lowered(state, first, last)) return;
  }
  mark_validated(state);

  // ---- timed: one step per iteration, cycling through the data set ----
  int i = 0;
  SlowdownInjector injected(injected_slowdown_fraction(current_case_name()));  // regression self-test hook
  const auto start = WallClock::now();
  for (auto _ : state) {
    const InjectedSlowdown slowed(injected);
    const float* x = data.x_at(i, c.shape.inputs);
    if (c.variant == MlpVariant::inference) {
      mlp_forward(model.activations(), model.params.data(), x, c.shape, c.batch);
    } else {
      mlp_train_step_fast(model, x, data.labels_at(i), c.accum_steps, config);
    }
    benchmark::DoNotOptimize(model.logits.data());
    benchmark::ClobberMemory();
    i = (i + 1) % data.batches;
  }
  report_host_seconds(state, std::chrono::duration<double>(WallClock::now() - start).count());
  state.counters["samples_per_second"] =
      benchmark::Counter(static_cast<double>(c.samples_per_step()), benchmark::Counter::kIsIterationInvariantRate);
  set_flops_per_iteration(state, c.flops_per_step());
}

}  // namespace offloadbench
