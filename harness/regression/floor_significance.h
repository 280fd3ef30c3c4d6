// compare's test for files whose repetitions each ran in a process of their own (`run --processes
// N`). On a shared machine noise only ever adds time: an interrupt, another tenant, a cold cache, a
// page layout that happens to collide. So a benchmark's fastest process (its floor) is the
// steadiest thing a file holds: the floors of steady benchmarks move 0.1-0.9% between runs where
// their medians move 0.3-6.3% (lab/records/regression.md). A code change moves the floor with the
// rest. This is the argument of Chen & Revels, "Robust benchmarking in noisy environments" (2016),
// on which BenchmarkTools.jl judges by minimum times. Not for repetitions from one process: they
// share its layout and its moment of the machine, so their faster half says nothing of how far the
// floor moves between runs.
#pragma once
#include <cstddef>
#include <vector>

namespace offloadbench {

// A file's floor for one benchmark, from its log slowness values (log time, or −log rate).
struct Floor {
  std::vector<double> sorted;  // every value, fastest first
  double spread = 0;  // mean distance above the fastest of the other values of the faster half
  double fastest() const { return sorted.front(); }
  double slowest(std::size_t k = 1) const { return sorted[sorted.size() - k]; }  // the k-th largest
};
// At least 2 values (std::invalid_argument otherwise).
Floor floor_of(std::vector<double> log_slowness);

// The floor shift NEW − BASE of one benchmark and its uncertainty before scaling: √(s_b² + s_n² +
// m² + 2h²) with m = kFloorSpreadMinimum, so that two files whose faster halves tie exactly still
// have some, and h the benchmark's floor spread between earlier runs (compare --history;
// floor_history.h), 0 without.
constexpr double kFloorSpreadMinimum =
    1e-3;  // 0.1%: below what any timer here resolves between runs
double floor_uncertainty(const Floor& base, const Floor& candidate, double history_spread = 0);

// How far a floor must move to count (compare's gate): past the other file's k-th slowest process.
// On some machines a benchmark lands on an upper level (its layout in memory, its core) in a share
// of its processes; the other file's k slowest show that level in about k of its n processes, and
// all m processes of this file land there with a chance of about (k/n)^m. k is the largest with
// that chance at most kFloorGateChance, and at least 1: 5 processes a side give the slowest, 10 the
// 5th slowest.
constexpr double kFloorGateChance = 1e-3;
std::size_t floor_gate_rank(std::size_t other_values, std::size_t own_values);

// Tail weight of the scaled floor shifts (Student t degrees of freedom). Rows timed on one CPU
// thread are the steady ones; rows with several threads (whose floor needs every core free at
// once), rows of the operating system (pinning) and GPU rows move between runs with heavier tails.
// 5 and 2 balance false alarms on unchanged file pairs against slowdowns found in slowed ones; 5
// for every row raises several times the false alarms (lab/records/regression.md). A one-thread row
// with a history (compare --history) gets lighter tails: most of what made them heavy was floors
// that move between runs (large memory-bound rows, page faults), and the history carries each one's
// own movement, so 8 finds more 10% slowdowns with no more false alarms than 5.
constexpr double kFloorDfSingleThread = 5, kFloorDfSingleThreadWithHistory = 8, kFloorDfOther = 2;
inline double floor_df(bool single_thread, bool has_history) {
  if (!single_thread) return kFloorDfOther;
  return has_history ? kFloorDfSingleThreadWithHistory : kFloorDfSingleThread;
}

// The scale φ that makes the median over the rows of |shift − common| / (φ · uncertainty), each
// over the median of |T| at its row's degrees of freedom, equal 1: the pair's own noise level,
// learned from every benchmark so that a few real changes cannot move it. 0 when rows is empty.
struct FloorRow {
  double shift = 0, uncertainty = 0, df = kFloorDfOther;
};
double floor_scale(const std::vector<FloorRow>& rows, double common_shift);
// The scale the same rows would give had row `moved` alone moved far (a real slowdown): that row
// leaves the median, which moves up by an order statistic. A slowed row's verdict is judged by this
// scale, and at heavy tails (t at Holm's level ≈ 28 at 2 degrees of freedom) a few percent more
// scale costs more than the figure's whole power term; so compare's could-see figure uses it.
double floor_scale_if_moved(std::vector<FloorRow> rows, double common_shift, std::size_t moved);

}  // namespace offloadbench
