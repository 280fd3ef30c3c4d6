// compare: verdicts against ±δ, Holm across benchmarks, the run pair's noise (common shift and
// the drift between the runs), the gates, orientation of times vs rates, too few repetitions,
// matching by name and parameters, fingerprint refusal, Markdown order, bad files.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "cli/child_process.h"
#include "cli/commands.h"
#include "harness/regression/compare.h"
#include "harness/results/results.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace {

nlohmann::json fingerprint(const std::string& cpu = "Test CPU") {
  return {{"gpu_models", nlohmann::json::array()},
          {"driver", "none"},
          {"cuda_runtime", "13.0"},
          {"cpu_model", cpu}};
}

// A results file with one per-repetition row per value (real_time in ns) and a mean aggregate row.
nlohmann::json results(const std::vector<std::pair<std::string, std::vector<double>>>& benchmarks,
                       const nlohmann::json& machine = fingerprint()) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [name, values] : benchmarks) {
    for (std::size_t i = 0; i < values.size(); ++i)
      rows.push_back({{"name", name},
                      {"run_type", "iteration"},
                      {"repetition_index", i},
                      {"real_time", values[i]},
                      {"time_unit", "ns"},
                      {"bytes_per_second", 1e9 / values[i]},
                      {"bytes", 1000},
                      {"skipped", false}});
    rows.push_back({{"name", name + "_mean"},
                    {"run_type", "aggregate"},
                    {"aggregate_name", "mean"},
                    {"real_time", 1.0},
                    {"time_unit", "ns"}});
  }
  return {{"context",
           {{"offloadbench", {{"schema_version", kResultsSchemaVersion}}},
            {"machine_fingerprint", machine}}},
          {"benchmarks", rows}};
}

std::vector<double> scaled(std::vector<double> values, double factor) {
  for (auto& v : values) v *= factor;
  return values;
}

const std::vector<double> kTight = {100.0,  100.1, 99.9,   100.05, 99.95,
                                    100.02, 99.98, 100.03, 99.97,  100.01};

CompareOptions defaults() { return CompareOptions{}; }

}  // namespace

TEST(CompareVerdict, SlowerFasterSameOutsideAndInsideDelta) {
  auto o = defaults();
  EXPECT_EQ(compare_samples("x", kTight, scaled(kTight, 1.10), o).verdict, Verdict::slower);
  EXPECT_EQ(compare_samples("x", kTight, scaled(kTight, 0.90), o).verdict, Verdict::faster);
  EXPECT_EQ(compare_samples("x", kTight, kTight, o).verdict, Verdict::same);
  // Real (fully separated samples) but inside δ = 2%: SAME, not SLOWER.
  const auto small = compare_samples("x", kTight, scaled(kTight, 1.01), o);
  EXPECT_EQ(small.verdict, Verdict::same) << small.reason;
  // A GPU row's δ is 1%: the same +1.5% is SLOWER there and not on a CPU row.
  EXPECT_EQ(compare_samples("x", kTight, scaled(kTight, 1.015), o, true).verdict, Verdict::slower);
  EXPECT_NE(compare_samples("x", kTight, scaled(kTight, 1.015), o, false).verdict, Verdict::slower);
}

TEST(CompareVerdict, ChangeNearDeltaIsNeitherSlowerNorSame) {
  // +2.05% with a spread of ±1%: the samples cannot say whether it is above or below δ = 2%.
  const std::vector<double> base = {100, 101, 99, 100.5, 99.5, 100.2, 99.8, 100.7, 99.3, 100};
  const auto r = compare_samples("x", base, scaled(base, 1.0205), defaults());
  EXPECT_EQ(r.verdict, Verdict::inconclusive) << r.reason;
  EXPECT_NE(r.reason.find("spread"), std::string::npos) << r.reason;
}

TEST(CompareVerdict, LargeChangeWithinTheNoiseIsInconclusive) {
  const std::vector<double> base = {80, 120, 95, 105, 100}, candidate = {90, 130, 100, 115, 110};
  const auto r = compare_samples("x", base, candidate, defaults());
  EXPECT_GE(r.p_value, 0.05);
  EXPECT_EQ(r.verdict, Verdict::inconclusive);
  EXPECT_NE(r.reason.find("spread"), std::string::npos) << r.reason;
}

