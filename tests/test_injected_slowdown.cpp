// Measured trust in compare's verdicts. From a real results file (a CPU-only quick run with 10
// repetitions, tests/data/quick_cpu_reps10.json) we synthesize BASE and NEW runs by resampling each
// benchmark's repetitions (realistic within-run noise, real tails), slow down every other benchmark
// by a known 5% or 10%, and count slowdowns caught and SLOWER verdicts on the untouched benchmarks.
// Targets: ≥ 95% of slowdowns caught where CV ≤ 1%, and 0 false SLOWER. The fixture was made on a
// shared 2-core machine where no benchmark is that steady (CV 5-48%), so the "steady" set keeps
// each benchmark's real noise shape but shrinks it about its median to CV = 1%, the hardest case
// the target covers; the "as measured" set reports what the same procedure does on the real noise.
#include <iostream>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/analysis/stats.h"
#include "harness/regression/compare.h"
#include "harness/results/results.h"

namespace offloadbench {

namespace {

struct Measured {
  std::string name;
  std::vector<double> values;
  double cv;
};

std::vector<Measured> fixture_benchmarks() {
  const std::string path = OFFLOADBENCH_TEST_DATA "/quick_cpu_reps10.json";
  std::vector<Measured> out;
  for (auto& s : benchmark_samples(load_for_comparison(path), "real_time", path))
    if (s.values.size() >= 10)
      out.push_back({s.name, s.values, coefficient_of_variation(s.values)});
  return out;
}

// The same noise shape, shrunk about the median where the CV is above `cv` (real steady ones stay).
std::vector<Measured> steadied(std::vector<Measured> benchmarks, double cv) {
  for (auto& b : benchmarks) {
    if (b.cv <= cv) continue;
    const double center = median(b.values);
    double mean = 0;
    for (double v : b.values) mean += v / static_cast<double>(b.values.size());
    // v → center + f·(v − center) scales the stddev by f and moves the mean to center + f·(mean −
    // center); this f makes their ratio exactly `cv`.
    const double f = cv * center / (b.cv * mean - cv * (mean - center));
    for (auto& v : b.values) v = center + (v - center) * f;
    b.cv = coefficient_of_variation(b.values);
  }
  return benchmarks;
}

std::vector<double> resample(const std::vector<double>& values, double factor, std::mt19937& rng) {
  std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
  std::vector<double> out;
  for (std::size_t i = 0; i < values.size(); ++i) out.push_back(values[pick(rng)] * factor);
  return out;
}

struct Tally {
  int steady_touched = 0, steady_caught = 0;  // CV ≤ 1%
  int touched = 0, caught = 0;                // all slowed-down benchmarks
  int untouched = 0, false_slower = 0, false_faster = 0;
};

Tally inject(const std::vector<Measured>& benchmarks, double slowdown, int trials, unsigned seed) {
  std::mt19937 rng(seed);
  Tally t;
  const CompareOptions options;  // the defaults CI uses
  for (int trial = 0; trial < trials; ++trial)
    for (std::size_t i = 0; i < benchmarks.size(); ++i) {
      const auto& b = benchmarks[i];
      const bool touched = (i + static_cast<std::size_t>(trial)) % 2 == 0;
      const auto base = resample(b.values, 1.0, rng);
      const auto candidate = resample(b.values, touched ? 1.0 + slowdown : 1.0, rng);
      const auto verdict = compare_samples(b.name, base, candidate, options).verdict;
      if (touched) {
        ++t.touched;
        t.caught += verdict == Verdict::slower;
        if (b.cv <= 0.01 + 1e-9) {
          ++t.steady_touched;
          t.steady_caught += verdict == Verdict::slower;
        }
      } else {
        ++t.untouched;
        t.false_slower += verdict == Verdict::slower;
        t.false_faster += verdict == Verdict::faster;
      }
    }
  return t;
}

void report(const char* label, double slowdown, const Tally& t) {
  std::cout << fmt::format(
      "{}: injected {:.0f}% slowdown caught {}/{} ({:.1f}%) where CV <= 1%, {}/{} ({:.1f}%) "
      "overall; untouched: {} false SLOWER, {} false FASTER of {}\n",
      label, 100 * slowdown, t.steady_caught, t.steady_touched,
      t.steady_touched ? 100.0 * t.steady_caught / t.steady_touched : 0.0, t.caught, t.touched,
      100.0 * t.caught / t.touched, t.false_slower, t.false_faster, t.untouched);
}

void check(double slowdown, unsigned seed) {
  const auto measured = fixture_benchmarks();
  ASSERT_GE(measured.size(), 4u) << "the fixture has too few measured benchmarks";
  const auto steady = steadied(measured, 0.01);
  const auto t = inject(steady, slowdown, 500, seed);
  report("steady", slowdown, t);
  ASSERT_EQ(t.steady_touched, t.touched);
  EXPECT_GE(static_cast<double>(t.steady_caught) / t.steady_touched, 0.95);
  EXPECT_EQ(t.false_slower, 0);
  report("as measured", slowdown, inject(measured, slowdown, 500, seed + 1));  // for the record
}

}  // namespace

TEST(InjectedSlowdown, FivePercentIsCaughtOnSteadyBenchmarksWithoutFalseAlarms) { check(0.05, 5); }
TEST(InjectedSlowdown, TenPercentIsCaughtOnSteadyBenchmarksWithoutFalseAlarms) { check(0.10, 10); }

}  // namespace offloadbench
