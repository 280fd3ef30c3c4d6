// compare on files whose repetitions each ran in a process of their own: the floors' test
// (harness/regression/floor_significance.h) — the floor of a sample, the pair's scale, verdicts on
// simulated pairs whose noise only adds time (a steady floor, now and then a process far above it),
// and the fallback to Welch for files of one process.
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>

#include "harness/regression/compare.h"
#include "harness/regression/floor_history.h"
#include "harness/regression/floor_significance.h"
#include "harness/results/results.h"

namespace offloadbench {

namespace {

struct Row {
  std::string name;
  int threads;
  std::vector<double> ns;
};

nlohmann::json file_of(const std::vector<Row>& rows, int processes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.ns.size(); ++i)
      out.push_back({{"name", row.name},
                     {"run_type", "iteration"},
                     {"repetition_index", i},
                     {"real_time", row.ns[i]},
                     {"time_unit", "ns"},
                     {"bytes_per_second", 1e9 / row.ns[i]},
                     {"cpu_threads", row.threads},
                     {"skipped", false}});
  nlohmann::json machine = {
      {"gpu_models", nlohmann::json::array()}, {"driver", "none"}, {"cpu_model", "Test CPU"}};
  return {{"context",
           {{"offloadbench", {{"schema_version", kResultsSchemaVersion}, {"processes", processes}}},
            {"machine_fingerprint", machine}}},
          {"benchmarks", out}};
}

// A pair like `run --processes 5` of a CPU suite: half the benchmarks on one thread, half on two.
// Each process's time is the benchmark's floor (which moves between runs by `floor_drift`, relative
// sd) plus noise that only adds: a little (0-1%) always, and with probability `far` a process lands
// 5-60% above. `slowed` is slower by `factor` in every process of NEW.
struct Pair {
  nlohmann::json base, candidate;
};
Pair simulated(unsigned seed, int count, int processes, const std::string& slowed = "",
               double factor = 1, double far = 0.2, double floor_drift = 0.003) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> time(1e3, 1e6), unit(0, 1), far_by(0.05, 0.6);
  std::normal_distribution<double> normal(0, 1);
  const auto sample = [&](double floor) {
    std::vector<double> ns;
    for (int p = 0; p < processes; ++p)
      ns.push_back(floor * (1 + 0.01 * unit(rng)) * (unit(rng) < far ? 1 + far_by(rng) : 1));
    return ns;
  };
  std::vector<Row> base, candidate;
  for (int i = 0; i < count; ++i) {
    const std::string name = "bench" + std::to_string(i);
    const int threads = i % 2 ? 2 : 1;
    const double t = time(rng);
    base.push_back({name, threads, sample(t * std::exp(floor_drift * normal(rng)))});
    candidate.push_back(
        {name, threads,
         sample(t * std::exp(floor_drift * normal(rng)) * (name == slowed ? factor : 1))});
  }
  return {file_of(base, processes), file_of(candidate, processes)};
}

}  // namespace

TEST(FloorOf, FastestValueSpreadOfTheFasterHalfAndSlowestValue) {
  const auto f = floor_of({3, 1, 2, 5, 4});  // faster half: 1 2 3
  EXPECT_EQ(f.fastest(), 1);
  EXPECT_DOUBLE_EQ(f.spread, 1.5);  // mean of 2-1 and 3-1
  EXPECT_EQ(f.slowest(), 5);
  EXPECT_EQ(f.slowest(2), 4);
  const auto two = floor_of({2, 1});  // a faster half of one value has no spread
  EXPECT_EQ(two.fastest(), 1);
  EXPECT_EQ(two.spread, 0);
  EXPECT_EQ(two.slowest(), 2);
  const auto six = floor_of({1, 1.5, 2, 10, 11, 12});  // even count: the lower three
  EXPECT_DOUBLE_EQ(six.spread, 0.75);
  EXPECT_EQ(six.slowest(), 12);
  EXPECT_THROW(floor_of({1}), std::invalid_argument);
}

