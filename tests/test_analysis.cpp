// The analysis math on synthetic data with known answers: crossover interpolation and its range,
// the latency/bandwidth fit, the pinning break-even, and analyze() over small hand-made files
// (pairing, missing families, skipped rows, suspects).
#include <cmath>
#include <map>

#include <gtest/gtest.h>

#include "benchmarks/family_analyses.h"
#include "harness/analysis/analysis.h"

namespace offloadbench {
namespace {

std::vector<SpeedupPoint> curve(const std::vector<double>& sizes,
                                const std::vector<double>& speedups, double spread = 1.0) {
  std::vector<SpeedupPoint> points;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    points.push_back({sizes[i], speedups[i], speedups[i] / spread, speedups[i] * spread});
  return points;
}

TEST(Crossover, InterpolatesOnLogSize) {
  // speedup = size / 1000 on a log-log line: crosses 1 at exactly 1000.
  const auto c = find_crossover(curve({10, 100, 10000, 100000}, {0.01, 0.1, 10, 100}));
  ASSERT_EQ(c.kind, CrossoverKind::crossover);
  EXPECT_NEAR(c.size, 1000, 1e-6);
  EXPECT_FALSE(c.gpu_wins_somewhere_below);
}

TEST(Crossover, RangeCoversTheWholeBracketEvenWithoutSpread) {
  // Measured at 10, 100, 10000, 100000 with no spread at all: the interpolated 1000 is a guess, the
  // crossover lies somewhere between 100 and 10000, and the range must say so.
  const auto c = find_crossover(curve({10, 100, 10000, 100000}, {0.01, 0.1, 10, 100}));
  ASSERT_TRUE(c.low && c.high);
  EXPECT_EQ(*c.low, 100);
  EXPECT_EQ(*c.high, 10000);
  EXPECT_EQ(c.bracket_low, 100);
  EXPECT_EQ(c.bracket_high, 10000);
  EXPECT_FALSE(c.located);
}

TEST(Crossover, RangeWidensToTheSpreadsBrackets) {
  // With a ×20 spread the optimistic curve already wins at 100 (last loss at 10) and the
  // pessimistic one loses at 10000 (first lasting win at 100000): the range is 10–100000, wider
  // than the bracket.
  const auto c = find_crossover(curve({10, 100, 10000, 100000}, {0.01, 0.1, 10, 100}, 20.0));
  ASSERT_EQ(c.kind, CrossoverKind::crossover);
  ASSERT_TRUE(c.low && c.high);
  EXPECT_EQ(*c.low, 10);
  EXPECT_EQ(*c.high, 100000);
  EXPECT_NEAR(c.size, 1000, 1e-6);
}

TEST(Crossover, LocatedOnlyWhenTheRangeIsWithinTenPercent) {
  // Sizes 1000 and 1100 either side (ratio 1.1): located; 1000 and 1300: not.
  EXPECT_TRUE(find_crossover(curve({100, 1000, 1100, 10000}, {0.5, 0.9, 1.1, 5})).located);
  EXPECT_FALSE(find_crossover(curve({100, 1000, 1300, 10000}, {0.5, 0.9, 1.1, 5})).located);
  // Adjacent integers (batch 1 and 2): nothing to measure in between.
  EXPECT_TRUE(crossover_located(1, 2));
  EXPECT_FALSE(crossover_located(1, 3));
  EXPECT_TRUE(crossover_located(1000, 1210));
}

TEST(Crossover, RangeNeverUnderstatesTheBracket) {
  // Random curves: whatever the spread, low <= bracket_low < size < bracket_high <= high.
  unsigned seed = 12345;
  auto next = [&] {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) % 1000 / 1000.0;
  };
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<SpeedupPoint> points;
    double size = 1;
    for (int i = 0; i < 6; ++i) {
      size *= 1.5 + 10 * next();
      const double s = 0.1 + 3 * next(), lo = s * (0.5 + 0.5 * next()), hi = s * (1 + next());
      points.push_back({size, s, lo, hi});
    }
    const auto c = find_crossover(points);
    if (c.kind != CrossoverKind::crossover) continue;
    EXPECT_LE(c.bracket_low, c.size);
    EXPECT_GE(c.bracket_high, c.size);
    if (c.low) { EXPECT_LE(*c.low, c.bracket_low); }
    if (c.high) { EXPECT_GE(*c.high, c.bracket_high); }
  }
}

