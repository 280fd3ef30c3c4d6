// GPU tests (label gpu) of the MLP twins: the GPU's loss and gradients equal the CPU reference's
// per precision, a replayed CUDA Graph equals eager launches, 200-step fp32 loss curves agree, fp16
// loss scaling skips a step whose gradients overflow, a pinned_overlap step's timed window holds
// its prefetch, and the suite's GPU rows validate.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "benchmarks/mlp/mlp_cases.h"
#include "harness/gpu_info.h"
#include "harness/measure.h"
#include "kernels/cuda/cuda_graph.h"
#include "kernels/cuda/cuda_raii.h"
#include "kernels/mlp_check.h"
#include "kernels/mlp_gpu.h"
#include "tests/all_close.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace {

// A seeded data set, its first `rows` rows also on the device.
struct DeviceBatches {
  DeviceBatches(const MlpShape& shape, std::int64_t rows)
      : x(static_cast<std::size_t>(rows * shape.inputs)),
        labels(static_cast<std::size_t>(rows)),
        device_x(x.size() * sizeof(float)),
        device_labels(labels.size() * sizeof(int)) {
    make_synthetic_dataset(x.data(), labels.data(), rows, shape, 21);
    CUDA_CHECK(cudaMemcpy(device_x.data(), x.data(), device_x.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(device_labels.data(), labels.data(), device_labels.bytes(),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());  // pageable copies return once staged; the tests' streams
                                          // won't wait
  }
  std::vector<float> x;
  std::vector<int> labels;
  DeviceBuffer device_x, device_labels;
};

// Every precision, or those named in OFFLOADBENCH_GPU_TEST_PRECISIONS (e.g. "fp32"):
// compute-sanitizer's initcheck does not see some cuBLAS kernels' stores, so gpu-check runs reduced
// precisions apart.
std::vector<Precision> test_precisions() {
  const std::vector<Precision> all = {Precision::fp32, Precision::bf16, Precision::fp16};
  const char* named = std::getenv("OFFLOADBENCH_GPU_TEST_PRECISIONS");
  if (!named || !*named) return all;
  const std::string list = std::string(",") + named + ",";
  std::vector<Precision> chosen;
  for (auto p : all)
    if (list.find(std::string(",") + to_string(p) + ",") != std::string::npos) chosen.push_back(p);
  if (chosen.empty())
    ADD_FAILURE() << "OFFLOADBENCH_GPU_TEST_PRECISIONS names no precision: " << named;
  return chosen;
}

}  // namespace

class GpuMlp : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = gpu_unavailable_reason(0); !reason.empty()) GTEST_SKIP() << reason;
    CUDA_CHECK(cudaSetDevice(0));
  }
};

TEST_F(GpuMlp, LossAndGradientsMatchTheCpuInEveryPrecision) {
  const MlpShape shape;
  // 1024 too: against unrounded inputs, fp16's difference grew 24× from batch 64 to 1024
  // (mlp_check.h).
  for (const int B : {64, 1024}) {
    for (auto precision : test_precisions()) {
      DeviceBatches data(shape, B);
      MlpCpuModel cpu(shape, B, 5);
      MlpGpuModel gpu(shape, B, precision, cpu.params);
      CudaStream stream;
      // The reference multiplies what the GPU multiplies (the GPU model has its own copy already).
      round_mlp_inputs(cpu.params.data(), data.x.data(), data.x.size(), shape, precision);
      mlp_begin_step(cpu.grads.data(), &cpu.scalars, static_cast<std::int64_t>(cpu.params.size()));
      mlp_forward_backward(cpu.grads.data(), &cpu.scalars, cpu.activations(), cpu.params.data(),
                           data.x.data(), data.labels.data(), 1, shape, B);
      gpu.begin_step(stream.get());
      gpu.forward_backward(data.device_x.as<float>(), data.device_labels.as<int>(), 1,
                           stream.get());
      EXPECT_NEAR(gpu.scalars().loss, cpu.scalars.loss, mlp_loss_rtol(precision) * cpu.scalars.loss)
          << to_string(precision);
      const auto grads = gpu.grads();
      EXPECT_EQ(mlp_gradient_mismatch(grads.data(), cpu.grads.data(), grads.size(), precision), "")
          << to_string(precision);
      // The measured margin, for tuning the rule on real GPUs (the log keeps it).
      double diff_sq = 0, ref_sq = 0;
      for (std::size_t i = 0; i < grads.size(); ++i) {
        const double d = static_cast<double>(grads[i]) - cpu.grads[i];
        diff_sq += d * d;
        ref_sq += static_cast<double>(cpu.grads[i]) * cpu.grads[i];
      }
      std::printf("batch %d, %s: gradients differ from the CPU reference by %.3g of their norm\n",
                  B, to_string(precision), std::sqrt(diff_sq / ref_sq));
      const auto logits = gpu.logits();
      EXPECT_EQ(mlp_gradient_mismatch(logits.data(), cpu.logits.data(), logits.size(), precision),
                "")
          << to_string(precision);
    }
  }
}

