// The mlp suite's table and CPU runner through the real reporter: rows carry the fields the results
// schema promises (pairing fields included), training rows lower the loss, counts add up, and GPU
// rows skip with the reason where no GPU can be used.
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "benchmarks/mlp/mlp_cases.h"
#include "harness/gpu_info.h"
#include "kernels/cpu_gemm.h"
#include "kernels/mlp.h"
#include "tests/test_support.h"

namespace offloadbench {

TEST(MlpSuite, QuickTableCoversEveryVariantAndViewOnce) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  register_mlp_suite(config);
  std::set<std::string> variants, views, groups;
  std::set<long long> batches;
  for (const auto& c : registered_cases()) {
    variants.insert(c.fields["step_variant"].get<std::string>());
    views.insert(c.fields["view"].get<std::string>());
    groups.insert(c.fields["compare_group"].get<std::string>());
    batches.insert(c.fields["batch"].get<long long>());
    EXPECT_EQ(c.fields["sweep"], "batch") << c.name;
    EXPECT_TRUE(c.fields.contains("series")) << c.name;
  }
  EXPECT_EQ(variants, (std::set<std::string>{"inference", "train_sgd", "train_adamw",
                                             "train_adamw_clip", "train_sgd_accum4"}));
  EXPECT_EQ(batches, (std::set<long long>{1, 64, 1024}));
  EXPECT_TRUE(views.count("gpu_kernel") && views.count("gpu_pageable") &&
              views.count("gpu_pinned_overlap") && views.count("cpu_1t"));
  EXPECT_TRUE(groups.count("mlp/784-128-10/train_sgd"));
  clear_registered_cases();
}

// Every step's row fields come from its one row of the step table, and every step has a row.
TEST(MlpSuite, ADatasetIsTheSameRowsWhateverWasDrawnBefore) {
  const MlpShape shape{784, 128, 10};
  const auto expect_drawn_afresh = [&](std::int64_t rows_per_batch) {
    const MlpDataset d = make_mlp_dataset(shape, rows_per_batch);
    const std::int64_t rows = d.batches * rows_per_batch;
    std::vector<float> x(static_cast<std::size_t>(rows * shape.inputs));
    std::vector<int> labels(static_cast<std::size_t>(rows));
    make_synthetic_dataset(x.data(), labels.data(), rows, shape, 42);
    EXPECT_EQ(d.x, x) << rows_per_batch;
    EXPECT_EQ(d.labels, labels) << rows_per_batch;
  };
  expect_drawn_afresh(64);    // drawn first
  expect_drawn_afresh(1024);  // more rows than were drawn
  expect_drawn_afresh(1);     // a prefix of what was drawn
}

TEST(MlpSuite, StepFieldsComeFromTheStepTable) {
  const MlpStep steps[] = {MlpStep::inference, MlpStep::train_sgd, MlpStep::train_adamw,
                           MlpStep::train_adamw_clip, MlpStep::train_sgd_accum4};
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {
      0, 1};  // two GPUs: names carry /gpu:N and stay unique (register_case throws otherwise)
  register_mlp_suite(config);
  std::set<std::string> seen;
  for (const auto& c : registered_cases()) {
    const auto name = c.fields["step_variant"].get<std::string>();
    const MlpStep* step = nullptr;
    for (const auto& s : steps)
      if (name == to_string(s)) step = &s;
    ASSERT_NE(step, nullptr) << name;
    const auto& info = mlp_step_info(*step);
    seen.insert(name);
    EXPECT_EQ(c.fields["variant"], info.trains ? "train" : "inference") << c.name;
    EXPECT_EQ(c.fields["accum_steps"], info.accum_steps) << c.name;
    EXPECT_EQ(c.fields["samples_per_step"], c.fields["batch"].get<int>() * info.accum_steps)
        << c.name;
    if (info.trains)
      EXPECT_EQ(c.fields["optimizer"], to_string(info.optimizer)) << c.name;
    else
      EXPECT_TRUE(c.fields["optimizer"].is_null()) << c.name;
    if (info.max_grad_norm > 0)
      EXPECT_EQ(c.fields["max_grad_norm"], info.max_grad_norm) << c.name;
    else
      EXPECT_TRUE(c.fields["max_grad_norm"].is_null()) << c.name;
    // Plain one-batch steps on several threads at ≥ 256 rows each of 784-128-10 (≤ 2^18 parameters)
    // split the batch over the threads; otherwise plain one-batch SGD folds its update into the
    // CPU's GEMMs and plain AdamW at batch 1 forms W1's gradient inside its update.
    const bool plain = info.trains && info.accum_steps == 1 && info.max_grad_norm == 0 &&
                       c.fields["device"] == "cpu";
    const int batch = c.fields["batch"];
    const bool splits = plain && gemm_runs_alone_in_team(CpuGemmLibrary::openblas) &&
                        c.fields["cpu_threads"].get<int>() >= 2 &&
                        batch >= 256 * c.fields["cpu_threads"].get<int>() &&
                        c.fields["model"] == "784-128-10";
    const bool folds = plain && !splits && info.optimizer == Optimizer::sgd;
    const bool forms = plain && !splits && info.optimizer == Optimizer::adamw && batch == 1;
    EXPECT_EQ(c.fields.contains("cpu_update"), splits || folds || forms) << c.name;
    if (splits) { EXPECT_EQ(c.fields["cpu_update"], "batch_split_over_threads") << c.name; }
    if (folds) { EXPECT_EQ(c.fields["cpu_update"], "sgd_fused_into_weight_gemm") << c.name; }
    if (forms) { EXPECT_EQ(c.fields["cpu_update"], "adamw_forms_w1_gradient") << c.name; }
  }
  EXPECT_EQ(seen.size(), std::size(steps));
  clear_registered_cases();
}

