// `offloadbench run`: registers the chosen suites, runs them through Google Benchmark and keeps the
// results file current. Every bad input is rejected before anything is measured or written.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "benchmarks/family_analyses.h"
#include "cli/benchmark_flags.h"
#include "cli/commands.h"
#include "cli/environment.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "cli/refine.h"
#include "cli/remeasure.h"
#include "cli/run_processes.h"
#include "harness/analysis/analysis.h"
#include "harness/analysis/refinement.h"
#include "harness/analysis/summary.h"
#include "harness/analysis/verdicts.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"
#include "harness/numa.h"
#include "harness/results/files.h"
#include "harness/results/results.h"
#include "harness/results/sizes.h"
#include "harness/results_reporter.h"
#include "harness/run_context.h"
#include "harness/system_info.h"

namespace offloadbench::cli {

namespace {

struct RunOptions {
  std::string suites = "all";
  bool quick = false;
  bool full = false;
  std::string device;
  std::string out;
  int repetitions = 5;
  int processes = 1;
  int remeasure = 10;
  bool remeasure_given = false;
  int refine_rounds = kDefaultRefinementRounds;
  std::string
      refine_at;  // a refinement round's child: only these cases (harness/analysis/refinement.h)
  std::string calibrated_by;  // a later process of run --processes: the first one's results file
  bool measure_only = false;  // a child: rows only; whoever started it analyses and summarises
  std::string sizes;
  std::string host_numa = "local";
  bool sizes_given = false;  // `--sizes ''` is a mistake, not "the default sizes"
  bool device_given = false;
  bool out_given = false;
  std::vector<std::string> benchmark_flags;
};

// results/<host>-<UTC time>.json; the folder is made only once the run is known to go ahead.
std::string default_out_path() {
  return fmt::format("results/{}-{}.json", query_host_info().hostname, utc_now_stamp());
}

// How many registered cases a --benchmark_filter selects (for the progress line only).
int count_selected(const std::vector<std::string>& flags) {
  std::string filter;
  for (const auto& f : flags)
    if (f.rfind("--benchmark_filter=", 0) == 0) filter = f.substr(19);
  int n = 0;
  bool negate = !filter.empty() && filter[0] == '-';
  std::regex re;
  try {
    re = std::regex(negate ? filter.substr(1) : filter, std::regex::extended);
  } catch (const std::regex_error&) { return static_cast<int>(registered_cases().size()); }
  // Google Benchmark matches its decorated names ("…/real_time", "…/manual_time"); so do we.
  for (const auto& c : registered_cases()) {
    const std::string decorated = reported_name(c);
    if (filter.empty() ||
        (std::regex_search(c.name, re) || std::regex_search(decorated, re)) != negate)
      ++n;
  }
  return n;
}

// The iteration rows of an earlier process's results file, by case name (set_calibration_rows).
std::map<std::string, nlohmann::json> calibration_rows(const std::string& path) {
  std::map<std::string, nlohmann::json> rows;
  nlohmann::json document;
  try {
    document = load_results(path);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("--calibrated-by: {}", e.what()));
  }
  for (const auto& row : document.value("benchmarks", nlohmann::json::array())) {
    if (row.value("run_type", "") != "iteration" || row.value("error_occurred", false)) continue;
    rows.emplace(row.value("name", ""), row);
  }
  return rows;
}

// family -> the sweep it refines, for the chosen suites that have one.
std::map<std::string, std::string> refinable_sweeps(const std::vector<const Suite*>& suites) {
  std::map<std::string, std::string> sweeps;
  for (const auto* s : suites)
    if (!s->refinable_sweep.empty()) sweeps[s->name] = s->refinable_sweep;
  return sweeps;
}

// A child `run` measuring what this one measures (its repetitions and output are the caller's).
ChildRun child_like_this(const RunOptions& o, const std::string& device) {
  ChildRun child;
  child.suites = o.suites;
  child.full = o.full;
  child.device = device;
  child.host_numa = o.host_numa;
  if (o.sizes_given) child.sizes = o.sizes;
  child.benchmark_flags = o.benchmark_flags;
  return child;
}

// --remeasure-unsteady, else OFFLOADBENCH_REMEASURE_UNSTEADY (parsed and range-checked by the
// registry, cli/environment.h), else the default. A file of several processes keeps the spread
// between them: it is what compare judges such files by (its error rates were measured on them),
// and one more process would replace it.
int remeasure_repetitions(const RunOptions& o, std::optional<int> from_environment) {
  if (o.remeasure_given) {
    if (o.remeasure < 0 || o.remeasure > 1000)
      throw UsageError(
          fmt::format("--remeasure-unsteady {} is out of range (0..1000)", o.remeasure));
    return o.remeasure;
  }
  if (from_environment) return *from_environment;
  return o.processes == 1 ? o.remeasure : 0;
}

int execute_run(const RunOptions& o, const std::vector<std::string>& command_line) {
  if (o.quick && o.full) throw UsageError("--quick and --full cannot be used together");
  if (o.repetitions < 1 || o.repetitions > 1000)
    throw UsageError(fmt::format("--repetitions {} is out of range (1..1000)", o.repetitions));
  const int remeasure = remeasure_repetitions(o, environment().remeasure_unsteady);
  if (o.processes < 1 || o.processes > o.repetitions)
    throw UsageError(fmt::format("--processes {} is out of range (1 to --repetitions, {})",
                                 o.processes, o.repetitions));
  check_benchmark_flags(o.benchmark_flags);

  RunConfig config;
  config.quick = !o.full;
  try {
    if (o.sizes_given) config.sizes = parse_size_list(o.sizes);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--sizes: {}", e.what()));
  }
  try {
    config.host_numa = parse_host_numa(o.host_numa, read_numa_topology());
  } catch (const std::invalid_argument& e) { throw UsageError(e.what()); }
  if (o.refine_rounds < 0 || o.refine_rounds > 20)
    throw UsageError(
        fmt::format("--refine-crossovers {} is out of range (0..20)", o.refine_rounds));
  const auto suites = select_suites(o.suites);
  if (o.sizes_given) check_sizes_apply(suites);
  if (!o.refine_at.empty()) {
    try {
      config.refine = parse_refinement(o.refine_at);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("--refine-at: {}", e.what()));
    }
    for (const auto* s : suites)
      if (s->refinable_sweep.empty())
        throw UsageError(fmt::format("--refine-at: suite {} has no sweep to refine", s->name));
  }
  if (o.device_given && o.device.empty())
    throw UsageError("--device '' is empty (give a GPU index, all or cpu)");
  const std::string device = o.device.empty() ? "0" : o.device;
  config.gpu_devices = select_devices(device);