TEST_F(GpuMlp, GraphReplayGivesTheSameWeightsAsEagerLaunches) {
  const MlpShape shape;
  const int B = 64;
  DeviceBatches data(shape, B);
  for (auto kind : {Optimizer::sgd, Optimizer::adamw}) {
    const auto config = make_optimizer_config(kind, 1.0f);
    std::vector<float> params(mlp_param_layout(shape).count);
    mlp_init_params(params.data(), shape, 8);
    MlpGpuModel eager(shape, B, Precision::fp32, params),
        graphed(shape, B, Precision::fp32, params);
    CudaStream stream;
    const float* x = data.device_x.as<float>();
    const int* labels = data.device_labels.as<int>();
    // One eager step first (on both, so they stay in step), as the runner does: cuBLAS binds its
    // stream, picks its kernels and loads modules outside the capture.
    eager.train_step(x, labels, config, stream.get());
    graphed.train_step(x, labels, config, stream.get());
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    auto graph =
        capture_graph(stream.get(), [&] { graphed.train_step(x, labels, config, stream.get()); });
    for (int step = 0; step < 5; ++step) {
      eager.train_step(x, labels, config, stream.get());
      graph.launch(stream.get());
    }
    const auto a = eager.params(), b = graphed.params();
    // Atomic sums (loss, bias gradients, norm) may add in another order: equal to rounding, not
    // bitwise.
    EXPECT_TRUE(
        testing::all_close(b.data(), a.data(), static_cast<std::int64_t>(a.size()), 1e-7, 1e-5));
    EXPECT_EQ(graphed.scalars().step, 1 + 5)
        << "the step count lives on the device and advances on replay";
  }
}

TEST_F(GpuMlp, ResetGoesBackToTheSeededStartAtTheSameAddresses) {
  // A graph case's warm-up step trains the model; reset() brings back the start its rows report
  // (initial_loss equal to the eager and CPU rows'), and a graph captured before it still replays.
  const MlpShape shape;
  const int B = 64;
  DeviceBatches data(shape, B);
  const auto config = make_optimizer_config(Optimizer::adamw, 1.0f);
  std::vector<float> params(mlp_param_layout(shape).count);
  mlp_init_params(params.data(), shape, 8);
  MlpGpuModel model(shape, B, Precision::fp32, params), fresh(shape, B, Precision::fp32, params);
  CudaStream stream;
  const float* x = data.device_x.as<float>();
  const int* labels = data.device_labels.as<int>();
  const float start_loss = fresh.loss(x, labels, stream.get());
  model.train_step(x, labels, config, stream.get());
  auto graph =
      capture_graph(stream.get(), [&] { model.train_step(x, labels, config, stream.get()); });
  EXPECT_NE(model.loss(x, labels, stream.get()), start_loss);
  model.reset(params, TrainScalars{});
  EXPECT_EQ(model.params(), params);
  EXPECT_EQ(model.scalars().step, 0);
  EXPECT_EQ(model.loss(x, labels, stream.get()), start_loss);
  for (int step = 0; step < 3; ++step) {
    graph.launch(stream.get());
    fresh.train_step(x, labels, config, stream.get());
  }
  const auto a = fresh.params(), b = model.params();
  EXPECT_TRUE(
      testing::all_close(b.data(), a.data(), static_cast<std::int64_t>(a.size()), 1e-7, 1e-5));
}

TEST_F(GpuMlp, TwoHundredStepLossCurvesOfCpuAndGpuAgree) {
  const MlpShape shape;
  const int B = 64, batches = 8;
  DeviceBatches data(shape, std::int64_t{B} * batches);
  // AdamW divides by √v, so a gradient that rounds to ±1e-10 on one side still moves its weight by
  // ±lr: its curves are compared over fewer steps. Under a sanitizer (lab/tools/gpu-check sets
  // OFFLOADBENCH_SHORT_GPU_TESTS) a tenth of them: every kernel of the step still runs.
  const int scale = std::getenv("OFFLOADBENCH_SHORT_GPU_TESTS") ? 10 : 1;
  for (auto [kind, steps] :
       {std::pair{Optimizer::sgd, 200 / scale}, std::pair{Optimizer::adamw, 50 / scale}}) {
    const auto config = make_optimizer_config(kind);
    MlpCpuModel cpu(shape, B, 3);
    MlpGpuModel gpu(shape, B, Precision::fp32, cpu.params);
    CudaStream stream;
    for (int step = 0; step < steps; ++step) {
      const std::int64_t at = (step % batches) * B;
      const float cpu_loss = mlp_train_step(cpu, data.x.data() + at * shape.inputs,
                                            data.labels.data() + at, 1, config);
      gpu.train_step(data.device_x.as<float>() + at * shape.inputs,
                     data.device_labels.as<int>() + at, config, stream.get());
      const float gpu_loss = gpu.scalars().loss;
      ASSERT_NEAR(gpu_loss, cpu_loss, 1e-3 * std::abs(cpu_loss))
          << to_string(kind) << " step " << step;
    }
  }
}

