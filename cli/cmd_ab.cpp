// `offloadbench ab BASE NEW`: did NEW make anything slower than BASE, measured side by side? Each
// round runs both executables as fresh processes in random, balanced order, with Google Benchmark's
// random interleaving; the verdicts come from paired rounds (harness/ab.h). INCONCLUSIVE benchmarks
// get extra rounds, up to a cap. Exit 1 when anything is SLOWER or a process fails, 2 on bad input,
// 130/143 when interrupted; the rounds' temporary folder goes on every way out.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <random>

#include <fmt/format.h>

#include "cli/child_process.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "harness/analysis/stats.h"
#include "harness/regression/ab.h"
#include "harness/regression/compare.h"
#include "harness/results/files.h"
#include "harness/results/results.h"
#include "harness/system_info.h"

namespace offloadbench::cli {

namespace {

namespace fs = std::filesystem;

struct AbCliOptions {
  std::string base, candidate;
  int rounds = 20, max_rounds = 0, extra_batch = 5, repetitions = 3;
  std::string suites = "all", device = "0", sizes;
  bool full = false;
  std::string delta_cpu = "2%", delta_gpu = "1%";
  double alpha = 0.05;
  std::string out, markdown, keep_runs;
  std::int64_t seed = -1;
  double process_timeout = 0;  // seconds; 0: derived (process_time_limit)
  std::vector<std::string> benchmark_flags;
};

// A BASE or NEW process that failed, ran past its time limit, or wrote no usable results: exit 1.
struct ProcessFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// SIGINT or SIGTERM came while the rounds ran: the process running then was stopped.
struct Interrupted {
  int signal;
  int round;
};

// FNV-1a over the file's bytes: equal hashes mean BASE and NEW are the same program (an A/A run).
std::string content_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::uint64_t hash = 1469598103934665603ull;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i)
      hash = (hash ^ static_cast<unsigned char>(buffer[i])) * 1099511628211ull;
    if (!in) break;
  }
  return fmt::format("fnv1a64:{:016x}", hash);
}

void check_executable(const std::string& path, const char* which) {
  if (!fs::is_regular_file(path))
    throw UsageError(fmt::format("{} '{}' is not a file", which, path));
  if (access(path.c_str(), X_OK) != 0)
    throw UsageError(fmt::format("{} '{}' is not executable", which, path));
}

// Every output is checked before round 1, so that one that cannot be written is bad input now, not
// a failure after the rounds; and none may be BASE, NEW or the other output, which it would
// destroy.
void check_outputs(const AbCliOptions& o, const std::string& out) {
  for (const auto& [path, option] :
       {std::pair{out, "--out"}, std::pair{o.markdown, "--markdown"}}) {
    if (path.empty()) continue;
    check_output_path(path, option);
    check_not_same_file(path, option, o.base, "BASE");
    check_not_same_file(path, option, o.candidate, "NEW");
  }
  if (!o.markdown.empty()) check_not_same_file(o.markdown, "--markdown", out, "--out");
}

// Where the rounds' files go: a new folder of our own (mkdtemp), never a predictable name another
// user could have made first, removed on every way out (one child's log once held 287 MB); or
// --keep-runs, which must be new or empty: each round's files are created new, and an older run's
// file must never pass for this one's.
class RoundsFolder {
 public:
  explicit RoundsFolder(const std::string& keep_runs) : kept_(!keep_runs.empty()) {
    if (!kept_) {
      path_ = make_temporary_folder("offloadbench-ab");
      return;
    }
    std::error_code error;
    fs::create_directories(keep_runs, error);
    const bool empty = !error && fs::is_empty(keep_runs, error);
    if (error) throw FileError(fmt::format("--keep-runs '{}': {}", keep_runs, error.message()));
    if (!empty)
      throw FileError(
          fmt::format("--keep-runs '{}' is not empty (give a new or empty folder)", keep_runs));
    check_output_path((fs::path(keep_runs) / "round001-base.json").string(), "--keep-runs");
    path_ = keep_runs;
  }
  ~RoundsFolder() {
    std::error_code ignored;
    if (!kept_) fs::remove_all(path_, ignored);
  }
  RoundsFolder(const RoundsFolder&) = delete;
  RoundsFolder& operator=(const RoundsFolder&) = delete;
  const fs::path& path() const { return path_; }
  bool kept() const { return kept_; }

