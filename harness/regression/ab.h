// `offloadbench ab BASE NEW`: the verdicts of an interleaved A/B run. Each round runs BASE and NEW
// as fresh processes back to back (order by coin flip); a process's median per benchmark is one
// sample, and a round gives one paired difference d = log(NEW / BASE), so drift between rounds
// cancels out. Per benchmark: the Hodges–Lehmann shift with its exact signed-rank interval,
// one-sided tests of "slower by more than δ" and "faster by more than δ", Holm-corrected across the
// benchmarks. The tests set aside rounds whose d lies more than kOutlierSigmas robust standard
// deviations from the median d: a neighbour's burst that hit one process of a round and not the
// other (lab/records/regression.md).
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/regression/compare.h"

namespace offloadbench {

// Rounds further than this many robust standard deviations (1.4826 · MAD) from the median log-ratio
// are left out of the SLOWER/FASTER tests (never out of the interval, so they cannot make a row
// SAME).
constexpr double kOutlierSigmas = 4.0;

struct AbOptions {
  double delta_cpu = 0.02;   // smallest slowdown that counts on CPU rows (a fraction of the time)
  double delta_gpu = 0.01;   // on GPU rows, whose timings are steadier
  double alpha = 0.05;       // family-wise error rate over all benchmarks (Holm)
  double confidence = 0.95;  // of the reported interval, which also decides SAME
};

struct AbPair {
  double base = 0, candidate = 0;  // per-process medians, seconds
};

struct AbSeries {
  std::string name;
  bool gpu = false;                   // a GPU row (its `device` is a GPU index): delta_gpu applies
  std::vector<AbPair> pairs;          // one per round in which both sides measured it
  std::size_t dropped_throttled = 0;  // GPU repetitions left out because the SM clock was throttled
};

struct AbRow {
  std::string name;
  bool gpu = false;
  double delta = 0;
  std::size_t rounds = 0;
  double base_median = 0, new_median = 0;  // medians of the per-process medians
  double change = 0, low = 0, high = 0;  // Hodges–Lehmann shift of NEW/BASE − 1 and its interval
  double confidence = 0;                 // achieved coverage of [low, high]; 0 when unbounded
  bool bounded = false;
  std::size_t rounds_set_aside = 0;  // outlying rounds the tests left out (kOutlierSigmas)
  double p_slower = 1,
         p_faster = 1;  // one-sided signed-rank tests against ±δ, without those rounds
  double p_holm = 1;    // 2·min(p_slower, p_faster), Holm-adjusted over the benchmarks
  std::size_t dropped_throttled = 0;
  Verdict verdict = Verdict::inconclusive;
  std::string reason;
};

struct AbOutcome {
  AbOptions options;
  std::vector<AbRow> rows;  // input order
  int slower = 0, faster = 0, same = 0, inconclusive = 0;
};

// The verdict of every series: SLOWER/FASTER when the one-sided test against δ rejects after Holm
// at alpha; SAME when the interval lies within ±δ; INCONCLUSIVE otherwise (including too few rounds
// for a bounded interval: 6 at 95%).
AbOutcome ab_verdicts(const std::vector<AbSeries>& series, const AbOptions& options);

// "+4.1% [+2.8%, +5.4%]"
std::string format_interval(const AbRow& row);

void print_ab(std::FILE* out, const AbOutcome& outcome);
std::string ab_markdown(const AbOutcome& outcome, const std::vector<std::string>& notes);

}  // namespace offloadbench