TEST(Crossover, NoCrossoverCpuSide) {
  const auto c = find_crossover(curve({1, 2, 4}, {0.1, 0.2, 0.5}));
  EXPECT_EQ(c.kind, CrossoverKind::cpu_wins_at_largest);
  EXPECT_FALSE(c.low);
  EXPECT_FALSE(c.high);
}

TEST(Crossover, NoCrossoverGpuSide) {
  const auto c = find_crossover(curve({1, 2, 4}, {1.5, 3, 6}));
  EXPECT_EQ(c.kind, CrossoverKind::gpu_wins_all);
}

TEST(Crossover, ExactlyEvenAtTheFirstSizeCountsAsAWinEverywhere) {
  const auto c = find_crossover(curve({1, 2, 4}, {1.0, 2, 4}));
  EXPECT_EQ(c.kind, CrossoverKind::gpu_wins_all);
}

TEST(Crossover, BetweenTheFirstTwoSizes) {
  // log speedup goes from log(0.5) to log(2): the zero is half-way, at sqrt(1·4) = 2 on log size.
  const auto c = find_crossover(curve({1, 4, 16}, {0.5, 2, 8}));
  ASSERT_EQ(c.kind, CrossoverKind::crossover);
  EXPECT_NEAR(c.size, 2, 1e-9);
}

TEST(Crossover, AtTheLastSize) {
  const auto c = find_crossover(curve({1, 2, 4}, {0.25, 0.5, 1.0}));
  ASSERT_EQ(c.kind, CrossoverKind::crossover);
  EXPECT_NEAR(c.size, 4, 1e-9);
}

TEST(Crossover, ALossAtTheEndMeansNoLastingWin) {
  const auto c = find_crossover(curve({1, 2, 4, 8}, {0.5, 2, 3, 0.9}));
  EXPECT_EQ(c.kind, CrossoverKind::cpu_wins_at_largest);
  const auto d = find_crossover(curve({1, 2, 4, 8}, {2, 0.5, 3, 4}));
  ASSERT_EQ(d.kind, CrossoverKind::crossover);
  EXPECT_TRUE(d.gpu_wins_somewhere_below);
  EXPECT_GT(d.size, 2);
  EXPECT_LT(d.size, 4);
}

TEST(Crossover, EmptyIsNoData) { EXPECT_EQ(find_crossover({}).kind, CrossoverKind::no_data); }

TEST(TransferFit, RecoversLatencyAndBandwidth) {
  const double alpha = 10e-6, beta = 25e9;
  std::vector<double> bytes, seconds;
  for (double b = 4096; b <= 256.0 * 1024 * 1024; b *= 4) {
    bytes.push_back(b);
    seconds.push_back(alpha + b / beta);
  }
  const auto fit = fit_transfer_model(bytes, seconds);
  ASSERT_TRUE(fit.ok);
  EXPECT_NEAR(fit.alpha_seconds, alpha, 1e-12);
  EXPECT_NEAR(fit.beta_bytes_per_second / beta, 1.0, 1e-9);
  EXPECT_NEAR(fit.r_squared, 1.0, 1e-12);
  ASSERT_TRUE(fit.half_bandwidth_bytes);
  EXPECT_NEAR(*fit.half_bandwidth_bytes, alpha * beta, 1e-3);  // 250 kB
}