 private:
  bool kept_;
  fs::path path_;
};

AbOptions statistics_options(const AbCliOptions& o) {
  AbOptions s;
  s.delta_cpu = parse_fraction(o.delta_cpu, "--delta-cpu");
  s.delta_gpu = parse_fraction(o.delta_gpu, "--delta-gpu");
  for (double d : {s.delta_cpu, s.delta_gpu})
    if (!(d > 0 && d < 1))
      throw UsageError(fmt::format("--delta-cpu/--delta-gpu must lie above 0% and below 100%"));
  if (!(o.alpha > 0 && o.alpha < 1))
    throw UsageError(fmt::format("--alpha {} is out of range (0 to 1)", o.alpha));
  s.alpha = o.alpha;
  return s;
}

void check_options(const AbCliOptions& o) {
  check_executable(o.base, "BASE");
  check_executable(o.candidate, "NEW");
  if (o.rounds < 1 || o.rounds > 1000)
    throw UsageError(fmt::format("--rounds {} is out of range (1..1000)", o.rounds));
  if (o.max_rounds != 0 && (o.max_rounds < o.rounds || o.max_rounds > 1000))
    throw UsageError(
        fmt::format("--max-rounds {} is out of range ({}..1000)", o.max_rounds, o.rounds));
  if (o.extra_batch < 1)
    throw UsageError(fmt::format("--extra-batch {} must be at least 1", o.extra_batch));
  if (o.repetitions < 1 || o.repetitions > 1000)
    throw UsageError(fmt::format("--repetitions {} is out of range (1..1000)", o.repetitions));
  if (!(o.process_timeout >= 0 && o.process_timeout <= 1e7))
    throw UsageError(fmt::format(
        "--process-timeout {} is out of range (seconds; 0 for the default)", o.process_timeout));
  for (const auto& flag : o.benchmark_flags)
    if (flag.rfind("--benchmark_", 0) != 0 || flag.rfind("--benchmark_out", 0) == 0 ||
        flag.rfind("--benchmark_repetitions", 0) == 0)
      throw UsageError(
          fmt::format("'{}' after -- is not a Google Benchmark flag that ab can pass on "
                      "(--benchmark_out and --benchmark_repetitions are ab's own)",
                      flag));
}

// Everything the rounds measured: per benchmark and round, each side's per-process median.
struct Measurements {
  std::vector<std::string> names;  // first-seen order
  std::map<std::string, bool> gpu;
  std::map<std::string, std::map<int, double>> base, candidate;  // name → round → median (seconds)
  std::map<std::string, std::size_t> throttled;
  bool clocks_unlocked = false;
  std::map<std::string, std::set<std::string>>
      gemm_plans;                                   // CPU mlp rows: the labels their processes gave
  nlohmann::json rounds = nlohmann::json::array();  // {round, first, benchmarks}
};

void record_process(Measurements& m, const std::string& path, bool is_base, int round) {
  const auto doc = load_results(path);
  for (const auto& s : benchmark_samples(doc, "real_time", path)) {
    m.throttled[s.name] += s.throttled;
    m.clocks_unlocked |= s.clocks_unlocked;
    if (s.values.empty()) continue;
    if (!m.gpu.count(s.name)) {
      m.names.push_back(s.name);
      m.gpu[s.name] = s.parameters.contains("device") && s.parameters["device"].is_number_integer();
    }
    (is_base ? m.base : m.candidate)[s.name][round] = median(s.values);
  }
  // The CPU mlp rows name the GEMM library each process planned ("GEMMs: all oneDNN"): a plan that
  // differs between processes is a source of spread the user can remove (OFFLOADBENCH_CPU_GEMM).
  for (const auto& row : doc.value("benchmarks", nlohmann::json::array()))
    if (row.value("run_type", "") == "iteration" && row.value("label", "").rfind("GEMMs:", 0) == 0)
      m.gemm_plans[row.value("run_name", row.value("name", ""))].insert(row.value("label", ""));
}

