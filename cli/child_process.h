// Running offloadbench (or a program that behaves as it) as a child process: `ab` runs BASE and NEW
// this way, each round in fresh processes, restricted to chosen benchmarks by an exact-name filter;
// `run --processes N` runs its N processes this way. Both start a child `run` with
// start_child_run().
#pragma once
#include <random>
#include <string>
#include <vector>

namespace offloadbench::cli {

class StopSignals;

// A --benchmark_filter value matching exactly these names: ^(a|b)$ with regex characters escaped.
std::string exact_name_filter(const std::vector<std::string>& names);

// How a child ended: by itself (`status`), or stopped by us, its time limit past or a stop signal.
struct ChildEnd {
  int status = 0;  // its exit status, 128 + signal when killed
  bool timed_out = false;
  int stop_signal = 0;  // SIGINT or SIGTERM came to us: the child was stopped, or never started
  double seconds = 0;
};

// Runs `executable` with `arguments` in a process group of its own, stdin from /dev/null. Its
// stdout and stderr go to `log_path` when given, a new file (create_new_file: never an existing
// file or a link, FileError), else stdout goes to our stderr so that our own output stays clean.
// Past `time_limit_s` (0: none), or when `stop` records a signal, the whole group gets SIGTERM (the
// signal received), then SIGKILL after a short grace. Throws std::runtime_error when it cannot be
// started.
ChildEnd run_child(const std::string& executable, const std::vector<std::string>& arguments,
                   const std::string& log_path = "", double time_limit_s = 0,
                   StopSignals* stop = nullptr);

// What a child `offloadbench run` is asked to measure and where it writes; "" leaves the child's
// default.
struct ChildRun {
  std::string suites = "all", device = "0", sizes, host_numa;
  std::string refine;  // run --refine-at: a crossover refinement's cases only (format_refinement)
  std::string
      calibrated_by;  // run --calibrated-by: the first process's results file (run --processes)
  bool measure_only =
      false;  // run --measure-only: rows only (a child of this build; ab's builds may be older)
  bool full = false;
  int repetitions = 1;
  std::string out;
  std::vector<std::string> benchmark_flags;  // Google Benchmark's, after `--`
};

// The child's arguments: `run --suite … --quick|--full --device … [--host-numa …] [--sizes …]
// [--refine-at …] [--calibrated-by FILE] --repetitions N --remeasure-unsteady 0 --refine-crossovers
// 0
// [--measure-only] --out FILE [-- FLAGS…]`.
std::vector<std::string> child_run_arguments(const ChildRun& run);

// Runs `program` as a child `run` (run_child, same log, limit and stop). Each child first gets a
// random environment pad of 0-4095 bytes (OFFLOADBENCH_LAYOUT_PAD, drawn from `rng`): the
// environment's size moves the initial stack, and with it the alignment of everything on it
// (Mytkowicz et al., ASPLOS 2009), so the layout is drawn again in each process as the heap's is,
// and two programs whose paths differ in length do not differ by that alone.
ChildEnd start_child_run(const std::string& program, const ChildRun& run,
                         const std::string& log_path, double time_limit_s, StopSignals* stop,
                         std::mt19937_64& rng);

// The last line (at most 200 characters) a failed child wrote to its log, which usually says why:
// its log goes with its temporary folder.
std::string last_log_line(const std::string& log_path);

}  // namespace offloadbench::cli
