// history: the change-point detector on synthetic series with known steps (and none), and reading a
// directory of results files in time order, naming the git SHA where a step appeared.
#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/analysis/history.h"
#include "harness/results/results.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace {

// `runs` values around 100 with relative noise `cv`, multiplied by `factor` from run `step_at` on.
std::vector<double> series(int runs, double cv, unsigned seed, std::vector<std::pair<int, double>> steps = {}) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<double> x;
  for (int i = 0; i < runs; ++i) {
    double level = 100;
    for (const auto& [at, factor] : steps)
      if (i >= at) level *= factor;
    x.push_back(level * (1 + cv * noise(rng)));
  }
  return x;
}

const ChangePointOptions kDefaults{};

std::vector<std::size_t> steps_in(const std::vector<double>& x, const ChangePointOptions& o = kDefaults) {
  std::vector<std::size_t> indices;
  for (const auto& step : detect_change_points(x, o)) indices.push_back(step.index);
  return indices;
}

}  // namespace

TEST(ChangePoints, NoneInFlatNoisySeries) {
  for (unsigned seed = 0; seed < 200; ++seed)
    EXPECT_TRUE(steps_in(series(30, 0.01, seed)).empty()) << "seed " << seed;
}

TEST(ChangePoints, FindsOneStepAtItsRun) {
  for (unsigned seed = 0; seed < 200; ++seed) {
    EXPECT_EQ(steps_in(series(30, 0.01, seed, {{15, 1.10}})), std::vector<std::size_t>{15})
        << "seed " << seed;
    EXPECT_EQ(steps_in(series(30, 0.01, seed, {{7, 0.90}})), std::vector<std::size_t>{7})
        << "seed " << seed;
  }
}

TEST(ChangePoints, FindsAStepAndItsReversal) {
  for (unsigned seed = 0; seed < 100; ++seed)
    EXPECT_EQ(steps_in(series(30, 0.005, seed, {{10, 1.08}, {20, 1 / 1.08}})),
              (std::vector<std::size_t>{10, 20}))
        << "seed " << seed;
}

TEST(ChangePoints, IgnoresStepsBelowTheMinimumMagnitude) {
  for (unsigned seed = 0; seed < 100; ++seed)
    EXPECT_TRUE(steps_in(series(30, 0.002, seed, {{15, 1.03}})).empty()) << seed;
  ChangePointOptions two_percent = kDefaults;
  two_percent.min_magnitude = 0.02;
  EXPECT_EQ(steps_in(series(30, 0.002, 1, {{15, 1.03}}), two_percent), std::vector<std::size_t>{15});
}

TEST(ChangePoints, IgnoresStepsInsideTheNoise) {
  // 6% steps in 10% run-to-run noise are not distinguishable from it.
  int found = 0;
  for (unsigned seed = 0; seed < 100; ++seed)
    found += !steps_in(series(30, 0.10, seed, {{15, 1.06}})).empty();
  EXPECT_LE(found, 10);
}

TEST(ChangePoints, OneOutlierRunIsNotAStepButAPersistentOneIs) {
  auto x = series(20, 0.0, 0);
  x[10] = 150;  // one bad night
  EXPECT_TRUE(steps_in(x).empty());
  auto late = series(20, 0.0, 0, {{18, 1.2}});  // two runs at the new level: not yet persistent
  EXPECT_TRUE(steps_in(late).empty());
  late = series(20, 0.0, 0, {{17, 1.2}});  // three runs
  EXPECT_EQ(steps_in(late), std::vector<std::size_t>{17});
  EXPECT_TRUE(steps_in({}).empty());
  EXPECT_TRUE(steps_in({1.0}).empty());
}

TEST(ChangePoints, FindsASlowCreepNoSingleNightShows) {
  // 0.4% slower every night for 30 nights (12% in all) in 1% noise: no night-to-night step comes near
  // 5%, but the distributions before and after differ; E-divisive finds it, once.
  int found = 0;
  for (unsigned seed = 0; seed < 50; ++seed) {
    std::vector<std::pair<int, double>> creep;
    for (int night = 10; night < 40; ++night) creep.push_back({night, 1.004});
    const auto steps = detect_change_points(series(50, 0.01, seed, creep), kDefaults);
    found += !steps.empty();
    for (const auto& s : steps) {
      EXPECT_GT(s.after, s.before) << seed;
      EXPECT_GE(s.index, 10u) << seed;
      EXPECT_LE(s.index, 40u) << seed;
    }
  }
  EXPECT_GE(found, 48);
}