std::vector<AbSeries> paired_series(const Measurements& m) {
  std::vector<AbSeries> series;
  for (const auto& name : m.names) {
    AbSeries s{name, m.gpu.at(name), {}, m.throttled.count(name) ? m.throttled.at(name) : 0};
    const auto b = m.base.find(name), c = m.candidate.find(name);
    if (b != m.base.end() && c != m.candidate.end())
      for (const auto& [round, base_median] : b->second)
        if (const auto other = c->second.find(round); other != c->second.end())
          s.pairs.push_back({base_median, other->second});
    series.push_back(std::move(s));
  }
  return series;
}

// The minimum time per benchmark that `run` uses unless --benchmark_min_time says otherwise
// (cmd_run.cpp).
double default_min_time_s(bool full) { return full ? 0.1 : 0.02; }

// How long one BASE or NEW process may run before ab stops it: one that never ends must not hold ab
// (and a CI job) for ever, and one that is merely slow must not be stopped. --process-timeout, else
// 10 times the longest process so far, at least 5 minutes. The first process has no measurement to
// go by: an allowance per repetition from the plan, scaled by a --benchmark_min_time above run's
// default.
double process_time_limit(const AbCliOptions& o, double longest_so_far_s) {
  if (o.process_timeout > 0) return o.process_timeout;
  if (longest_so_far_s > 0) return std::max(300.0, std::ceil(10 * longest_so_far_s));
  double min_time = default_min_time_s(o.full);
  // "0.5", or "0.5s" in newer Google Benchmarks; "100x" counts iterations, not seconds.
  for (const auto& flag : o.benchmark_flags) {
    if (flag.rfind("--benchmark_min_time=", 0) != 0) continue;
    char* rest = nullptr;
    const double seconds = std::strtod(flag.c_str() + 21, &rest);
    if (seconds > 0 && (std::string(rest) == "" || std::string(rest) == "s")) min_time = seconds;
  }
  // Per repetition of every suite, the quick sweep took 37 s on an H100 and 23 s on two CPU cores
  // without a GPU, where --full (six times the cases at five times the minimum time) took 19
  // minutes.
  const double allowance_s = o.full ? 3 * 3600 : 20 * 60;
  return allowance_s * o.repetitions * std::max(1.0, min_time / default_min_time_s(o.full));
}

class RoundRunner {
 public:
  RoundRunner(const AbCliOptions& o, const RoundsFolder& folder, StopSignals& stop,
              std::uint64_t seed)
      : o_(o), folder_(folder), stop_(stop), rng_(seed ^ 0x9e3779b97f4a7c15ull) {}