  // Google Benchmark parses its own flags; ours go first so that the user's override them.
  std::vector<std::string> gb_args = {
      command_line.empty() ? "offloadbench" : command_line[0],
      fmt::format("--benchmark_repetitions={}", o.repetitions),
      fmt::format("--benchmark_min_time={}", config.quick ? 0.02 : 0.1)};
  gb_args.insert(gb_args.end(), o.benchmark_flags.begin(), o.benchmark_flags.end());
  std::vector<char*> gb_argv;
  for (auto& a : gb_args) gb_argv.push_back(a.data());
  int gb_argc = static_cast<int>(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());
  if (benchmark::ReportUnrecognizedArguments(gb_argc, gb_argv.data())) return 2;

  const std::string out = o.out_given ? o.out : default_out_path();

  if (!o.calibrated_by.empty()) set_calibration_rows(calibration_rows(o.calibrated_by));
  RunDescription description;
  for (auto* s : suites) {
    s->register_cases(config);
    description.suites.push_back(s->name);
  }
  description.mode = config.quick ? "quick" : "full";
  description.repetitions = o.repetitions;
  description.devices = device;
  description.host_numa = o.host_numa;
  description.command_line = command_line;

  if (registered_cases().empty())
    throw UsageError(fmt::format("no benchmark selected (suites {} have no case for --device {})",
                                 o.suites, device));
  const int selected = count_selected(o.benchmark_flags);
  if (selected == 0)
    throw UsageError("no benchmark matches the --benchmark_filter given (see offloadbench list)");