TEST(TransferFit, NoisyDataGivesAnImperfectButGoodFit) {
  std::vector<double> bytes, seconds;
  int i = 0;
  for (double b = 4096; b <= 1e9; b *= 2, ++i) {
    bytes.push_back(b);
    seconds.push_back((5e-6 + b / 12e9) * (i % 2 ? 1.05 : 0.95));
  }
  const auto fit = fit_transfer_model(bytes, seconds);
  ASSERT_TRUE(fit.ok);
  EXPECT_LT(fit.r_squared, 1.0);
  EXPECT_GT(fit.r_squared, 0.9);
  EXPECT_NEAR(fit.beta_bytes_per_second / 12e9, 1.0, 0.1);
}

TEST(TransferFit, RefusesWhatCannotBeFitted) {
  EXPECT_FALSE(fit_transfer_model({1024}, {1e-6}).ok);              // one point
  EXPECT_FALSE(fit_transfer_model({1024, 1024}, {1e-6, 2e-6}).ok);  // one distinct size
  EXPECT_FALSE(fit_transfer_model({1024, 4096}, {2e-6, 1e-6}).ok);  // faster when larger
  const auto no_latency = fit_transfer_model({1e6, 2e6, 4e6}, {0.5e-4, 1e-4, 2e-4});
  ASSERT_TRUE(no_latency.ok);
  EXPECT_FALSE(no_latency.half_bandwidth_bytes);  // alpha 0: full bandwidth from the first byte
}

TEST(PinningBreakEven, SmallestCountThatPays) {
  // Pinning costs 10 ms; each pinned copy saves 3 ms: 3 copies save 9 ms (not enough), 4 save 12.
  EXPECT_EQ(pinning_break_even(10e-3, 5e-3, 2e-3), 4);
  // A saving of exactly the cost does not pay yet: 5 copies save 10 ms, so 6.
  EXPECT_EQ(pinning_break_even(10e-3, 4e-3, 2e-3), 6);
  EXPECT_EQ(pinning_break_even(0, 4e-3, 2e-3), 1);
  EXPECT_FALSE(pinning_break_even(10e-3, 2e-3, 2e-3));  // pinned not faster
  EXPECT_FALSE(pinning_break_even(10e-3, 1e-3, 2e-3));
}

// ---- analyze() on hand-made files ----

nlohmann::json row(const std::string& name, double seconds, nlohmann::json fields,
                   int repetition = 0) {
  nlohmann::json r = {{"name", name},
                      {"run_type", "iteration"},
                      {"repetition_index", repetition},
                      {"real_time", seconds * 1e3},
                      {"time_unit", "ms"},
                      {"iterations", 10},
                      {"skipped", false},
                      {"validated", nullptr}};
  r.update(fields);
  return r;
}

nlohmann::json document(const std::vector<nlohmann::json>& rows) {
  nlohmann::json doc = {{"context", {{"offloadbench", {{"schema_version", 1}}}}},
                        {"benchmarks", rows}};
  doc["context"]["cuda"] = {{"gpus",
                             {{{"index", 0},
                               {"dram_bytes_per_second", 3e12},
                               {"pcie_link", {{"theoretical_bytes_per_second", 31.5e9}}}}}}};
  return doc;
}

nlohmann::json pair_fields(const std::string& view, double n) {
  return {{"family", "compute"},
          {"compare_group", "compute/sgemm/fp32"},
          {"view", view},
          {"series", ""},
          {"sweep", "n"},
          {"n", n},
          {"device", view.rfind("gpu", 0) == 0 ? nlohmann::json(0) : nlohmann::json("cpu")}};
}