  // One round: BASE and NEW, in the order given, each a fresh process.
  void run(Measurements& m, int round, bool new_first, const std::vector<std::string>& only) {
    fmt::print(stderr, "ab: round {} ({} first{})\n", round + 1, new_first ? "NEW" : "BASE",
               only.empty() ? "" : fmt::format(", {} inconclusive benchmark(s)", only.size()));
    for (int i = 0; i < 2; ++i) {
      const bool is_base = (i == 0) != new_first;
      const auto stem = fmt::format("round{:03}-{}", round + 1, is_base ? "base" : "new");
      const auto out = (folder_.path() / (stem + ".json")).string();
      const auto log = (folder_.path() / (stem + ".log")).string();
      const std::string& program = is_base ? o_.base : o_.candidate;
      const double limit_s = process_time_limit(o_, longest_s_);
      const auto end = start_child_run(program, child_run(out, only), log, limit_s, &stop_, rng_);
      if (end.stop_signal) throw Interrupted{end.stop_signal, round + 1};
      // "NEW (./new) wrote no results (status 1) in round 3 (its log ended: "…")": one line,
      // exit 1.
      const auto failure = [&](const std::string& what, const std::string& detail = "") {
        const auto last = last_log_line(log);
        return ProcessFailure(fmt::format("{} ({}) {} in round {}{}{}", is_base ? "BASE" : "NEW",
                                          program, what, round + 1, detail,
                                          folder_.kept() ? fmt::format(" (its log: {})", log)
                                          : last.empty()
                                              ? std::string()
                                              : fmt::format(" (its log ended: \"{}\")", last)));
      };
      if (end.timed_out)
        throw failure(fmt::format("did not finish within {:g} s", limit_s), "; stopped it");
      if (end.status != 0 &&
          end.status != 1)  // 1: rows failed validation; the file is still usable
        throw failure(fmt::format("exited with status {}", end.status));
      if (!fs::exists(out)) throw failure(fmt::format("wrote no results (status {})", end.status));
      try {
        record_process(m, out, is_base, round);
      } catch (const std::exception& e) {
        throw failure("wrote results that cannot be read", fmt::format(": {}", e.what()));
      }
      longest_s_ = std::max(longest_s_, end.seconds);
    }
    m.rounds.push_back(
        {{"round", round + 1}, {"first", new_first ? "NEW" : "BASE"}, {"benchmarks", only}});
  }

 private:
  // Random interleaving within each process too; with `only`, just the inconclusive benchmarks.
  ChildRun child_run(const std::string& out, const std::vector<std::string>& only) const {
    ChildRun child;
    child.suites = o_.suites;
    child.full = o_.full;
    child.device = o_.device;
    child.sizes = o_.sizes;
    child.repetitions = o_.repetitions;
    child.out = out;
    child.benchmark_flags = {"--benchmark_enable_random_interleaving=true"};
    child.benchmark_flags.insert(child.benchmark_flags.end(), o_.benchmark_flags.begin(),
                                 o_.benchmark_flags.end());
    if (!only.empty())
      child.benchmark_flags.push_back("--benchmark_filter=" + exact_name_filter(only));
    return child;
  }
  const AbCliOptions& o_;
  const RoundsFolder& folder_;
  StopSignals& stop_;
  double longest_s_ = 0;  // the longest process so far: the measure of the next one's time limit
  std::mt19937_64 rng_;
};

nlohmann::json ab_json(const AbOutcome& outcome, const Measurements& m,
                       const nlohmann::json& context) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : outcome.rows) {
    nlohmann::json base = nlohmann::json::object(), candidate = nlohmann::json::object();
    if (m.base.count(r.name))
      for (const auto& [round, v] : m.base.at(r.name)) base[std::to_string(round + 1)] = v;
    if (m.candidate.count(r.name))
      for (const auto& [round, v] : m.candidate.at(r.name))
        candidate[std::to_string(round + 1)] = v;
    rows.push_back({{"name", r.name},
                    {"gpu", r.gpu},
                    {"delta", r.delta},
                    {"verdict", verdict_name(r.verdict)},
                    {"reason", r.reason},
                    {"rounds", r.rounds},
                    {"base_median_s", r.base_median},
                    {"new_median_s", r.new_median},
                    {"change", r.change},
                    {"interval_low", r.low},
                    {"interval_high", r.high},
                    {"interval_confidence", r.confidence},
                    {"p_slower", r.p_slower},
                    {"p_faster", r.p_faster},
                    {"p_holm", r.p_holm},
                    {"rounds_set_aside", r.rounds_set_aside},
                    {"dropped_throttled", r.dropped_throttled},
                    {"base_seconds_by_round", base},
                    {"new_seconds_by_round", candidate}});
  }
  return without_non_finite({{"ab_schema_version", 1},
                             {"context", context},
                             {"counts",
                              {{"SLOWER", outcome.slower},
                               {"FASTER", outcome.faster},
                               {"SAME", outcome.same},
                               {"INCONCLUSIVE", outcome.inconclusive}}},
                             {"rounds", m.rounds},
                             {"benchmarks", rows}});
}