  // Everything is checked: now the results folder may be made and the file claimed.
  if (!o.out_given) {
    std::error_code error;
    std::filesystem::create_directories("results", error);
    if (error)
      throw FileError(
          fmt::format("cannot make the default results folder 'results': {}", error.message()));
  }
  check_output_path(out, "--out");
  if (o.processes > 1) {  // everything is checked; the processes measure, this one only gathers
    clear_registered_cases();
    benchmark::Shutdown();
    ProcessRunPlan plan;
    plan.child = child_like_this(o, device);
    plan.repetitions = o.repetitions;
    plan.processes = o.processes;
    plan.remeasure_repetitions = remeasure;
    plan.refine_rounds = o.refine_rounds;
    plan.refinable = refinable_sweeps(suites);
    plan.out = out;
    plan.command_line = command_line;
    return run_in_processes(plan);
  }
  OutputLock lock(out);  // a second run writing the same file is refused, not interleaved
  ResultsReporter reporter(out, make_run_context(description), selected,
                           isatty(STDERR_FILENO) != 0);
  if (!config.gpu_devices.empty() && gpu_inventory().unavailable_reason.empty()) {
    reporter.set_clock_reader(nvml_clock_reader());
    reporter.set_clock_sampler(
        std::make_shared<ClockSampler>(nvml_clock_reader(), config.gpu_devices));
  }
  {
    InterruptWatch watch([&](int signal) {
      std::string kept = fmt::format("what finished is in {}", out);
      try {
        reporter.finish("interrupted");
      } catch (const std::exception& e) {  // a full disk: the file keeps its last complete write
        kept =
            fmt::format("{} keeps the benchmarks written before; marking it interrupted failed: {}",
                        out, e.what());
      }
      lock.release();
      fmt::print(stderr, "\noffloadbench: interrupted ({}); {}\n",
                 signal == SIGINT ? "SIGINT" : "SIGTERM", kept);
    });
    // Once measuring began, a path that stopped being writable (its folder deleted, say) is not bad
    // input: docs/command-line.md's exit code 1, not 2.
    const auto after_work_began = [](const std::exception& e) -> std::runtime_error {
      return std::runtime_error(e.what());
    };
    try {
      benchmark::RunSpecifiedBenchmarks(&reporter);
    } catch (const std::exception& e) {
      try {
        reporter.finish(fmt::format("failure: {}", e.what()));
      } catch (
          const std::exception&) {  // the same failure again: the first one is the one to report
      }
      if (dynamic_cast<const FileError*>(&e)) throw after_work_began(e);
      throw;
    }
    if (!reporter.started())  // Google Benchmark matched nothing and wrote nothing
      throw UsageError("no benchmark matches the --benchmark_filter given (see offloadbench list)");
    try {
      reporter.finish();
    } catch (const FileError& e) { throw after_work_began(e); }
  }
  clear_registered_cases();  // cases may own GPU buffers: free them while CUDA is still up
  benchmark::Shutdown();