TEST(CompareResults, HolmKeepsManyBenchmarksFromMultiplyingFalseAlarms) {
  // +5% with a spread of ±2%, five repetitions a side: alone, Welch's one-sided p against δ = 2% is
  // 0.01, a verdict; among 20 benchmarks Holm asks for 2·0.01·20 < 0.05, which it is not.
  const std::vector<double> five = {100, 102, 98, 101, 99};
  std::vector<std::pair<std::string, std::vector<double>>> base = {{"slow", five}},
                                                           candidate = {
                                                               {"slow", scaled(five, 1.05)}};
  EXPECT_EQ(compare_results(results(base), results(candidate), defaults(), "b", "n").slower, 1);
  for (int i = 0; i < 19; ++i) {
    base.push_back({"same" + std::to_string(i), five});
    candidate.push_back({"same" + std::to_string(i), five});
  }
  const auto many = compare_results(results(base), results(candidate), defaults(), "b", "n");
  EXPECT_EQ(many.slower, 0);
  EXPECT_EQ(many.rows.front().name, "slow");
  EXPECT_EQ(many.rows.front().verdict, Verdict::inconclusive) << many.rows.front().reason;
  EXPECT_NEAR(many.rows.front().p_value, 20 * 2 * many.rows.front().p_slower, 1e-12);
}

TEST(CompareVerdict, FewerThanThreeRepetitionsIsInconclusiveWithTheReason) {
  const std::vector<double> two = {100, 100}, slow = {200, 201, 199};
  for (const auto& r :
       {compare_samples("x", two, slow, defaults()), compare_samples("x", slow, two, defaults())}) {
    EXPECT_EQ(r.verdict, Verdict::inconclusive);
    EXPECT_NE(r.reason.find("fewer than 3 repetitions"), std::string::npos) << r.reason;
  }
  const std::vector<double> three = {100, 100.1, 99.9};  // exactly three is enough
  EXPECT_EQ(compare_samples("x", three, scaled(three, 2), defaults()).verdict, Verdict::slower);
}

TEST(CompareVerdict, WildRepetitionsWithoutAMovedMedianAreNotAVerdict) {
  // Five of eleven repetitions twice as long: the mean of the logs moves by 32% and Welch alone
  // says slower (p ≈ 0.02), but the median did not move.
  const std::vector<double> base = {100,  100.5, 99.5, 100.2, 99.8, 100.1,
                                    99.9, 100.3, 99.7, 100.4, 99.6};
  std::vector<double> candidate = base;
  for (int i = 6; i < 11; ++i) candidate[i] *= 2;
  const auto r = compare_samples("x", base, candidate, defaults());
  EXPECT_LT(r.p_value, 0.05);
  EXPECT_EQ(r.verdict, Verdict::inconclusive) << r.reason;
  EXPECT_NE(r.reason.find("medians moved by less than 2.0%"), std::string::npos) << r.reason;
  // Medians 10% apart but the quartiles overlap: no verdict either.
  const auto overlap =
      compare_samples("x", {100, 100, 100, 111, 111}, {100, 100, 110, 111, 111}, defaults());
  EXPECT_NE(overlap.verdict, Verdict::slower) << overlap.reason;
}

namespace {

// A results file pair like a quick CPU run: `count` benchmarks of `reps` repetitions, each with its
// own time and its own spread within a run (log-normal, 0.5-6%); NEW's benchmarks also each moved
// by a random amount (sd `between`) and by `common` together, and `slowed` (if any) is slower by
// `factor`.
struct SimulatedPair {
  nlohmann::json base, candidate;
};
SimulatedPair simulated_pair(unsigned seed, int count, int reps, double between, double common,
                             const std::string& slowed = "", double factor = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> time(1e3, 1e6), spread(0.005, 0.06);
  std::normal_distribution<double> normal(0, 1);
  std::vector<std::pair<std::string, std::vector<double>>> base, candidate;
  for (int i = 0; i < count; ++i) {
    const std::string name = "bench" + std::to_string(i);
    const double t = time(rng), s = spread(rng);
    const double moved = std::exp(common + between * normal(rng)) * (name == slowed ? factor : 1);
    std::vector<double> b, n;
    for (int r = 0; r < reps; ++r) b.push_back(t * std::exp(s * normal(rng)));
    for (int r = 0; r < reps; ++r) n.push_back(t * moved * std::exp(s * normal(rng)));
    base.push_back({name, b});
    candidate.push_back({name, n});
  }
  return {results(base), results(candidate)};
}

}  // namespace