namespace {

nlohmann::json nightly(int run, double real_time, const std::string& cpu = "Test CPU", bool incomplete = false) {
  nlohmann::json rows = nlohmann::json::array();
  for (int i = 0; i < 5; ++i) {
    rows.push_back({{"name", "steady"}, {"run_type", "iteration"}, {"real_time", 50.0 + 0.01 * i}, {"time_unit", "ns"}});
    rows.push_back({{"name", "stepped"}, {"run_type", "iteration"}, {"real_time", real_time + 0.01 * i},
                    {"time_unit", "ns"}});
  }
  rows.push_back({{"name", "gpu"}, {"run_type", "iteration"}, {"skipped", true}, {"skip_reason", "no GPU"}});
  return {{"context",
           {{"offloadbench",
             {{"schema_version", kResultsSchemaVersion},
              {"git_sha", fmt::format("sha{}", run)},
              {"start_time_utc", fmt::format("2026-11-{:02}T02:00:00Z", run + 1)},
              {"incomplete", incomplete}}},
            {"machine_fingerprint", {{"cpu_model", cpu}, {"gpu_models", nlohmann::json::array()}}}}},
          {"benchmarks", rows}};
}

struct TempDir {
  std::filesystem::path path;
  TempDir() : path(testing::temp_path("ob_history")) { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string history_error(const std::string& directory) {
  try {
    load_history(directory, "real_time", false, kDefaults);
  } catch (const ResultsError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(History, OrdersRunsByStartTimeAndNamesTheShaOfTheStep) {
  TempDir dir;
  for (int run = 0; run < 9; ++run)  // file names sort against time order on purpose
    write_json_atomically(dir.file(fmt::format("{}.json", 9 - run)), nightly(run, run < 5 ? 100.0 : 112.0));
  write_json_atomically(dir.file("unfinished.json"), nightly(9, 500.0, "Test CPU", true));
  std::ofstream(dir.file("notes.txt")) << "not a results file";
  const auto h = load_history(dir.path.string(), "real_time", false, kDefaults);
  ASSERT_EQ(h.runs.size(), 9u);
  EXPECT_EQ(h.runs.front().git_sha, "sha0");
  EXPECT_EQ(h.runs.back().git_sha, "sha8");
  ASSERT_EQ(h.ignored.size(), 1u);
  ASSERT_EQ(h.benchmarks.size(), 2u);  // "gpu" was never measured
  for (const auto& b : h.benchmarks) {
    if (b.name == "steady") {
      EXPECT_TRUE(b.change_points.empty());
    }
    if (b.name != "stepped") continue;
    ASSERT_EQ(b.change_points.size(), 1u);
    const auto& cp = b.change_points[0];
    EXPECT_EQ(cp.git_sha, "sha5");
    EXPECT_EQ(cp.previous_git_sha, "sha4");
    EXPECT_TRUE(cp.slower);
    EXPECT_NEAR(cp.change, 0.12, 1e-3);
  }
  const auto json = to_json(h);
  EXPECT_EQ(json["runs"].size(), 9u);
  EXPECT_EQ(json["benchmarks"][1]["change_points"][0]["git_sha"], "sha5");
}

TEST(History, BadDirectoriesAndFilesGiveOneLineNamingThem) {
  TempDir dir;
  EXPECT_NE(history_error(dir.path.string()).find("no finished results files"), std::string::npos);
  EXPECT_NE(history_error(dir.file("missing")).find("not a directory"), std::string::npos);
  write_json_atomically(dir.file("a.json"), nightly(0, 100.0));
  write_json_atomically(dir.file("b.json"), nightly(1, 100.0, "Other CPU"));
  const auto different = history_error(dir.path.string());
  EXPECT_NE(different.find("b.json: machine fingerprint differs"), std::string::npos) << different;
  EXPECT_NE(different.find("cpu_model"), std::string::npos) << different;
  EXPECT_NO_THROW(load_history(dir.path.string(), "real_time", true, kDefaults));
  std::ofstream(dir.file("b.json")) << "{\"context\": {";
  const auto truncated = history_error(dir.path.string());
  EXPECT_NE(truncated.find("b.json: not valid JSON"), std::string::npos) << truncated;
  EXPECT_EQ(truncated.find('\n'), std::string::npos);
}

}  // namespace offloadbench