TEST(FloorGateRank, TheMostProcessesAllOfTheOtherFileLandAboveByChanceAtMostOnceInAThousand) {
  // (k/n)^m <= 0.001: 5 a side, the slowest ((1/5)^5 = 0.0003; (2/5)^5 = 0.01); 10 a side, the 5th
  // slowest ((5/10)^10 = 0.00098); never less than 1 (3 a side: (1/3)^3 = 0.04, still the slowest).
  EXPECT_EQ(floor_gate_rank(5, 5), 1u);
  EXPECT_EQ(floor_gate_rank(10, 10), 5u);
  EXPECT_EQ(floor_gate_rank(3, 3), 1u);
  EXPECT_EQ(floor_gate_rank(10, 5), 2u);  // (2/10)^5 = 0.0003, (3/10)^5 = 0.0024
  EXPECT_EQ(floor_gate_rank(5, 10), 2u);  // (2/5)^10 = 0.0001, (3/5)^10 = 0.006
}

TEST(FloorScale, MedianStandardisedShiftOverItsNullMedian) {
  // Shifts of ±1, ±2, ±3 uncertainties: median |z| 2, and the median of |T| at 5 df is 0.727.
  std::vector<FloorRow> rows;
  for (double z : {1.0, -2.0, 3.0, 2.0, -1.0}) rows.push_back({0.5 + 0.01 * z, 0.01, 5});
  EXPECT_NEAR(floor_scale(rows, 0.5), 2 / 0.7267, 1e-3);
  EXPECT_EQ(floor_scale({}, 0), 0);
}

TEST(CompareFloors, FilesOfSeveralProcessesAreComparedByTheirFloors) {
  const auto pair = simulated(1, 160, 5, "bench4", 1.5);
  const auto c = compare_results(pair.base, pair.candidate, CompareOptions{}, "b", "n");
  EXPECT_TRUE(c.noise.floors);
  EXPECT_EQ(c.base_processes, 5);
  EXPECT_GT(c.noise.floor_scale_single_thread, 0);
  EXPECT_GT(c.noise.floor_scale_other, 0);
  for (const auto& row : c.rows) EXPECT_EQ(row.test, "floor") << row.name;
  EXPECT_EQ(slower_names(c), std::vector<std::string>{"bench4"});
  for (const auto& row : c.rows) {
    if (row.name != "bench4") continue;
    EXPECT_NEAR(std::expm1(row.log_shift), 0.5, 0.02);  // the floor's shift, not the median's
    EXPECT_NE(row.reason.find("fastest +"), std::string::npos) << row.reason;
  }
}

TEST(CompareFloors, ATenPercentSlowdownIsFoundWhereNoProcessOfBaseLandedAboveIt) {
  // Welch on these files rarely can: one process in five lands 5-60% above the floor, which widens
  // a mean's standard error past what Holm over 160 benchmarks lets through. The floor does not
  // move. A verdict also needs NEW's fastest process above BASE's slowest: where a far process of
  // BASE lies above the slowed floor, the row is INCONCLUSIVE, never SLOWER by chance and never
  // SAME.
  int eligible = 0, found = 0;
  for (unsigned seed = 10; seed < 50; ++seed) {
    const auto pair = simulated(seed, 160, 5, "bench6", 1.10);
    const auto c = compare_results(pair.base, pair.candidate, CompareOptions{}, "b", "n");
    EXPECT_EQ(c.faster, 0) << "seed " << seed;
    for (const auto& row : c.rows) {
      if (row.name != "bench6") continue;
      EXPECT_NE(row.verdict, Verdict::same) << "seed " << seed;
      const bool apart = row.new_floor.fastest() - c.noise.common_shift > row.base_floor.slowest();
      if (!apart) {
        EXPECT_EQ(row.verdict, Verdict::inconclusive) << "seed " << seed;
        continue;
      }
      ++eligible;
      found += slower_names(c) == std::vector<std::string>{"bench6"};
    }
  }
  EXPECT_GE(eligible, 10);
  EXPECT_GE(found * 10, eligible * 8);  // 80%, the target for a 10% change on a steady benchmark
}

TEST(CompareFloors, FarProcessesInAToAPairsRaiseFewAlarms) {
  // A/A: the same floors, far processes anywhere. At most 2 pairs of 40 (5%) may raise any alarm.
  int pairs_with_alarm = 0, same = 0;
  for (unsigned seed = 100; seed < 140; ++seed) {
    const auto pair = simulated(seed, 160, 5);
    const auto c = compare_results(pair.base, pair.candidate, CompareOptions{}, "b", "n");
    pairs_with_alarm += c.slower + c.faster > 0;
    same += c.same;
  }
  EXPECT_LE(pairs_with_alarm, 2);
  EXPECT_GT(same, 0);  // steady floors within ±δ can be called SAME
}