TEST(CompareResults, AClearFiftyPercentSlowdownAtFiveRepetitionsIsSlowerAmongMany) {
  // The case two files could not decide before: 5 repetitions, 160 benchmarks, one 50% slower.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const auto pair = simulated_pair(seed, 160, 5, 0.0, 0.0, "bench7", 1.5);
    const auto c = compare_results(pair.base, pair.candidate, defaults(), "b", "n");
    EXPECT_EQ(slower_names(c), std::vector<std::string>{"bench7"}) << "seed " << seed;
    EXPECT_EQ(c.faster, 0) << "seed " << seed;
    EXPECT_EQ(c.rows.front().name, "bench7");
  }
}

TEST(CompareResults, IdenticalDistributionsAreSameOrInconclusiveNeverAVerdict) {
  // Holm keeps the chance of any false SLOWER/FASTER in a file at alpha = 5%: over 40 A/A pairs of
  // 160 benchmarks, at most 2 pairs (5%) may have one.
  int pairs_with_alarm = 0;
  for (unsigned seed = 100; seed < 140; ++seed) {
    const auto pair = simulated_pair(seed, 160, 5, 0.0, 0.0);
    const auto c = compare_results(pair.base, pair.candidate, defaults(), "b", "n");
    pairs_with_alarm += c.slower + c.faster > 0;
  }
  EXPECT_LE(pairs_with_alarm, 2);
}

TEST(CompareResults, MovesBetweenRunsBeyondEachBenchmarksOwnSpreadAreLearnedNotFlagged) {
  // Every benchmark moved by its own random 5% between the runs (the drift a test over one run's
  // repetitions cannot see) and all by +20% together (the machine's state): Welch alone would flag
  // dozens; the run pair's common shift and between-runs term absorb both, and a benchmark slowed
  // 50% on top of them still stands out.
  const auto drift = simulated_pair(7, 160, 5, 0.05, std::log(1.2));
  const auto c = compare_results(drift.base, drift.candidate, defaults(), "b", "n");
  EXPECT_EQ(c.slower + c.faster, 0);
  EXPECT_NEAR(std::expm1(c.noise.common_shift), 0.2, 0.03);
  EXPECT_NEAR(c.noise.between, 0.05, 0.015);
  EXPECT_NE(c.machine_note.find("moved slower"), std::string::npos) << c.machine_note;
  const auto slowed = simulated_pair(7, 160, 5, 0.05, std::log(1.2), "bench3", 1.5);
  EXPECT_EQ(slower_names(compare_results(slowed.base, slowed.candidate, defaults(), "b", "n")),
            std::vector<std::string>{"bench3"});
  // Too few benchmarks to learn from: nothing is estimated, each is judged on its own.
  const auto few = simulated_pair(7, kMinBenchmarksForRunPairNoise - 1, 5, 0.0, 0.0);
  const auto alone = compare_results(few.base, few.candidate, defaults(), "b", "n");
  EXPECT_EQ(alone.noise.benchmarks, 0u);
  EXPECT_EQ(alone.noise.between, 0);
}

TEST(CompareResults, ASlowedBenchmarkIsNeverSame) {
  for (unsigned seed = 200; seed < 220; ++seed)
    for (double factor : {1.1, 1.5}) {
      const auto pair = simulated_pair(seed, 160, 5, 0.02, 0.0, "bench11", factor);
      for (const auto& row : compare_results(pair.base, pair.candidate, defaults(), "b", "n").rows)
        if (row.name == "bench11") {
          EXPECT_NE(row.verdict, Verdict::same) << seed << " " << row.reason;
        }
    }
}

TEST(CompareVerdict, RatesAreBetterHigherAndTimesLower) {
  EXPECT_TRUE(higher_is_better("bytes_per_second"));
  EXPECT_TRUE(higher_is_better("flop_per_second"));
  EXPECT_FALSE(higher_is_better("real_time"));
  EXPECT_FALSE(higher_is_better("cpu_time"));
  auto o = defaults();
  o.metric = "bytes_per_second";
  const auto lower_rate = compare_samples("x", kTight, scaled(kTight, 0.9), o);
  EXPECT_EQ(lower_rate.verdict, Verdict::slower);
  EXPECT_GT(lower_rate.slowdown, 1.0);
  EXPECT_EQ(compare_samples("x", kTight, scaled(kTight, 1.1), o).verdict, Verdict::faster);
  // The same files compared on time and on throughput agree.
  const auto base = results({{"a", kTight}}), slow = results({{"a", scaled(kTight, 1.2)}});
  EXPECT_EQ(compare_results(base, slow, defaults(), "b", "n").slower, 1);
  EXPECT_EQ(compare_results(base, slow, o, "b", "n").slower, 1);
}

