// history: the change-point detector on synthetic series with known steps (and none), and reading a
// directory of results files in time order, naming the git SHA where a step appeared.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/analysis/stats.h"
#include "harness/regression/history.h"
#include "harness/results/results.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace {

// `runs` values around 100 with relative noise `cv`, multiplied by `factor` from run `step_at` on.
std::vector<double> series(int runs, double cv, unsigned seed,
                           std::vector<std::pair<int, double>> steps = {}) {
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

std::vector<std::size_t> steps_in(const std::vector<double>& x,
                                  const ChangePointOptions& o = kDefaults) {
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
  EXPECT_EQ(steps_in(series(30, 0.002, 1, {{15, 1.03}}), two_percent),
            std::vector<std::size_t>{15});
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
  // 0.4% slower every night for 30 nights (12% in all) in 1% noise: no night-to-night step comes
  // near 5%, but the distributions before and after differ; E-divisive finds it, once.
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

namespace reference {

// The change-point search as it was before it was made fast (full n×n prefix matrix, every segment
// searched again each round, every shuffle searched in full), kept verbatim as the reference the
// fast one must agree with exactly: same change points, same levels. The reporting of the cuts it
// finds is the library's own (steps_at_cuts): only the search is under test.
struct BestSplit {
  std::size_t at = 0;
  double q = -1;
};

BestSplit best_split(const std::vector<double>& x, std::size_t m) {
  const std::size_t n = x.size();
  BestSplit best;
  if (m == 0 || n < 2 * m) return best;
  std::vector<std::vector<double>> sums(n + 1, std::vector<double>(n + 1, 0.0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      sums[i + 1][j + 1] = sums[i][j + 1] + sums[i + 1][j] - sums[i][j] + std::fabs(x[i] - x[j]);
  const auto block = [&](std::size_t r0, std::size_t r1, std::size_t c0, std::size_t c1) {
    return sums[r1][c1] - sums[r0][c1] - sums[r1][c0] + sums[r0][c0];
  };
  for (std::size_t tau = m; tau + m <= n; ++tau) {
    const double nx = static_cast<double>(tau);
    const double within_x = block(0, tau, 0, tau) / (nx * (nx - 1));
    for (std::size_t kappa = tau + m; kappa <= n; ++kappa) {
      const double ny = static_cast<double>(kappa - tau);
      const double cross = block(0, tau, tau, kappa) / (nx * ny);
      const double within_y = block(tau, kappa, tau, kappa) / (ny * (ny - 1));
      const double q = nx * ny / (nx + ny) * (2 * cross - within_x - within_y);
      if (q > best.q) best = {tau, q};
    }
  }
  return best;
}

double permutation_p_value(std::vector<double> segment, double observed_q, std::size_t m,
                           const ChangePointOptions& o, std::mt19937_64& rng) {
  int as_strong = 0;
  for (int i = 0; i < o.permutations; ++i) {
    std::shuffle(segment.begin(), segment.end(), rng);
    as_strong += best_split(segment, m).q >= observed_q - 1e-12 * std::fabs(observed_q);
  }
  return (as_strong + 1.0) / (o.permutations + 1.0);
}

std::vector<Step> detect_change_points(const std::vector<double>& series,
                                       const ChangePointOptions& options) {
  const auto m = static_cast<std::size_t>(std::max(options.min_segment, 1));
  std::vector<double> logs;
  for (double v : series) logs.push_back(std::log(std::max(v, 1e-300)));
  std::mt19937_64 rng(0x0ffb0ad);
  std::vector<std::size_t> cuts = {0, series.size()};
  while (true) {
    BestSplit best;
    std::size_t segment_begin = 0, segment_end = 0;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
      const std::vector<double> segment(logs.begin() + static_cast<std::ptrdiff_t>(cuts[i]),
                                        logs.begin() + static_cast<std::ptrdiff_t>(cuts[i + 1]));
      const auto split = best_split(segment, m);
      if (split.q > best.q) {
        best = split;
        segment_begin = cuts[i];
        segment_end = cuts[i + 1];
      }
    }
    if (best.q <= 0) break;
    const std::vector<double> segment(logs.begin() + static_cast<std::ptrdiff_t>(segment_begin),
                                      logs.begin() + static_cast<std::ptrdiff_t>(segment_end));
    if (permutation_p_value(segment, best.q, m, options, rng) >= options.significance) break;
    cuts.insert(std::upper_bound(cuts.begin(), cuts.end(), segment_begin + best.at),
                segment_begin + best.at);
  }
  return steps_at_cuts(series, std::move(cuts), options);
}

}  // namespace reference

// Series of every shape the search meets: flat noise, steps up and down, bumps, creeps, outliers,
// exact ties (no noise, or values on a coarse grid), very short and NaN/zero-free.
std::vector<double> random_series(std::mt19937& rng) {
  std::uniform_int_distribution<int> length(1, 70), shape(0, 6);
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> normal(0, 1);
  const int n = length(rng), kind = shape(rng);
  const double cv =
      std::vector<double>{0, 0.001, 0.01, 0.05, 0.2}[static_cast<std::size_t>(rng() % 5)];
  std::vector<double> x;
  double level = 100;
  for (int i = 0; i < n; ++i) {
    if (kind == 1 && unit(rng) < 0.08) level *= 0.8 + 0.4 * unit(rng);  // random steps
    if (kind == 2) level *= 1.003;                                      // creep
    if (kind == 3 && i == n / 3) level *= 1.2;                          // bump
    if (kind == 3 && i == 2 * n / 3) level /= 1.2;
    double v = level * (1 + cv * normal(rng));
    if (kind == 4) v = std::round(v / 5) * 5;            // coarse grid: ties
    if (kind == 5 && unit(rng) < 0.1) v *= 3;            // outliers
    if (kind == 6) v = (i / 4 + i / 7) % 2 ? 110 : 100;  // exact repeats: many equal Q
    x.push_back(v);
  }
  return x;
}

}  // namespace

TEST(ChangePoints, FastSearchFindsExactlyWhatTheReferenceSearchFinds) {
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int> min_runs(1, 6);
  int with_steps = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const auto x = random_series(rng);
    ChangePointOptions o;
    o.min_segment = min_runs(rng);
    if (trial % 3 == 0) o.min_magnitude = 0.01;
    if (trial % 5 == 0) o.significance = 0.2;  // more cuts: more rounds of the bisection
    const auto expected = reference::detect_change_points(x, o);
    const auto actual = detect_change_points(x, o);
    with_steps += !expected.empty();
    ASSERT_EQ(actual.size(), expected.size()) << "trial " << trial;
    for (std::size_t i = 0; i < actual.size(); ++i) {
      EXPECT_EQ(actual[i].index, expected[i].index) << "trial " << trial;
      EXPECT_EQ(actual[i].before, expected[i].before) << "trial " << trial;
      EXPECT_EQ(actual[i].after, expected[i].after) << "trial " << trial;
    }
  }
  EXPECT_GE(with_steps,
            100);  // the comparison covered many series with steps, not only empty answers
}

TEST(ChangePoints, EachSegmentIsSearchedOnceAndFailedTestsStopEarly) {
  // A flat series: the first permutation test fails; it stops once 9 shuffles (p = 10/200 = 0.05)
  // were as strong, instead of searching all 199 shuffles.
  ChangePointWork flat;
  EXPECT_TRUE(detect_change_points(series(200, 0.01, 3), kDefaults, &flat).empty());
  EXPECT_LT(flat.shuffles_searched, 100u);
  EXPECT_EQ(flat.searches, 1 + flat.shuffles_searched);
  // Three steps: each round searches only the two new segments (the old search re-searched every
  // segment every round: 1 + 2 + 3 + 4 segment searches), and each passing test searches at most
  // its 199 shuffles.
  ChangePointWork stepped;
  const auto x = series(120, 0.005, 4, {{30, 1.2}, {60, 1.2}, {90, 1.2}});
  ASSERT_EQ(steps_in(x), (std::vector<std::size_t>{30, 60, 90}));
  detect_change_points(x, kDefaults, &stepped);
  const std::size_t segment_searches = stepped.searches - stepped.shuffles_searched;
  EXPECT_EQ(segment_searches, 1u + 2 * 3);
  // One search over n values evaluates each (τ, κ) with m values on each side once:
  // (n−2m+1)(n−2m+2)/2 pairs from rows of the prefix sum kept two at a time (no n×n matrix per
  // shuffle).
  ChangePointWork one;
  ChangePointOptions no_test = kDefaults;
  no_test.permutations = 0;  // p = 1: the first test fails without shuffling
  detect_change_points(series(100, 0.01, 0, {{50, 1.5}}), no_test, &one);
  EXPECT_EQ(one.searches, 1u);
  EXPECT_EQ(one.shuffles_searched, 0u);
  EXPECT_EQ(one.splits, 95u * 96u / 2);
}

namespace {

nlohmann::json nightly(int run, double real_time, const std::string& cpu = "Test CPU",
                       bool incomplete = false) {
  nlohmann::json rows = nlohmann::json::array();
  for (int i = 0; i < 5; ++i) {
    rows.push_back({{"name", "steady"},
                    {"run_type", "iteration"},
                    {"real_time", 50.0 + 0.01 * i},
                    {"time_unit", "ns"}});
    rows.push_back({{"name", "stepped"},
                    {"run_type", "iteration"},
                    {"real_time", real_time + 0.01 * i},
                    {"time_unit", "ns"}});
  }
  rows.push_back(
      {{"name", "gpu"}, {"run_type", "iteration"}, {"skipped", true}, {"skip_reason", "no GPU"}});
  return {
      {"context",
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
  } catch (const ResultsError& e) { return e.what(); }
  return "";
}

}  // namespace

TEST(History, OrdersRunsByStartTimeAndNamesTheShaOfTheStep) {
  TempDir dir;
  for (int run = 0; run < 9; ++run)  // file names sort against time order on purpose
    write_json_atomically(dir.file(fmt::format("{}.json", 9 - run)),
                          nightly(run, run < 5 ? 100.0 : 112.0));
  write_json_atomically(dir.file("unfinished.json"), nightly(9, 500.0, "Test CPU", true));
  std::ofstream(dir.file("notes.txt")) << "not a results file";
  const auto h = load_history(dir.path.string(), "real_time", false, kDefaults);
  ASSERT_EQ(h.runs.size(), 9u);
  EXPECT_EQ(h.runs.front().git_sha, "sha0");
  EXPECT_EQ(h.runs.back().git_sha, "sha8");
  ASSERT_EQ(h.ignored.size(), 1u);
  ASSERT_EQ(h.benchmarks.size(), 2u);  // "gpu" was never measured
  for (const auto& b : h.benchmarks) {
    if (b.name == "steady") { EXPECT_TRUE(b.change_points.empty()); }
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

TEST(History, EveryBenchmarkGetsTheAnswerOfItsOwnSeries) {
  // The benchmarks are searched on several threads: each must get the answer of its own series.
  TempDir dir;
  const int runs = 14, benchmarks = 24;
  std::vector<std::vector<double>> level(benchmarks);
  for (int b = 0; b < benchmarks; ++b)
    level[b] = series(runs, 0.003, static_cast<unsigned>(b), {{3 + b % 9, 1.15}});
  for (int run = 0; run < runs; ++run) {
    auto doc = nightly(run, 100.0);
    for (int b = 0; b < benchmarks; ++b)
      doc["benchmarks"].push_back({{"name", fmt::format("b{:02}", b)},
                                   {"run_type", "iteration"},
                                   {"real_time", level[b][run]},
                                   {"time_unit", "ns"}});
    write_json_atomically(dir.file(fmt::format("{:02}.json", run)), doc);
  }
  const auto h = load_history(dir.path.string(), "real_time", false, kDefaults);
  int with_steps = 0;
  for (const auto& b : h.benchmarks) {
    std::vector<double> medians;
    for (const auto& p : b.points) medians.push_back(p.median);
    std::vector<std::size_t> expected, actual;
    for (const auto& step : detect_change_points(medians, kDefaults))
      expected.push_back(step.index);
    for (const auto& cp : b.change_points) actual.push_back(cp.point);
    EXPECT_EQ(actual, expected) << b.name;
    with_steps += !expected.empty();
  }
  EXPECT_GE(with_steps, 20);  // steps at different runs: a mix-up between benchmarks would show
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

TEST(History, ALinkLoopOrDanglingLinkIsLeftOutByNameAndTheRestIsRead) {
  TempDir dir;
  for (int run = 0; run < 3; ++run)
    write_json_atomically(dir.file(fmt::format("{}.json", run)), nightly(run, 100.0));
  std::filesystem::create_symlink("loop.json", dir.file("loop.json"));  // a link to itself
  std::filesystem::create_symlink("nowhere.json", dir.file("dangling.json"));
  std::filesystem::create_symlink("loop.txt", dir.file("loop.txt"));  // not *.json: not looked at
  std::vector<std::string> problems;
  EXPECT_EQ(history_files(dir.path.string(), &problems).size(), 3u);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0], dir.file("dangling.json") + ": cannot read: No such file or directory");
  EXPECT_EQ(problems[1],
            dir.file("loop.json") + ": cannot read: Too many levels of symbolic links");
  const auto h = load_history(dir.path.string(), "real_time", false, kDefaults);
  EXPECT_EQ(h.runs.size(), 3u);
  EXPECT_EQ(h.ignored, problems);
  // With nothing else there, the error says what was left out rather than only "no results files".
  for (int run = 0; run < 3; ++run) std::filesystem::remove(dir.file(fmt::format("{}.json", run)));
  const auto error = history_error(dir.path.string());
  EXPECT_NE(error.find("no finished results files (*.json) in this directory (left out: " +
                       problems[0] + "; and 1 more)"),
            std::string::npos)
      << error;
}

TEST(History, UnreadableFileOrDirectoryIsNamedWithItsPermissionError) {
  if (geteuid() == 0)
    GTEST_SKIP() << "root reads files without permission (tests/python/test_cli.py runs this "
                    "case as an unprivileged user)";
  TempDir dir;
  const auto nightly_dir = dir.path / "nightly";
  std::filesystem::create_directories(nightly_dir);
  for (int run = 0; run < 3; ++run)
    write_json_atomically((nightly_dir / fmt::format("{}.json", run)).string(),
                          nightly(run, 100.0));
  const auto secret = (nightly_dir / "secret.json").string();
  write_json_atomically(secret, nightly(3, 100.0));
  ASSERT_EQ(chmod(secret.c_str(), 0), 0);
  const auto h = load_history(nightly_dir.string(), "real_time", false, kDefaults);
  EXPECT_EQ(h.runs.size(), 3u);
  EXPECT_EQ(h.ignored, std::vector<std::string>{secret + ": cannot read: Permission denied"});
  ASSERT_EQ(chmod(nightly_dir.c_str(), 0), 0);
  const auto error = history_error(nightly_dir.string());
  chmod(nightly_dir.c_str(), 0755);  // so that TempDir can remove it
  EXPECT_EQ(error, nightly_dir.string() + ": cannot list this directory: Permission denied");
}

}  // namespace offloadbench

namespace offloadbench {

// The user's case of issue: six nightly runs with a clear step after the third gave no change
// point, and a seventh found it. history must say the six could not have shown it, not a bare 0.
TEST(MoreRunsNeeded, SixRunsWithAStepAfterTheThirdNeedOneMoreAndASeventhFindsIt) {
  const std::vector<double> six = {231, 229, 232, 75, 76, 74};
  EXPECT_TRUE(detect_change_points(six, kDefaults).empty());
  const int more = more_runs_needed(six, kDefaults);
  EXPECT_GE(more, 1);
  auto longer = six;
  while (static_cast<int>(longer.size()) < 6 + more) longer.push_back(75);
  EXPECT_FALSE(
      detect_change_points(longer, kDefaults).empty());  // the figure does not overstate the need
}

TEST(MoreRunsNeeded, NoneForALongSteadySeriesMoreForAShortOrNoisyOne) {
  EXPECT_EQ(more_runs_needed(series(30, 0.005, 1), kDefaults), 0);
  EXPECT_GT(more_runs_needed(series(4, 0.005, 1), kDefaults), 0);
  // At 20% run-to-run noise a 5% step needs more runs than at 0.5%, if it can be seen at all.
  const int noisy = more_runs_needed(series(10, 0.20, 2), kDefaults);
  EXPECT_TRUE(noisy < 0 || noisy > more_runs_needed(series(10, 0.005, 2), kDefaults)) << noisy;
  // A smaller minimum magnitude needs more runs at the same noise.
  ChangePointOptions fine = kDefaults;
  fine.min_magnitude = 0.01;
  const auto x = series(8, 0.01, 3);
  const int at_one = more_runs_needed(x, fine);
  EXPECT_TRUE(at_one < 0 || at_one > more_runs_needed(x, kDefaults)) << at_one;
}

TEST(MoreRunsNeeded, HistorySaysItPerBenchmarkAndInTheHeadlineNeverABareZero) {
  TempDir dir;
  for (int run = 0; run < 6; ++run)
    write_json_atomically(dir.file(fmt::format("{}.json", run)),
                          nightly(run, run < 3 ? 231.0 : 75.0));
  const auto h = load_history(dir.path.string(), "real_time", false, kDefaults);
  for (const auto& b : h.benchmarks) EXPECT_GT(b.more_runs_needed, 0) << b.name;
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  print_history(out, h, false);
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  EXPECT_EQ(printed.find("history: 0 change point"), std::string::npos) << printed;
  EXPECT_NE(printed.find("no change point could be found yet"), std::string::npos) << printed;
  EXPECT_NE(printed.find("step needs"), std::string::npos) << printed;
  EXPECT_TRUE(to_json(h)["benchmarks"][0]["more_runs_needed"].is_number());
}

}  // namespace offloadbench