TEST(CompareFloors, ASlowedBenchmarkIsNeverSameAndAFasterOneIsFaster) {
  // Twice as fast: FASTER, unless most of a file's processes landed far above the floor (three of
  // five, about one row in seventeen here), which leaves its faster half too wide to say.
  int found = 0;
  for (unsigned seed = 200; seed < 220; ++seed) {
    const auto slower = simulated(seed, 160, 5, "bench2", 1.05);
    for (const auto& row :
         compare_results(slower.base, slower.candidate, CompareOptions{}, "b", "n").rows) {
      if (row.name != "bench2") continue;
      EXPECT_NE(row.verdict, Verdict::same) << "seed " << seed << ": " << row.reason;
    }
    const auto faster = simulated(seed, 160, 5, "bench2", 0.5);
    const auto c = compare_results(faster.base, faster.candidate, CompareOptions{}, "b", "n");
    for (const auto& row : c.rows)
      found += row.name == "bench2" && row.verdict == Verdict::faster && c.faster == 1;
    EXPECT_EQ(c.slower, 0) << "seed " << seed;
  }
  EXPECT_GE(found, 17);
}

TEST(CompareFloors, AllProcessesInABenchmarksSlowModeAreNotARegression) {
  // Some benchmarks land in a slow mode in a share of their processes (their layout in memory,
  // their core): here bench3 runs 60% slow in two of BASE's five processes, and in all five of
  // NEW's. Its floor jumped 60% and BASE's faster half is tight, but BASE itself shows that level:
  // INCONCLUSIVE.
  auto pair = simulated(3, 160, 5);
  const std::vector<double> base_modes = {1.0, 1.005, 1.01, 1.6, 1.62},
                            new_modes = {1.6, 1.61, 1.6, 1.61, 1.605};
  std::size_t b = 0, n = 0;
  for (auto& row : pair.base["benchmarks"]) {
    if (row["name"] == "bench3") row["real_time"] = 1000 * base_modes[b++];
  }
  for (auto& row : pair.candidate["benchmarks"]) {
    if (row["name"] == "bench3") row["real_time"] = 1000 * new_modes[n++];
  }
  const auto c = compare_results(pair.base, pair.candidate, CompareOptions{}, "b", "n");
  for (const auto& row : c.rows) {
    if (row.name != "bench3") continue;
    EXPECT_EQ(row.verdict, Verdict::inconclusive) << row.reason;
    EXPECT_NE(row.reason.find("processes overlap"), std::string::npos) << row.reason;
  }
  EXPECT_EQ(c.slower, 0);
}

TEST(CompareFloors, RatesAreComparedByTheirHighestValue) {
  CompareOptions options;
  options.metric = "bytes_per_second";
  const auto pair = simulated(3, 160, 5, "bench8", 1.5);
  EXPECT_EQ(slower_names(compare_results(pair.base, pair.candidate, options, "b", "n")),
            std::vector<std::string>{"bench8"});
}

TEST(CompareFloors, OnlyWhenBothFilesHaveSeveralProcessesAndEnoughBenchmarks) {
  const auto several = simulated(4, 160, 5);
  auto one_process = several.candidate;
  one_process["context"]["offloadbench"]["processes"] = 1;
  const auto mixed = compare_results(several.base, one_process, CompareOptions{}, "b", "n");
  EXPECT_FALSE(mixed.noise.floors);
  for (const auto& row : mixed.rows) EXPECT_EQ(row.test, "welch");
  const auto few = simulated(4, static_cast<int>(kMinBenchmarksForRunPairNoise) - 1, 5);
  EXPECT_FALSE(compare_results(few.base, few.candidate, CompareOptions{}, "b", "n").noise.floors);
}

TEST(CompareFloors, KindsOfRowsShareOneScaleWhenEitherIsTooFewToLearnItsOwn) {
  auto pair = simulated(5, 40, 5);  // 20 and 20: each kind learns its own
  auto c = compare_results(pair.base, pair.candidate, CompareOptions{}, "b", "n");
  EXPECT_NE(c.noise.floor_scale_single_thread, c.noise.floor_scale_other);
  pair = simulated(5, 30, 5);  // 15 and 15: one scale
  c = compare_results(pair.base, pair.candidate, CompareOptions{}, "b", "n");
  EXPECT_EQ(c.noise.floor_scale_single_thread, c.noise.floor_scale_other);
}

}  // namespace offloadbench