TEST(CompareResults, MatchesByNameListsOneSidedAndSkippedAndSortsSlowestFirst) {
  auto base = results(
      {{"same", kTight}, {"slow", kTight}, {"fast", kTight}, {"gone", kTight}, {"gpu", kTight}});
  auto candidate = results({{"fast", scaled(kTight, 0.5)},
                            {"same", kTight},
                            {"slow", scaled(kTight, 1.3)},
                            {"added", kTight},
                            {"gpu", kTight}});
  for (auto* doc : {&base, &candidate})
    for (auto& row : (*doc)["benchmarks"])
      if (row["name"] == "gpu")
        row = {{"name", "gpu"},
               {"run_type", "iteration"},
               {"skipped", true},
               {"skip_reason", "no GPU"},
               {"real_time", 0}};
  const auto c = compare_results(base, candidate, defaults(), "b", "n");
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[0].name, "slow");
  EXPECT_EQ(c.rows[2].name, "fast");
  EXPECT_EQ(c.slower, 1);
  EXPECT_EQ(c.faster, 1);
  EXPECT_EQ(c.same, 1);
  EXPECT_EQ(c.only_in_base, std::vector<std::string>{"gone"});
  EXPECT_EQ(c.only_in_new, std::vector<std::string>{"added"});
  EXPECT_EQ(c.skipped_in_both, std::vector<std::string>{"gpu"});
  EXPECT_NEAR(c.geomean_slowdown, std::cbrt(1.3 * 0.5 * 1.0), 1e-9);
  const auto md = comparison_markdown(c, "b", "n");
  EXPECT_LT(md.find("`slow`"), md.find("`same`"));
  EXPECT_LT(md.find("`same`"), md.find("`fast`"));
  EXPECT_NE(md.find("1 SLOWER, 1 FASTER, 1 SAME, 0 INCONCLUSIVE"), std::string::npos) << md;
  const auto json = to_json(c);
  EXPECT_EQ(json["counts"]["SLOWER"], 1);
  EXPECT_EQ(json["rows"][0]["verdict"], "SLOWER");
}

TEST(CompareResults, SkippedOnOneSideOrDifferentParametersIsInconclusive) {
  auto base = results({{"a", kTight}, {"b", kTight}});
  auto candidate = results({{"a", kTight}, {"b", kTight}});
  for (auto& row : candidate["benchmarks"]) {
    if (row["name"] == "a")
      row = {
          {"name", "a"}, {"run_type", "iteration"}, {"skipped", true}, {"skip_reason", "no GPU"}};
    if (row["name"] == "b") row["bytes"] = 2000;
  }
  const auto c = compare_results(base, candidate, defaults(), "b", "n");
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.inconclusive, 2);
  for (const auto& row : c.rows) {
    if (row.name == "a") {
      EXPECT_NE(row.reason.find("not measured in NEW: no GPU"), std::string::npos) << row.reason;
    }
    if (row.name == "b") {
      EXPECT_NE(row.reason.find("bytes (1000 vs 2000)"), std::string::npos) << row.reason;
    }
  }
}

TEST(CompareResults, TimesInDifferentUnitsAreComparedInSeconds) {
  auto base = results({{"a", kTight}});
  auto candidate = results({{"a", scaled(kTight, 1e-3)}});  // the same times, written in us
  for (auto& row : candidate["benchmarks"]) row["time_unit"] = "us";
  EXPECT_EQ(compare_results(base, candidate, defaults(), "b", "n").same, 1);
}

TEST(CompareResults, RefusesDifferentMachinesNamingTheFieldsUnlessAllowed) {
  const auto base = results({{"a", kTight}}),
             other = results({{"a", kTight}}, fingerprint("Other CPU"));
  try {
    compare_results(base, other, defaults(), "base.json", "new.json");
    FAIL() << "no refusal";
  } catch (const ResultsError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cpu_model (\"Test CPU\" vs \"Other CPU\")"), std::string::npos)
        << message;
    EXPECT_NE(message.find("--allow-different-machines"), std::string::npos) << message;
    EXPECT_EQ(message.find("driver"), std::string::npos) << message;
  }
  auto o = defaults();
  o.allow_different_machines = true;
  EXPECT_EQ(compare_results(base, other, o, "b", "n").same, 1);
  EXPECT_TRUE(fingerprint_differences(fingerprint(), fingerprint()).empty());
}