// Many small tensors: packing costs a fixed 40 µs and 1 µs a tensor; N separate copies 10 µs each,
// so packing wins from N = 40/9 ≈ 4.4 (between the measured 4 and 8); from pinned memory at 30 µs a
// copy it wins at every N measured; against a method that is always faster it never does.
TEST(Analyze, SmallTensorsPackingWinsFromTheCrossoverCount) {
  std::vector<nlohmann::json> rows;
  auto add = [&](const std::string& method, double n, double seconds) {
    for (int rep = 0; rep < 3; ++rep)
      rows.push_back(row("transfer/small_tensors/" + method + "/n:" + std::to_string(n),
                         seconds * (1 + 0.001 * rep),
                         {{"family", "transfer"},
                          {"op", "small_tensors"},
                          {"method", method},
                          {"tensors", n},
                          {"device", 0}},
                         rep));
  };
  for (double n : {1.0, 2.0, 4.0, 8.0, 16.0}) {
    add("packed_pinned", n, 40e-6 + 1e-6 * n);
    add("separate_pageable", n, 10e-6 * n);
    add("separate_pinned", n, 50e-6 * n);
    add("batch_api", n, 1e-6 * n);
  }
  const auto a = analyze(document(rows), family_analyses());
  ASSERT_EQ(a["small_tensors_packing"].size(), 3u);
  std::map<std::string, nlohmann::json> by_method;
  for (const auto& c : a["small_tensors_packing"]) by_method[c["versus"].get<std::string>()] = c;
  EXPECT_EQ(by_method["separate_pageable"]["kind"], "crossover");
  EXPECT_GT(by_method["separate_pageable"]["size"].get<double>(), 4.0);
  EXPECT_LT(by_method["separate_pageable"]["size"].get<double>(), 8.0);
  EXPECT_EQ(by_method["separate_pinned"]["kind"], "gpu_wins_all");
  EXPECT_EQ(by_method["batch_api"]["kind"], "cpu_wins_at_largest");
  EXPECT_NEAR(by_method["batch_api"]["speedup_at_largest"].get<double>(), 16e-6 / 56e-6, 1e-3);
}

TEST(Analyze, PairsGpuAndCpuRowsAndFindsTheCrossover) {
  std::vector<nlohmann::json> rows;
  // CPU time 1e-9·n³, GPU time 1e-3 + 1e-12·n³: equal near n ≈ 100.
  for (double n : {32.0, 64.0, 128.0, 256.0, 512.0})
    for (int rep = 0; rep < 3; ++rep) {
      const double jitter = 1.0 + 0.01 * (rep - 1);
      rows.push_back(row("cpu/" + std::to_string(n), 1e-9 * n * n * n * jitter,
                         pair_fields("cpu_all", n), rep));
      rows.push_back(row("gpu/" + std::to_string(n), (1e-3 + 1e-12 * n * n * n) * jitter,
                         pair_fields("gpu_pinned", n), rep));
    }
  const auto a = analyze(document(rows), family_analyses());
  ASSERT_EQ(a["speedups"].size(), 5u);
  ASSERT_EQ(a["crossovers"].size(), 1u);
  const auto& c = a["crossovers"][0];
  EXPECT_EQ(c["kind"], "crossover");
  EXPECT_GT(c["size"].get<double>(), 64);
  EXPECT_LT(c["size"].get<double>(), 128);
  EXPECT_LE(c["low"].get<double>(), c["size"].get<double>());
  EXPECT_GE(c["high"].get<double>(), c["size"].get<double>());
  bool mentioned = false;
  for (const auto& line : a["headlines"])
    mentioned |= line.get<std::string>().find("compute/sgemm/fp32") != std::string::npos;
  EXPECT_TRUE(mentioned);
}

