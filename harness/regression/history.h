// `offloadbench history DIR`: the nightly results of one machine, in time order, and per benchmark
// the steps in its median that persisted (change points), each named by the git SHA where it
// appeared. compare answers "is last night worse than the baseline?"; history answers "since when,
// and which commit?".
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench {

struct ChangePointOptions {
  double min_magnitude = 0.05;  // a step smaller than 5% of the median is not reported
  int min_segment = 3;          // runs needed on each side: a step must persist this long
  double noise_factor =
      4.0;  // the step must exceed this many standard errors of the run-to-run noise
  double significance =
      0.05;  // of E-divisive's permutation test (the magnitude and noise gates follow)
  int permutations = 199;
};

struct Step {
  std::size_t index = 0;         // first run at the new level
  double before = 0, after = 0;  // medians of the windows on either side
};

// Steps in `series` (one value per run, in time order), by E-divisive means (Matteson & James 2014,
// as MongoDB and Apache Otava use it): on the log values, the split τ of a segment that maximises
// the energy distance between [start, τ) and [τ, κ) over τ and κ is a candidate; a permutation test
// (seeded, so repeatable) says whether it beats chance; if so the segment is cut there and the
// search goes on in the pieces. Being a test of the distributions on either side, not of
// neighbouring runs, it also finds slow creeps that no single night shows. A cut is reported when
// the medians of the segments on either side differ by at least min_magnitude and by more than
// noise_factor standard errors (the run-to-run σ from successive differences, which a step or creep
// barely moves), with at least min_segment runs on each side that sit nearer their own side's
// level. Counts of the search's work, for tests of how it scales.
struct ChangePointWork {
  std::size_t searches = 0;           // best-split searches over a segment or a shuffle of one
  std::size_t splits = 0;             // (τ, κ) pairs evaluated, all searches together
  std::size_t shuffles_searched = 0;  // permutation-test shuffles that were searched
};

std::vector<Step> detect_change_points(const std::vector<double>& series,
                                       const ChangePointOptions& options,
                                       ChangePointWork* work = nullptr);

// The reporting half of detect_change_points: of the segment boundaries `cuts` (0, …,
// series.size(), sorted) a search found, the steps whose levels differ by enough (see above); a cut
// that does not qualify is merged away, weakest first, and its neighbours are read again over the
// merged segment.
std::vector<Step> steps_at_cuts(const std::vector<double>& series, std::vector<std::size_t> cuts,
                                const ChangePointOptions& options);

// How many more runs this series needs before a step of options.min_magnitude, at its own
// run-to-run noise, could be found: the smallest N ≥ the series' length for which
// detect_change_points finds such a step in a series of N runs at this series' median (half at the
// old level, the rest at the new, with seeded noise of this series' σ), less the length. 0 when it
// could be found now; -1 when not even kMaxRunsAhead more runs would do (the noise hides such a
// step). With three runs on each side the permutation test cannot reach its threshold: six runs
// cannot show a step that seven can.
constexpr int kMaxRunsAhead = 50;
int more_runs_needed(const std::vector<double>& series, const ChangePointOptions& options);

struct HistoryRun {
  std::string path, start_time, git_sha;
};

struct HistoryPoint {
  std::size_t run = 0;  // index into History::runs
  std::size_t repetitions = 0;
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;  // of the per-repetition samples
};

struct ChangePoint {
  std::size_t point = 0;  // index into BenchmarkHistory::points of the first run at the new level
  std::string git_sha, previous_git_sha;  // the step appeared after previous_git_sha, by git_sha
  std::string start_time;
  double before = 0, after = 0;  // medians of the levels on either side
  double change = 0;             // after / before − 1
  bool slower = false;           // by the metric's orientation
};

struct BenchmarkHistory {
  std::string name;
  std::vector<HistoryPoint> points;  // runs where it was measured, in time order
  std::vector<ChangePoint> change_points;
  int more_runs_needed =
      0;  // before a step of the minimum magnitude could be found (-1: its noise hides one)
};

struct History {
  std::string directory, metric;
  std::string hostname;                // of the first file read (context.host.hostname)
  nlohmann::json machine_fingerprint;  // of the first file read
  ChangePointOptions options;
  std::vector<HistoryRun> runs;  // ordered by start time
  std::vector<std::string>
      ignored;  // "file: why" for files left out (unfinished runs, unreadable files)
  std::vector<BenchmarkHistory> benchmarks;
};

// The files load_history reads: every *.json in `directory` (not recursive) that is a regular file
// or a link to one, sorted. A *.json entry that cannot be looked at (a symbolic link loop, a
// dangling link, a directory without search permission) is left out, and added as "path: cannot
// read: why" to `problems` when given. Throws ResultsError when `directory` is not a directory or
// cannot be listed.
std::vector<std::string> history_files(const std::string& directory,
                                       std::vector<std::string>* problems = nullptr);

// Reads every *.json in `directory` (not recursive). Throws ResultsError naming the file and the
// problem for a bad file, a fingerprint different from the first file's (unless allowed), or a
// directory without results files. Unfinished runs (context.offloadbench.incomplete) and files that
// cannot be read at all (history_files' problems, no read permission) are left out, each listed in
// History::ignored with the reason, and the rest are read.
History load_history(const std::string& directory, const std::string& metric,
                     bool allow_different_machines, const ChangePointOptions& options);

// "12 of 184 benchmarks could not have shown a 5% step yet (12 need up to 1 more run)", or "" when
// every benchmark could have (BenchmarkHistory::more_runs_needed).
std::string unseen_steps_note(const History& history);

void print_history(std::FILE* out, const History& history, bool every_benchmark);
nlohmann::json to_json(const History& history);

}  // namespace offloadbench