TEST(CompareResults, NotesWhenNearlyEverythingMovedTogether) {
  std::vector<std::pair<std::string, std::vector<double>>> base, all_slower, one_slower;
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    base.push_back({name, kTight});
    all_slower.push_back({name, scaled(kTight, 1.5)});
    one_slower.push_back({name, std::string(name) == "a" ? scaled(kTight, 1.5) : kTight});
  }
  auto loaded = results(all_slower);
  loaded["context"]["load_avg"] = {7.5, 6.0, 5.0};
  auto quiet = results(base);
  quiet["context"]["load_avg"] = {0.3, 0.5, 0.5};
  const auto everything = compare_results(quiet, loaded, defaults(), "b", "n");
  EXPECT_EQ(everything.slower, 5);  // the verdicts stand
  EXPECT_NE(everything.machine_note.find("5 of 5 benchmarks moved slower"), std::string::npos)
      << everything.machine_note;
  EXPECT_NE(everything.machine_note.find("load average 0.3 vs 7.5"), std::string::npos)
      << everything.machine_note;
  EXPECT_NE(comparison_markdown(everything, "b", "n").find("**Note:**"), std::string::npos);
  EXPECT_TRUE(compare_results(results(base), results(one_slower), defaults(), "b", "n")
                  .machine_note.empty());
}

TEST(CompareInput, RowsWithoutAFiniteMetricAreRejectedNamingFileAndBenchmark) {
  auto doc = results({{"a", kTight}});
  doc["benchmarks"][3]["real_time"] = nullptr;  // how a NaN is written
  try {
    benchmark_samples(doc, "real_time", "f.json");
    FAIL();
  } catch (const ResultsError& e) {
    EXPECT_NE(std::string(e.what()).find("f.json: benchmark 'a': 'real_time' is null"),
              std::string::npos)
        << e.what();
  }
  doc["benchmarks"][3]["real_time"] = "fast";
  EXPECT_THROW(benchmark_samples(doc, "real_time", "f"), ResultsError);
  doc["benchmarks"][3]["real_time"] = 1.0;
  doc["benchmarks"][3]["skipped"] = "no";  // wrong type
  EXPECT_THROW(benchmark_samples(doc, "real_time", "f"), ResultsError);
  EXPECT_THROW(benchmark_samples(results({{"a", kTight}}), "no_such_field", "f"), ResultsError);
}

TEST(CompareInput, LoadForComparisonRejectsEmptyListsAndMissingFingerprint) {
  const auto path = testing::temp_path("ob_compare_input");
  auto empty = results({});
  write_json_atomically(path, empty);
  try {
    load_for_comparison(path);
    FAIL();
  } catch (const ResultsError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": no benchmarks"), std::string::npos) << e.what();
  }
  auto anonymous = results({{"a", kTight}});
  anonymous["context"].erase("machine_fingerprint");
  write_json_atomically(path, anonymous);
  EXPECT_THROW(load_for_comparison(path), ResultsError);
  std::filesystem::remove(path);
}

TEST(CompareCli, ParseFractionAcceptsPercentAndPlainNumbers) {
  EXPECT_DOUBLE_EQ(cli::parse_fraction("5%", "--t"), 0.05);
  EXPECT_DOUBLE_EQ(cli::parse_fraction("0.05", "--t"), 0.05);
  EXPECT_THROW(cli::parse_fraction("5%%", "--t"), cli::UsageError);
  EXPECT_THROW(cli::parse_fraction("five", "--t"), cli::UsageError);
  EXPECT_THROW(cli::parse_fraction("", "--t"), cli::UsageError);
}

TEST(AbCli, ExactNameFilterEscapesRegexCharacters) {
  EXPECT_EQ(cli::exact_name_filter({"transfer/h2d/4KiB/manual_time", "a.b(c)"}),
            "^(transfer/h2d/4KiB/manual_time|a\\.b\\(c\\))$");
}

}  // namespace offloadbench