TEST(MlpSuite, FullTableAddsTheImageModelAndTheHiddenSweep) {
  clear_registered_cases();
  RunConfig config;
  config.quick = false;
  config.gpu_devices = {0};
  register_mlp_suite(config);  // register_case throws on a duplicate name
  std::set<std::string> models;
  std::set<long long> hidden_swept, batches;
  for (const auto& c : registered_cases()) {
    models.insert(c.fields["model"].get<std::string>());
    batches.insert(c.fields["batch"].get<long long>());
    if (c.fields["sweep"] == "hidden") hidden_swept.insert(c.fields["hidden"].get<long long>());
  }
  EXPECT_TRUE(models.count("12288-64-10"));
  EXPECT_EQ(hidden_swept, (std::set<long long>{64, 128, 256, 512, 1024, 2048, 4096}));
  EXPECT_TRUE(batches.count(1) && batches.count(4096));
  EXPECT_EQ(batches.size(), 13u);
  clear_registered_cases();
}

TEST(MlpSuite, CpuRowsCarryTheirFieldsAndLowerTheLoss) {
  clear_registered_cases();
  RunConfig config;  // no GPU devices: CPU cases only
  register_mlp_suite(config);
  const auto doc = testing::run_registered(
      "mlp/784-128-10/(train_sgd|train_sgd_accum4|inference)/b64/cpu_1t", 1, 0.01);
  const auto rows = testing::rows_where(doc, "family", "mlp");
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) {
    EXPECT_EQ(row["validated"], true) << row["name"] << row.value("invalid_reason", "");
    EXPECT_EQ(row["device"], "cpu");
    EXPECT_EQ(row["cpu_threads"], 1);
    EXPECT_EQ(row["view"], "cpu_1t");
    EXPECT_EQ(row["series"], "");
    EXPECT_EQ(row["model"], "784-128-10");
    EXPECT_EQ(row["precision"], "fp32");
    const double seconds = row["real_time"].get<double>() * 1e-6;
    // samples/s and FLOP/s are the per-step counts over the per-step time.
    EXPECT_NEAR(
        row["samples_per_second"].get<double>() * seconds / row["samples_per_step"].get<double>(),
        1.0, 1e-6)
        << row["name"];
    EXPECT_NEAR(
        row["flop_per_second"].get<double>() * seconds / row["flops_per_step"].get<double>(), 1.0,
        1e-6)
        << row["name"];
    EXPECT_GT(row["host_time_s"].get<double>(), 0);
    if (row["variant"] == "train") {
      EXPECT_LT(row["final_loss"].get<double>(), row["initial_loss"].get<double>()) << row["name"];
      EXPECT_EQ(row["compare_group"].get<std::string>().rfind("mlp/784-128-10/train_sgd", 0), 0u);
    } else {
      EXPECT_FALSE(row.contains("final_loss"));
      EXPECT_TRUE(row["optimizer"].is_null());
    }
  }
  EXPECT_EQ(testing::rows_where(doc, "step_variant", "train_sgd_accum4").at(0)["samples_per_step"],
            256);
  clear_registered_cases();
}

// Left running on its 8 cycled samples, the batch-1 AdamW model's moments turn subnormal after ~800
// steps (kMlpRestartSteps); the row restarts from the seeded weights first and says what it ended
// with.
TEST(MlpSuite, CpuTrainingRowsRestartBeforeTheirMomentsTurnSubnormal) {
  clear_registered_cases();
  RunConfig config;
  register_mlp_suite(config);
  const auto doc = testing::run_registered("mlp/784-128-10/train_adamw/b1/cpu_1t", 1, 0.2);
  clear_registered_cases();  // before any early return below
  const auto rows = testing::rows_where(doc, "family", "mlp");
  ASSERT_EQ(rows.size(), 1u);
  const auto& row = rows[0];
  EXPECT_EQ(row["validated"], true) << row.value("invalid_reason", "");
  if (row["iterations"].get<double>() < 4 * kMlpRestartSteps)
    GTEST_SKIP() << "only " << row["iterations"]
                 << " steps on this build: too few to reach the subnormal range";
  EXPECT_EQ(row["subnormal_moments"], 0) << "after " << row["iterations"] << " steps";
}

TEST(MlpSuite, GpuRowsSkipWithTheReasonWhereNoGpuCanBeUsed) {
  const auto reason = gpu_unavailable_reason(0);
  if (reason.empty()) GTEST_SKIP() << "a GPU is available: tests/test_gpu_mlp.cpp runs its rows";
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  register_mlp_suite(config);
  const auto doc = testing::run_registered("mlp/784-128-10/train_sgd/b64/gpu/");
  const auto rows = testing::rows_where(doc, "device", 0);
  ASSERT_FALSE(rows.empty());
  for (const auto& row : rows) {
    EXPECT_EQ(row["skipped"], true) << row["name"];
    EXPECT_EQ(row["skip_reason"], reason) << row["name"];
    EXPECT_TRUE(row.contains("launch_mode") && row.contains("data_path") && row.contains("series"));
  }
  clear_registered_cases();
}

}  // namespace offloadbench
