// What a results file says, computed from the file alone: GPU-vs-CPU speedups and crossover sizes,
// the transfer model (latency + bytes/bandwidth), when pinning pays, how much overlap the streams
// achieved, and which throughputs are above their physical ceiling. Pure functions, no I/O: the
// math is unit-tested on synthetic data, and analyze() works on any subset of the families.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/analysis/stats.h"  // median

namespace offloadbench {

// ---- the math ----

// One size of a GPU-vs-CPU pair: speedup = CPU time / GPU time (median of the repetitions), and
// the range the repetitions allow (slowest GPU vs fastest CPU .. fastest GPU vs slowest CPU).
struct SpeedupPoint {
  double size = 0;
  double speedup = 0;
  double speedup_low = 0;
  double speedup_high = 0;
};

enum class CrossoverKind {
  crossover,            // the GPU loses below `size` and wins from it on
  gpu_wins_all,         // the GPU wins at every measured size: no crossover in range, GPU side
  cpu_wins_at_largest,  // the GPU does not win at the largest measured size: no crossover in range,
                        // CPU side
  no_data,              // nothing measured
};
const char* to_string(CrossoverKind kind);

// A crossover is located when its range is within ±10% of its size on a log scale (high/low
// ≤ 1.1²), or when no size lies between low and high (adjacent batches or matrix orders).
constexpr double kLocatedCrossoverRatio = 1.21;

struct Crossover {
  CrossoverKind kind = CrossoverKind::no_data;
  double size = 0;  // interpolated on log size; only for `crossover`
  // The measured sizes either side of it: the last size where the median GPU loses and the next
  // one.
  double bracket_low = 0, bracket_high = 0;
  // The range where it may lie: from the last measured size where even the fastest GPU repetition
  // loses (none: the GPU may win everywhere) to the first from which even the slowest wins for good
  // (none: it may not win in range). Never narrower than the bracket: between two measured sizes
  // nothing is known.
  std::optional<double> low;
  std::optional<double> high;
  bool located = false;  // low–high within kLocatedCrossoverRatio (or adjacent integers)
  bool gpu_wins_somewhere_below = false;  // a win below the crossover that did not last
};

// The size from which the GPU wins for good: the first measured size after the last losing one,
// interpolated where log(speedup) crosses 0 on log(size). A speedup of exactly 1 counts as a win.
// Points must be sorted by size. `low`/`high` come from the same search over speedup_high/low.
Crossover find_crossover(const std::vector<SpeedupPoint>& points);

// Whether a crossover's range [low, high] pins it down (kLocatedCrossoverRatio, or no integer
// between).
bool crossover_located(double low, double high);

// A crossover as the analysis block writes it: kind, gpu_wins_somewhere_below, located, and size,
// low, high, bracket_low and bracket_high (null where they do not apply).
nlohmann::json crossover_json(const Crossover& c);

// time = alpha + bytes / beta, fitted by least squares on relative error (weights 1/time²) so that
// small copies count as much as large ones. r_squared is that weighted fit's coefficient of
// determination; half_bandwidth_bytes = alpha·beta is where bytes/time reaches beta/2.
struct TransferFit {
  bool ok = false;
  double alpha_seconds = 0;
  double beta_bytes_per_second = 0;
  double r_squared = 0;
  std::optional<double> half_bandwidth_bytes;
  int points = 0;
};
TransferFit fit_transfer_model(const std::vector<double>& bytes,
                               const std::vector<double>& seconds);

// Copies after which pinning once (pin_seconds) plus pinned copies beats pageable copies:
// the smallest n with pin + n·pinned < n·pageable. None when pinned copies are not faster.
std::optional<long long> pinning_break_even(double pin_seconds, double pageable_copy_seconds,
                                            double pinned_copy_seconds);

// Seconds per iteration of a row: real_time in its time_unit.
double row_seconds(const nlohmann::json& row);

// ---- over a results document ----

// The `analysis` block for a results document (see docs/results-schema.md, "analysis"):
// speedups, crossovers, transfer_model, pinning_break_even, overlap, ceilings, headlines.
// Families or fields that are absent give empty sections, never an exception.
// `families` adds each family's own sections and headline lines (family_analysis.h); the generic
// part needs none of them.
struct FamilyAnalysis;
nlohmann::json analyze(const nlohmann::json& results, const std::vector<FamilyAnalysis>& families);

// "256MiB" for bytes, "256 Mi" for element counts, plain integers for n and batch.
std::string format_sweep_size(const std::string& sweep, double size);

}  // namespace offloadbench