std::vector<std::string> notes_for(const nlohmann::json& context, const Measurements& m) {
  std::vector<std::string> notes;
  if (context["same_content"] == true)
    notes.push_back("BASE and NEW have the same content (" +
                    context["base"]["content_hash"].get<std::string>() +
                    "): this is an A/A control run; any SLOWER or FASTER below is a false alarm.");
  std::size_t dropped = 0;
  for (const auto& [name, n] : m.throttled) dropped += n;
  if (dropped)
    notes.push_back(fmt::format(
        "{} GPU repetition(s) dropped: measured while the SM clock was throttled.", dropped));
  if (m.clocks_unlocked)
    notes.push_back(
        "GPU clocks were not locked (nvidia-smi --lock-gpu-clocks): expect more spread and more "
        "INCONCLUSIVE on GPU rows.");
  std::size_t flipped = 0;
  for (const auto& [name, plans] : m.gemm_plans) flipped += plans.size() > 1;
  if (flipped)
    notes.push_back(fmt::format(
        "{} CPU mlp benchmark(s) ran under different plans in different processes (GEMM "
        "library, or one thread against all; each process plans its own): that widens their "
        "intervals. Set OFFLOADBENCH_CPU_GEMM=OpenBLAS (or oneDNN) to pin the library for both "
        "sides; one thread is kept only when it is at least 10% faster.",
        flipped));
  return notes;
}

int execute_ab(const AbCliOptions& o, const std::vector<std::string>& command_line) {
  check_options(o);
  const auto options = statistics_options(o);
  const int max_rounds = o.max_rounds ? o.max_rounds : 2 * o.rounds;
  const std::uint64_t seed =
      o.seed >= 0 ? static_cast<std::uint64_t>(o.seed) : std::random_device{}();
  std::mt19937_64 coin(seed);

  const std::string out = o.out.empty() ? fmt::format("ab-{}.json", utc_now_stamp()) : o.out;
  check_outputs(o, out);
  nlohmann::json context = {
      {"base", {{"path", o.base}, {"content_hash", content_hash(o.base)}}},
      {"new", {{"path", o.candidate}, {"content_hash", content_hash(o.candidate)}}},
      {"rounds", o.rounds},
      {"max_rounds", max_rounds},
      {"repetitions_per_process", o.repetitions},
      {"seed", seed},
      {"suites", o.suites},
      {"device", o.device},
      {"command_line", command_line},
      {"delta_cpu", options.delta_cpu},
      {"delta_gpu", options.delta_gpu},
      {"alpha", options.alpha},
      {"confidence", options.confidence},
      {"host", query_host_info().hostname},
      {"start_time_utc", utc_now_stamp()}};
  context["same_content"] = context["base"]["content_hash"] == context["new"]["content_hash"];

  // The order of each round: a coin flip for the first round of each pair, the other order for the
  // second. Random, never a fixed ABAB, and balanced: with a plain coin per round, 8 rounds leave
  // one order 6 times or more in 29% of runs, and an order effect (the first process of a round
  // running warmer or colder) then leaks into the verdict as a false alarm.
  bool new_first = false;
  const auto order = [&](int round) {
    return new_first = round % 2 == 0 ? (coin() & 1) != 0 : !new_first;
  };
  Measurements m;
  AbOutcome outcome;
  int done = 0;
  try {
    StopSignals stop;  // Ctrl-C and SIGTERM stop the running process and unwind to here
    const RoundsFolder folder(
        o.keep_runs);  // removed before `stop` goes, so that no signal cuts that short
    RoundRunner runner(o, folder, stop, seed);
    for (; done < o.rounds; ++done) runner.run(m, done, order(done), {});
    outcome = ab_verdicts(paired_series(m), options);
    while (outcome.inconclusive > 0 && done < max_rounds) {
      std::vector<std::string> open;
      for (const auto& r : outcome.rows)
        if (r.verdict == Verdict::inconclusive) open.push_back(r.name);
      for (int i = 0; i < o.extra_batch && done < max_rounds; ++i, ++done)
        runner.run(m, done, order(done), open);
      outcome = ab_verdicts(paired_series(m), options);
    }
    if (stop.signal()) throw Interrupted{stop.signal(), done};  // it came after the last process
  } catch (const Interrupted& stopped) {
    fmt::print(stderr, "offloadbench: interrupted ({}) in round {}; no results written\n",
               stopped.signal == SIGINT ? "SIGINT" : "SIGTERM", stopped.round);
    return 128 + stopped.signal;
  }
  context["rounds_run"] = done;
  context["end_time_utc"] = utc_now_stamp();

  const auto notes = notes_for(context, m);
  print_ab(stdout, outcome);
  for (const auto& note : notes) fmt::print("ab: note: {}\n", note);
  write_json_atomically(out, ab_json(outcome, m, context));
  if (!o.markdown.empty()) write_file_atomically(o.markdown, ab_markdown(outcome, notes));
  fmt::print("ab: results {}\n", out);
  return outcome.slower > 0 ? 1 : 0;
}

}  // namespace