// Two CPU series at one size (OpenBLAS and oneDNN, or an anchor): the GPU's speedup is over the
// faster, whichever order the series sort in; a CPU series named like the GPU's still pairs with
// it.
TEST(Analyze, SpeedupIsOverTheFastestCpuSeriesUnlessOneMatchesTheGpuSeries) {
  auto with_series = [](nlohmann::json f, const std::string& series) {
    f["series"] = series;
    return f;
  };
  for (const bool faster_sorts_first : {true, false}) {
    const std::string fast = faster_sorts_first ? "a_fast" : "z_fast",
                      slow = faster_sorts_first ? "z_slow" : "a_slow";
    const auto a =
        analyze(document({row("cpu/fast", 2.0, with_series(pair_fields("cpu_all", 64), fast)),
                          row("cpu/slow", 8.0, with_series(pair_fields("cpu_all", 64), slow)),
                          row("gpu/x", 1.0, with_series(pair_fields("gpu_pinned", 64), "cuBLAS"))}),
                family_analyses());
    ASSERT_EQ(a["speedups"].size(), 1u);
    EXPECT_EQ(a["speedups"][0]["cpu_name"], "cpu/fast");
    EXPECT_EQ(a["speedups"][0]["cpu_library"], fast) << "the CPU row a speedup is over is named";
    EXPECT_EQ(a["crossovers"][0]["cpu_library"], fast);
    EXPECT_DOUBLE_EQ(a["speedups"][0]["speedup"].get<double>(), 2.0);
  }
  const auto a =
      analyze(document({row("cpu/fast", 2.0, with_series(pair_fields("cpu_all", 64), "other")),
                        row("cpu/same", 8.0, with_series(pair_fields("cpu_all", 64), "cuBLAS")),
                        row("gpu/x", 1.0, with_series(pair_fields("gpu_pinned", 64), "cuBLAS"))}),
              family_analyses());
  ASSERT_EQ(a["speedups"].size(), 1u);
  EXPECT_EQ(a["speedups"][0]["cpu_name"], "cpu/same");
}

// The crossover finding is against the strongest CPU view: all threads, unless on this machine they
// lost to one thread (an oversubscribed 2-core VM); the line names the CPU rows it used.
TEST(Analyze, CrossoverLineIsAgainstTheStrongestCpuViewAndNamesIt) {
  auto library = [](nlohmann::json f, const std::string& name) {
    f["library"] = name;
    return f;
  };
  std::vector<nlohmann::json> rows;
  for (double n : {64.0, 128.0, 256.0}) {
    const auto size = std::to_string(n);
    rows.push_back(row("cpu_all/" + size, 4e-3, library(pair_fields("cpu_all", n), "OpenBLAS")));
    rows.push_back(row("cpu_1t/" + size, 2e-3, library(pair_fields("cpu_1t", n), "OpenBLAS")));
    rows.push_back(row("gpu/" + size, 3e-3, pair_fields("gpu_pinned", n)));
  }
  const auto a = analyze(document(rows), family_analyses());
  std::string line;
  for (const auto& h : a["headlines"])
    if (h.get<std::string>().rfind("compute/sgemm/fp32", 0) == 0) line = h.get<std::string>();
  EXPECT_NE(line.find("never wins"), std::string::npos) << line;
  EXPECT_NE(line.find("vs CPU 1 thread (OpenBLAS)"), std::string::npos) << line;
}

TEST(Analyze, SkippedAndInvalidRowsAreLeftOut) {
  std::vector<nlohmann::json> rows = {row("cpu/1", 1.0, pair_fields("cpu_all", 1)),
                                      row("gpu/1", 0.5, pair_fields("gpu_pinned", 1)),
                                      row("cpu/2", 2.0, pair_fields("cpu_all", 2)),
                                      row("gpu/2", 0.1, pair_fields("gpu_pinned", 2))};
  rows[1]["skipped"] = true;
  rows[3]["validated"] = false;
  const auto a = analyze(document(rows), family_analyses());
  EXPECT_TRUE(a["speedups"].empty());
  EXPECT_TRUE(a["crossovers"].empty());
}

TEST(Analyze, EmptyAndCpuOnlyFilesGiveEmptySections) {
  const auto a = analyze(document({row("transfer/host_memcpy/1MiB", 1e-4,
                                       {{"family", "transfer"},
                                        {"op", "host_memcpy"},
                                        {"device", "cpu"},
                                        {"bytes", 1 << 20},
                                        {"bytes_per_second", 2e10}})}),
                         family_analyses());
  for (const char* key :
       {"speedups", "crossovers", "transfer_model", "pinning_break_even", "overlap"})
    EXPECT_TRUE(a[key].empty()) << key;
  EXPECT_EQ(a["ceilings"]["checked"], 0);
  EXPECT_NO_THROW(analyze(document({}), family_analyses()));
}