  // The analysis goes into the same file (rewritten atomically), then the summary shows it. The
  // measurements are already safe on disk: an analysis failure is reported, never fatal.
  auto document = reporter.document();
  if (o.measure_only) {
    fmt::print("results: {}\n", out);
    return reporter.invalid_rows() > 0 ? 1 : 0;
  }
  if (!document["context"]["offloadbench"].value("incomplete", false)) {
    RemeasurePlan again;
    again.child = child_like_this(o, device);
    again.repetitions = remeasure;
    again.out = out;
    document = remeasure_unsteady(document, again);
    RefinePlan refine;
    refine.child = child_like_this(o, device);
    refine.repetitions = o.repetitions;
    refine.out = out;
    const int rounds =
        config.refine ? 0 : o.refine_rounds;  // a refinement's child refines nothing itself
    document = refine_crossovers(document, rounds, refinable_sweeps(suites), child_round(refine));
  }
  try {
    document["analysis"] = analyze(document, family_analyses());
    write_json_atomically(out, document);
  } catch (const std::exception& e) {
    fmt::print(stderr, "offloadbench: analysis failed ({}); try 'offloadbench analyze {}'\n",
               e.what(), out);
  }
  print_summary(stdout, document, family_analyses(), {false, &default_reference_runs(), out});
  fmt::print("results: {}\n", out);
  if (reporter.invalid_rows() > 0) {
    fmt::print(stderr,
               "offloadbench: {} benchmark row(s) failed validation (see 'validated' in {})\n",
               reporter.invalid_rows(), out);
    return 1;
  }
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& app, const std::vector<std::string>& command_line) {
  auto o = std::make_shared<RunOptions>();
  auto* run = app.add_subcommand("run", "Run benchmark suites and write one results file");
  run->add_option("--suite", o->suites, "Comma-separated suites, or all")->default_str("all");
  run->add_flag("--quick", o->quick, "Quick sweep (the default)");
  run->add_flag("--full", o->full, "Full sweep of every size");
  auto* device = run->add_option("--device", o->device, "GPU index, all, or cpu (no GPU cases)")
                     ->default_str("0");
  auto* out =
      run->add_option("--out", o->out, "Results file (default results/<host>-<UTC time>.json)");
  run->add_option("--repetitions", o->repetitions, "Repetitions per benchmark")->default_str("5");
  run->add_option("--processes", o->processes,
                  "Spread the repetitions over this many fresh processes, one after another "
                  "(memory layout and "
                  "machine state drawn again in each: what compare needs to trust a change between "
                  "two files)")
      ->default_str("1");
  auto* remeasure = run->add_option(
      "--remeasure-unsteady", o->remeasure,
      "Measure a case again, in a fresh process with this many repetitions, when its repetitions "
      "spread by more than 20% (0: never; default from OFFLOADBENCH_REMEASURE_UNSTEADY, else 10 "
      "with "
      "one process and 0 with --processes)");
  auto* sizes = run->add_option(
      "--sizes", o->sizes,
      fmt::format("Replace the size sweep, e.g. 4KiB,1Mi,64M (K, M, G with or without i/iB are "
                  "binary multiples) — {}; other suites refuse it",
                  sizes_meanings()));
  run->add_option("--host-numa", o->host_numa,
                  "Host buffers of transfer cases on: local (the GPU's NUMA node), remote, a node "
                  "number, or all")
      ->default_str("local");
  run->add_option("--refine-crossovers", o->refine_rounds,
                  "Rounds of locating each GPU crossover (compute, mlp) by measuring inside its "
                  "bracket until it is "
                  "known to ±10% (0: interpolate between the sweep's sizes)")
      ->default_str(std::to_string(kDefaultRefinementRounds));
  run->add_option("--refine-at", o->refine_at, "")
      ->group("");  // a refinement round's child (cli/refine.h)
  run->add_option("--calibrated-by", o->calibrated_by, "")
      ->group("");  // later processes (cli/run_processes.h)
  run->add_flag("--measure-only", o->measure_only, "")->group("");  // every child
  run->add_option("benchmark_flags", o->benchmark_flags, "Google Benchmark flags, after --");
  return {run, [o, command_line, device, out, sizes, remeasure] {
            o->device_given = device->count() > 0;
            o->out_given = out->count() > 0;
            o->sizes_given = sizes->count() > 0;
            o->remeasure_given = remeasure->count() > 0;
            return execute_run(*o, command_line);
          }};
}

}  // namespace offloadbench::cli