Command add_ab_command(CLI::App& app, const std::vector<std::string>& command_line) {
  auto o = std::make_shared<AbCliOptions>();
  auto* cmd = app.add_subcommand(
      "ab",
      "Interleaved A/B run of two builds: SLOWER / FASTER / SAME / INCONCLUSIVE per "
      "benchmark; exit 1 when any is SLOWER");
  cmd->add_option("BASE", o->base, "Baseline executable (an offloadbench build)")->required();
  cmd->add_option("NEW", o->candidate, "Candidate executable")->required();
  cmd->add_option("--rounds", o->rounds, "Rounds (each: BASE and NEW once, coin-flip order)")
      ->default_str("20");
  cmd->add_option("--max-rounds", o->max_rounds,
                  "Cap for the extra rounds given to INCONCLUSIVE benchmarks "
                  "(default 2 × --rounds)");
  cmd->add_option("--extra-batch", o->extra_batch,
                  "Extra rounds run between two looks at the verdicts")
      ->default_str("5");
  cmd->add_option("--repetitions", o->repetitions,
                  "Repetitions per process (their median is one sample)")
      ->default_str("3");
  cmd->add_option("--suite", o->suites, "Comma-separated suites, or all")->default_str("all");
  cmd->add_flag("--full", o->full, "Full sweep of every size (default quick)");
  cmd->add_option("--device", o->device, "GPU index, all, or cpu")->default_str("0");
  cmd->add_option("--sizes", o->sizes, "Sizes for the size sweeps, as for run");
  cmd->add_option("--delta-cpu", o->delta_cpu, "Smallest change that counts on CPU rows")
      ->default_str("2%");
  cmd->add_option("--delta-gpu", o->delta_gpu, "Smallest change that counts on GPU rows")
      ->default_str("1%");
  cmd->add_option("--alpha", o->alpha, "Family-wise error rate over all benchmarks (Holm)")
      ->default_str("0.05");
  cmd->add_option("--seed", o->seed,
                  "Seed of the coin flips (default: random, recorded in the results)");
  cmd->add_option("--out", o->out, "A/B results file (default ab-<UTC time>.json)");
  cmd->add_option("--markdown", o->markdown,
                  "Write the summary as Markdown (e.g. for $GITHUB_STEP_SUMMARY)");
  cmd->add_option("--keep-runs", o->keep_runs,
                  "Keep every process's results file and log in this folder (new or empty)");
  cmd->add_option(
      "--process-timeout", o->process_timeout,
      "Seconds one BASE or NEW process may run before it is stopped (exit 1). Default: 10 × the "
      "longest so far, at least 300; the first, with nothing measured yet: 1200 per repetition "
      "(10800 with --full)");
  cmd->add_option("benchmark_flags", o->benchmark_flags, "Google Benchmark flags, after --");
  return {cmd, [o, command_line] { return execute_ab(*o, command_line); }};
}

}  // namespace offloadbench::cli