TEST(Analyze, TransferFitBreakEvenAndSuspects) {
  std::vector<nlohmann::json> rows;
  auto copy = [](const std::string& memory, double bytes, double seconds) {
    return row("transfer/h2d/" + memory + "/" + std::to_string(bytes), seconds,
               {{"family", "transfer"},
                {"op", "device_copy"},
                {"direction", "h2d"},
                {"host_memory", memory},
                {"bytes", bytes},
                {"device", 0},
                {"bytes_per_second", bytes / seconds}});
  };
  for (double b = 4096; b <= (1 << 26); b *= 16) {
    rows.push_back(copy("pinned", b, 8e-6 + b / 25e9));
    rows.push_back(copy("pageable", b, 12e-6 + b / 10e9));
    rows.push_back(row("transfer/pin_cost/" + std::to_string(b), 1e-3 + b / 5e9,
                       {{"family", "transfer"},
                        {"op", "pin_cost"},
                        {"pin_operation", "cudaHostAlloc+cudaFreeHost"},
                        {"bytes", b},
                        {"device", 0}}));
  }
  rows.push_back(copy("registered", 1 << 20, (1 << 20) / 40e9));  // 40 GB/s on a 31.5 GB/s link
  const auto a = analyze(document(rows), family_analyses());
  bool pinned_fit = false;
  for (const auto& f : a["transfer_model"])
    if (f["host_memory"] == "pinned") {
      pinned_fit = true;
      EXPECT_NEAR(f["alpha_seconds"].get<double>(), 8e-6, 1e-9);
      EXPECT_NEAR(f["beta_bytes_per_second"].get<double>() / 25e9, 1.0, 1e-6);
      EXPECT_NEAR(f["half_bandwidth_bytes"].get<double>(), 8e-6 * 25e9, 1.0);
    }
  EXPECT_TRUE(pinned_fit);
  ASSERT_EQ(a["pinning_break_even"].size(), 4u);  // h2d only: 4 sizes
  for (const auto& b : a["pinning_break_even"]) {
    const double saved =
        b["pageable_copy_seconds"].get<double>() - b["pinned_copy_seconds"].get<double>();
    const auto n = b["break_even_copies"].get<long long>();
    EXPECT_GT(n * saved, b["pin_seconds"].get<double>());
    EXPECT_LE((n - 1) * saved, b["pin_seconds"].get<double>());
  }
  ASSERT_EQ(a["ceilings"]["suspects"].size(), 1u);
  EXPECT_EQ(a["ceilings"]["suspects"][0]["ceiling_source"], "pcie_link");
}

TEST(Analyze, OverlapComputesEfficiencyWhenAbsent) {
  const auto a = analyze(document({row("streams/pipelined/k4", 0.01,
                                       {{"family", "streams"},
                                        {"streams", 4},
                                        {"chunks", 16},
                                        {"host_memory", "pinned"},
                                        {"speedup_vs_serial", 2.5},
                                        {"bound_speedup", 3.0}})}),
                         family_analyses());
  ASSERT_EQ(a["overlap"].size(), 1u);
  EXPECT_NEAR(a["overlap"][0]["overlap_efficiency"].get<double>(), 0.75, 1e-12);
  EXPECT_EQ(a["overlap"][0]["streams"], 4);
}

TEST(Analyze, OverlapCarriesTheSharedLinkEfficiency) {
  const auto a = analyze(document({row("streams/pipelined_best/pinned", 0.01,
                                       {{"family", "streams"},
                                        {"speedup_over_serial", 2.3},
                                        {"bound_speedup", 3.0},
                                        {"overlap_efficiency", 0.78},
                                        {"shared_link_efficiency", 0.88}})}),
                         family_analyses());
  ASSERT_EQ(a["overlap"].size(), 1u);
  EXPECT_NEAR(a["overlap"][0]["shared_link_efficiency"].get<double>(), 0.88, 1e-12);
  EXPECT_FALSE(analyze(document({row("streams/serial", 0.01,
                                     {{"family", "streams"}, {"speedup_over_serial", 1.0}})}),
                       family_analyses())["overlap"][0]
                   .contains("shared_link_efficiency"));
}