TEST_F(GpuMlp, Fp16LossScalingSkipsAStepWhoseGradientsOverflow) {
  const MlpShape shape;
  const int B = 64;
  DeviceBatches data(shape, B);
  std::vector<float> params(mlp_param_layout(shape).count);
  mlp_init_params(params.data(), shape, 4);
  MlpGpuModel gpu(shape, B, Precision::fp16, params);
  auto config = make_optimizer_config(Optimizer::sgd);
  config.dynamic_loss_scale = true;
  TrainScalars scalars;
  scalars.loss_scale = 1e20f;  // every scaled gradient is far past fp16's 65504
  gpu.set_scalars(scalars);
  CudaStream stream;
  gpu.train_step(data.device_x.as<float>(), data.device_labels.as<int>(), config, stream.get());
  const auto after = gpu.scalars();
  EXPECT_EQ(after.skip, 1);
  EXPECT_EQ(after.skipped_steps, 1);
  EXPECT_EQ(after.step, 0);
  EXPECT_EQ(after.loss_scale, 0.5e20f);
  EXPECT_EQ(gpu.params(), params) << "a skipped step leaves the weights alone";
  // At a sane scale the next step goes through and moves the weights.
  scalars = after;
  scalars.loss_scale = 1024.0f;
  gpu.set_scalars(scalars);
  gpu.train_step(data.device_x.as<float>(), data.device_labels.as<int>(), config, stream.get());
  EXPECT_EQ(gpu.scalars().skip, 0);
  EXPECT_NE(gpu.params(), params);
}

// A copy-bound pinned_overlap step: its batch's device window must last at least as long as the
// prefetch the step enqueues on the copy stream. A timer that does not join the copy stream ends
// the window with the compute, a small fraction of the copy here.
TEST_F(GpuMlp, PinnedOverlapWindowHoldsTheStepsPrefetch) {
  MlpCase c;
  c.batch = 4096;  // 12.8 MB of input a step against a forward pass of a few tens of µs
  c.step = MlpStep::inference;
  c.data_path = DataPath::pinned_overlap;
  c.device = 0;
  MeasuredCase made = setup_mlp_gpu(c);
  if (!made.skip_reason.empty()) GTEST_SKIP() << made.skip_reason;
  Measurement& m = made.measurement;
  ASSERT_TRUE(m.device);
  time_once(*m.device, m.call);  // first-call costs (module loading, cuBLAS heuristics)
  // One step a batch, from an idle device: the previous batch's prefetch cannot spill into this
  // window.
  const double step_s = median_of(5, [&] {
    CUDA_CHECK(cudaDeviceSynchronize());
    return time_once(*m.device, m.call);
  });

  // The same bytes copied alone from pinned memory.
  const auto bytes = static_cast<std::size_t>(c.samples_per_step()) *
                     (c.shape.inputs * sizeof(float) + sizeof(int));
  HostBuffer host(bytes, HostMemoryKind::pinned);
  DeviceBuffer device(bytes);
  CudaStream stream;
  CudaEvent start, end;
  const double copy_s = median_of(5, [&] {
    start.record(stream.get());
    CUDA_CHECK(
        cudaMemcpyAsync(device.data(), host.data(), bytes, cudaMemcpyHostToDevice, stream.get()));
    end.record(stream.get());
    return elapsed_seconds(start, end);
  });
  // Loose: the copy in the step shares the link with nothing, but clocks and the link's state vary.
  EXPECT_GE(step_s, 0.7 * copy_s) << "step window " << step_s << " s, the copy alone " << copy_s
                                  << " s";
}

TEST_F(GpuMlp, SuiteRowsValidateOnTheGpu) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  register_mlp_suite(config);
  const auto doc =
      testing::run_registered("mlp/784-128-10/(train_sgd|inference)/b64/gpu/", 1, 0.01);
  const auto rows = testing::rows_where(doc, "batch", 64);
  ASSERT_FALSE(rows.empty());
  for (const auto& row : rows) {
    EXPECT_EQ(row["validated"], true)
        << row["name"] << " " << row.value("invalid_reason", "") << row.value("skip_reason", "");
    EXPECT_GT(row["samples_per_second"].get<double>(), 0) << row["name"];
    EXPECT_GT(row["device_time_s"].get<double>(), 0) << row["name"];
    EXPECT_GE(row["host_time_s"].get<double>(), row["host_launch_s"].get<double>()) << row["name"];
    if (row["variant"] == "train") {
      EXPECT_LT(row["final_loss"].get<double>(), row["initial_loss"].get<double>()) << row["name"];
    }
  }
}

}  // namespace offloadbench