namespace offloadbench {

TEST(FloorStepSpread, SuccessiveStepsOfEachFloorAfterTheRunsCommonShift) {
  // Six runs; every benchmark of a run shifted by the run's offset (the machine's state). "a" steps
  // ±0.02 every run, "b" sits still but for one level shift (a real change in the history), "c" was
  // measured twice only; the rest are steady and pin the offsets.
  const std::vector<double> offset = {0, 0.5, 0.5, -0.2, 0, 0.1};
  std::vector<std::map<std::string, double>> runs;
  for (std::size_t r = 0; r < offset.size(); ++r) {
    std::map<std::string, double> run;
    for (const char* steady : {"d", "e", "f", "g", "h"}) run[steady] = 1 + offset[r];
    run["a"] = 2 + offset[r] + (r % 2 ? 0.02 : 0);
    run["b"] = 3 + offset[r] + (r >= 3 ? 0.3 : 0);
    if (r < 2) run["c"] = 4 + offset[r];
    runs.push_back(run);
  }
  const auto spread = floor_step_spread(runs);
  EXPECT_NEAR(spread.at("a"), 1.4826 * 0.02 / std::sqrt(2.0), 1e-9);
  EXPECT_NEAR(spread.at("b"), 0, 1e-9);  // one step of five: the median step is 0
  EXPECT_NEAR(spread.at("d"), 0, 1e-9);
  EXPECT_EQ(spread.count("c"), 0u);
  EXPECT_TRUE(floor_step_spread({}).empty());
}

TEST(CompareFloors, HistoryKeepsAFloorThatMovesBetweenRunsFromLookingLikeARegression) {
  // A/A, but bench3's floor moved 15% between the runs, as some benchmarks' floors do with the
  // machine's state. Two files alone call it SLOWER; a history in which its floor moved like that
  // between earlier runs (spread 10%) does not — and still finds bench6 slowed 50%.
  auto pair = simulated(42, 160, 5, "bench6", 1.5);
  for (auto& row : pair.candidate["benchmarks"]) {
    if (row["name"] == "bench3") row["real_time"] = row["real_time"].get<double>() * 1.15;
  }
  const auto alone = compare_results(pair.base, pair.candidate, CompareOptions{}, "b", "n");
  auto alarms = slower_names(alone);
  std::sort(alarms.begin(), alarms.end());
  EXPECT_EQ(alarms, (std::vector<std::string>{"bench3", "bench6"}));
  CompareOptions with_history;
  for (int i = 0; i < 160; ++i) with_history.floor_history["bench" + std::to_string(i)] = 0.003;
  with_history.floor_history["bench3"] = 0.10;
  with_history.floor_history_runs = 12;
  const auto c = compare_results(pair.base, pair.candidate, with_history, "b", "n");
  EXPECT_EQ(slower_names(c), std::vector<std::string>{"bench6"});
  for (const auto& row : c.rows) {
    if (row.name != "bench3") continue;
    EXPECT_EQ(row.history_spread, 0.10);
  }
}

TEST(CompareFloors, OneThreadRowsWithAHistoryGetLighterTails) {
  // A history carries each floor's own movement between runs, which is what made one-thread rows'
  // tails heavy; rows it lacks, and rows of several threads, keep the tails they have without one.
  const auto pair = simulated(7, 160, 5);
  CompareOptions with_history;
  for (int i = 0; i < 150; ++i) with_history.floor_history["bench" + std::to_string(i)] = 0.003;
  with_history.floor_history_runs = 12;
  const auto c = compare_results(pair.base, pair.candidate, with_history, "b", "n");
  int checked = 0;
  for (const auto& row : c.rows) {
    const bool known = row.history_spread >= 0;
    EXPECT_EQ(known, std::stoi(row.name.substr(5)) < 150) << row.name;
    const double expected = !row.single_thread ? kFloorDfOther
                            : known            ? kFloorDfSingleThreadWithHistory
                                               : kFloorDfSingleThread;
    EXPECT_EQ(row.df, expected) << row.name;
    ++checked;
  }
  EXPECT_EQ(checked, 160);
}

}  // namespace offloadbench