TEST(Analyze, OverlapReadsOtherNamesForTheBound) {
  const auto a = analyze(document({row("streams/pipelined/k2", 0.01,
                                       {{"family", "streams"},
                                        {"speedup_vs_serial", 1.5},
                                        {"bound_time_s", 0.004},
                                        {"two_engine_bound_speedup", 2.0}})}),
                         family_analyses());
  ASSERT_EQ(a["overlap"].size(), 1u);
  EXPECT_EQ(a["overlap"][0]["bound_speedup"], 2.0);  // not the bound's time
  EXPECT_NEAR(a["overlap"][0]["overlap_efficiency"].get<double>(), 0.5, 1e-12);
}

TEST(FormatSweepSize, ReadableUnits) {
  EXPECT_EQ(format_sweep_size("bytes", 256.0 * 1024 * 1024), "256 MiB");
  EXPECT_EQ(format_sweep_size("elements", 3.5 * 1024 * 1024), "3.5 Mi");
  EXPECT_EQ(format_sweep_size("n", 191.6), "192");
  EXPECT_EQ(format_sweep_size("batch", 128), "128");
}

}  // namespace
}  // namespace offloadbench

namespace offloadbench {
namespace {

TEST(Analyze, RowsMissingFieldsAreIgnoredNotFatal) {
  nlohmann::json doc = {
      {"context", {{"offloadbench", {{"schema_version", 1}}}}},
      {"benchmarks",
       {{{"name", "a"}, {"run_type", "iteration"}, {"real_time", 1.0}, {"op", "device_copy"}},
        {{"name", "b"},
         {"run_type", "iteration"},
         {"real_time", 1.0},
         {"op", "pin_cost"},
         {"device", 0}},
        {{"name", "c"},
         {"run_type", "iteration"},
         {"compare_group", "g"},
         {"view", "gpu_kernel"},
         {"sweep", "n"}},
        {{"name", "d"}, {"run_type", "aggregate"}, {"real_time", 1.0}}}}};
  const auto a = analyze(doc, family_analyses());
  EXPECT_TRUE(a["transfer_model"].empty());
  EXPECT_TRUE(a["pinning_break_even"].empty());
  EXPECT_TRUE(a["speedups"].empty());
  EXPECT_FALSE(a["headlines"].empty());  // says there are no GPU measurements
}

TEST(Analyze, HeadlineSaysWhenTheGpuNeverWins) {
  std::vector<nlohmann::json> rows;
  for (double n : {1024.0, 4096.0})
    for (const char* view : {"cpu_all", "gpu_pinned"})
      rows.push_back({{"name", std::string(view) + std::to_string(n)},
                      {"run_type", "iteration"},
                      {"real_time", std::string(view) == "cpu_all" ? n : 2 * n},
                      {"time_unit", "ns"},
                      {"family", "compute"},
                      {"compare_group", "compute/add/fp32"},
                      {"view", view},
                      {"series", ""},
                      {"sweep", "elements"},
                      {"elements", n}});
  nlohmann::json doc = {{"context", {{"offloadbench", {{"schema_version", 1}}}}},
                        {"benchmarks", rows}};
  const auto a = analyze(doc, family_analyses());
  ASSERT_EQ(a["crossovers"].size(), 1u);
  EXPECT_EQ(a["crossovers"][0]["kind"], "cpu_wins_at_largest");
  bool said = false;
  for (const auto& line : a["headlines"])
    said |= line.get<std::string>() ==
            "compute/add/fp32: GPU incl. pinned transfers never wins up to elements 4 Ki (0.50× at "
            "the largest) vs CPU "
            "all threads";
  EXPECT_TRUE(said) << a["headlines"].dump(1);
}

}  // namespace
}  // namespace offloadbench
