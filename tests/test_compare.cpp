// compare: verdicts against ±δ, Holm across benchmarks, orientation of times vs rates, too few
// repetitions, matching by name and parameters, fingerprint refusal, Markdown order, bad files.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "benchmarks/cli/commands.h"
#include "benchmarks/cli/child_process.h"
#include "harness/analysis/compare.h"
#include "harness/results/results.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace {

nlohmann::json fingerprint(const std::string& cpu = "Test CPU") {
  return {{"gpu_models", nlohmann::json::array()}, {"driver", "none"}, {"cuda_runtime", "13.0"}, {"cpu_model", cpu}};
}

// A results file with one per-repetition row per value (real_time in ns) and a mean aggregate row.
nlohmann::json results(const std::vector<std::pair<std::string, std::vector<double>>>& benchmarks,
                       const nlohmann::json& machine = fingerprint()) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [name, values] : benchmarks) {
    for (std::size_t i = 0; i < values.size(); ++i)
      rows.push_back({{"name", name}, {"run_type", "iteration"}, {"repetition_index", i}, {"real_time", values[i]},
                      {"time_unit", "ns"}, {"bytes_per_second", 1e9 / values[i]}, {"bytes", 1000},
                      {"skipped", false}});
    rows.push_back({{"name", name + "_mean"}, {"run_type", "aggregate"}, {"aggregate_name", "mean"},
                    {"real_time", 1.0}, {"time_unit", "ns"}});
  }
  return {{"context", {{"offloadbench", {{"schema_version", kResultsSchemaVersion}}}, {"machine_fingerprint", machine}}},
          {"benchmarks", rows}};
}

std::vector<double> scaled(std::vector<double> values, double factor) {
  for (auto& v : values) v *= factor;
  return values;
}

const std::vector<double> kTight = {100.0, 100.1, 99.9, 100.05, 99.95, 100.02, 99.98, 100.03, 99.97, 100.01};

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
  // Five repetitions a side, 10% slower: alone, the smallest one-sided exact p (1/252) is a verdict;
  // among 20 benchmarks, Holm asks for 2·(1/252)·20 < 0.05, which five repetitions cannot give.
  const std::vector<double> five = {100, 100.1, 99.9, 100.05, 99.95};
  std::vector<std::pair<std::string, std::vector<double>>> base = {{"slow", five}}, candidate = {{"slow", scaled(five, 1.1)}};
  EXPECT_EQ(compare_results(results(base), results(candidate), defaults(), "b", "n").slower, 1);
  for (int i = 0; i < 19; ++i) {
    base.push_back({"same" + std::to_string(i), five});
    candidate.push_back({"same" + std::to_string(i), five});
  }
  const auto many = compare_results(results(base), results(candidate), defaults(), "b", "n");
  EXPECT_EQ(many.slower, 0);
  EXPECT_EQ(many.rows.front().name, "slow");
  EXPECT_EQ(many.rows.front().verdict, Verdict::inconclusive) << many.rows.front().reason;
}

TEST(CompareVerdict, FewerThanFiveRepetitionsIsInconclusiveWithTheReason) {
  const std::vector<double> four = {100, 100, 100, 100}, slow = {200, 200, 200, 200, 200};
  for (const auto& r : {compare_samples("x", four, slow, defaults()), compare_samples("x", slow, four, defaults())}) {
    EXPECT_EQ(r.verdict, Verdict::inconclusive);
    EXPECT_NE(r.reason.find("fewer than 5 repetitions"), std::string::npos) << r.reason;
  }
  const std::vector<double> five = {100, 100.1, 99.9, 100.05, 99.95};  // exactly five is enough
  EXPECT_EQ(compare_samples("x", five, scaled(five, 2), defaults()).verdict, Verdict::slower);
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
  auto base = results({{"same", kTight}, {"slow", kTight}, {"fast", kTight}, {"gone", kTight}, {"gpu", kTight}});
  auto candidate = results({{"fast", scaled(kTight, 0.5)}, {"same", kTight}, {"slow", scaled(kTight, 1.3)},
                            {"added", kTight}, {"gpu", kTight}});
  for (auto* doc : {&base, &candidate})
    for (auto& row : (*doc)["benchmarks"])
      if (row["name"] == "gpu") row = {{"name", "gpu"}, {"run_type", "iteration"}, {"skipped", true},
                                       {"skip_reason", "no GPU"}, {"real_time", 0}};
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
    if (row["name"] == "a") row = {{"name", "a"}, {"run_type", "iteration"}, {"skipped", true}, {"skip_reason", "no GPU"}};
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
  const auto base = results({{"a", kTight}}), other = results({{"a", kTight}}, fingerprint("Other CPU"));
  try {
    compare_results(base, other, defaults(), "base.json", "new.json");
    FAIL() << "no refusal";
  } catch (const ResultsError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cpu_model (\"Test CPU\" vs \"Other CPU\")"), std::string::npos) << message;
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
  EXPECT_NE(everything.machine_note.find("5 of 5 benchmarks moved slower"), std::string::npos) << everything.machine_note;
  EXPECT_NE(everything.machine_note.find("load average 0.3 vs 7.5"), std::string::npos) << everything.machine_note;
  EXPECT_NE(comparison_markdown(everything, "b", "n").find("**Note:**"), std::string::npos);
  EXPECT_TRUE(compare_results(results(base), results(one_slower), defaults(), "b", "n").machine_note.empty());
}

TEST(CompareInput, RowsWithoutAFiniteMetricAreRejectedNamingFileAndBenchmark) {
  auto doc = results({{"a", kTight}});
  doc["benchmarks"][3]["real_time"] = nullptr;  // how a NaN is written
  try {
    benchmark_samples(doc, "real_time", "f.json");
    FAIL();
  } catch (const ResultsError& e) {
    EXPECT_NE(std::string(e.what()).find("f.json: benchmark 'a': 'real_time' is null"), std::string::npos) << e.what();
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
