#include "cli/run_processes.h"
#include "cli/refine.h"
#include "cli/remeasure.h"

#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "benchmarks/family_analyses.h"
#include "cli/child_process.h"
#include "cli/interrupt.h"
#include "harness/analysis/analysis.h"
#include "cli/commands.h"
#include "harness/analysis/summary.h"
#include "harness/analysis/verdicts.h"
#include "harness/results/files.h"
#include "harness/results/results.h"

namespace offloadbench::cli {

namespace fs = std::filesystem;

std::vector<int> repetition_shares(int repetitions, int processes) {
  if (processes < 1 || processes > repetitions)
    throw std::invalid_argument(
        fmt::format("{} processes cannot share {} repetitions", processes, repetitions));
  std::vector<int> shares(static_cast<std::size_t>(processes), repetitions / processes);
  for (int i = 0; i < repetitions % processes; ++i) ++shares[static_cast<std::size_t>(i)];
  return shares;
}

nlohmann::json merge_process_results(const std::vector<nlohmann::json>& documents, int planned,
                                     int repetitions,
                                     const std::vector<std::string>& command_line) {
  if (documents.empty()) throw std::invalid_argument("no process wrote results");
  nlohmann::json merged = documents.front();
  merged["benchmarks"] = nlohmann::json::array();
  merged.erase("analysis");
  std::map<std::string, int> next_index;
  std::set<std::string> skipped;
  bool incomplete = static_cast<int>(documents.size()) < planned;
  for (std::size_t process = 0; process < documents.size(); ++process) {
    const auto& doc = documents[process];
    incomplete |= doc.at("context").at("offloadbench").value("incomplete", true);
    for (auto row : doc.at("benchmarks")) {
      if (row.value("run_type", "") == "aggregate") continue;
      const auto name = row.at("name").get<std::string>();
      if (row.value("skipped", false) && !skipped.insert(name).second) continue;
      row["process"] = process;
      row["repetitions"] = repetitions;
      if (row.contains("repetition_index")) row["repetition_index"] = next_index[name]++;
      merged["benchmarks"].push_back(std::move(row));
    }
  }
  auto& ob = merged["context"]["offloadbench"];
  ob["repetitions"] = repetitions;
  ob["processes"] = planned;
  ob["processes_finished"] = documents.size();
  ob["command_line"] = command_line;
  const auto& last = documents.back().at("context").at("offloadbench");
  if (last.contains("end_time_utc")) ob["end_time_utc"] = last["end_time_utc"];
  ob["incomplete"] = incomplete;
  if (!incomplete) ob.erase("stopped_because");
  return merged;
}

// The processes' own files go beside `out` (same file system), removed on every way out.

ProcessFolder::ProcessFolder(const std::string& out) {
  const fs::path target(out);
  path_ = make_owned_folder(target.parent_path().string(),
                            "." + target.filename().string() + ".processes");
}

ProcessFolder::~ProcessFolder() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

std::string own_executable() {
  std::error_code error;
  const auto path = fs::read_symlink("/proc/self/exe", error);
  if (error)
    throw std::runtime_error(
        fmt::format("cannot find this program's own path: {}", error.message()));
  return path.string();
}

int run_in_processes(const ProcessRunPlan& plan) {
  const auto shares = repetition_shares(plan.repetitions, plan.processes);
  const auto program = own_executable();
  OutputLock lock(plan.out);
  std::vector<nlohmann::json> documents;
  bool invalid_rows = false;
  std::string stopped_because;
  int stop_signal = 0;
  {
    StopSignals stop;  // Ctrl-C and SIGTERM stop the running process; what finished is kept
    const ProcessFolder folder(plan.out);
    std::mt19937_64 rng(std::random_device{}());
    for (std::size_t i = 0; i < shares.size(); ++i) {
      const auto stem = fmt::format("process{:03}", i + 1);
      const auto out = (folder.path() / (stem + ".json")).string();
      const auto log = (folder.path() / (stem + ".log")).string();
      auto child = plan.child;
      child.repetitions = shares[i];
      child.out = out;
      child.measure_only = true;
      // Later processes take the first one's iteration counts and set-up choices: without them each
      // process would search and plan again, which costs more than its measuring
      // (lab/records/regression.md).
      if (i > 0 && !documents.empty())
        child.calibrated_by = (folder.path() / "process001.json").string();
      const auto end = start_child_run(program, child, log, 0, &stop, rng);
      const bool wrote = fs::exists(out);
      if (wrote) {
        try {
          documents.push_back(load_results(out));
        } catch (const std::exception& e) {
          stopped_because =
              fmt::format("process {} wrote results that cannot be read: {}", i + 1, e.what());
          break;
        }
      }
      if (end.stop_signal) {
        stop_signal = end.stop_signal;
        stopped_because = "interrupted";
        break;
      }
      const auto last = last_log_line(log);
      if (end.status == 2 &&
          documents.empty()) {  // bad input only a process could see: its one line is ours
        fmt::print(stderr, "{}\n",
                   last.empty() ? "offloadbench: the first process refused its input" : last);
        return 2;
      }
      const auto log_said =
          last.empty() ? std::string() : fmt::format(" (its log ended: \"{}\")", last);
      if (end.status != 0 && end.status != 1) {  // 1: rows failed validation; the file is whole
        stopped_because = fmt::format("process {} of {} exited with status {}{}", i + 1,
                                      shares.size(), end.status, log_said);
        break;
      }
      if (!wrote) {
        stopped_because =
            fmt::format("process {} of {} wrote no results{}", i + 1, shares.size(), log_said);
        break;
      }
      invalid_rows |= end.status == 1;
      fmt::print(
          stderr,
          "offloadbench: process {} of {} done in {:.0f} s ({} repetition(s) of each benchmark)\n",
          i + 1, shares.size(), end.seconds, shares[i]);
      if (i + 1 < shares.size())  // what finished is on disk before the next process starts
        write_json_atomically(plan.out, merge_process_results(documents, plan.processes,
                                                              plan.repetitions, plan.command_line));
    }
    stop_signal = stop_signal ? stop_signal : stop.signal();
    if (stop_signal) stopped_because = "interrupted";
  }
  if (documents.empty()) {
    fmt::print(stderr, "offloadbench: {}; no results written\n",
               stopped_because.empty() ? "no process wrote results" : stopped_because);
    return stop_signal ? 128 + stop_signal : 1;
  }
  auto merged =
      merge_process_results(documents, plan.processes, plan.repetitions, plan.command_line);
  if (!stopped_because.empty()) {
    merged["context"]["offloadbench"]["incomplete"] = true;
    merged["context"]["offloadbench"]["stopped_because"] = stopped_because;
  }
  if (stopped_because.empty()) {
    RemeasurePlan again;
    again.child = plan.child;
    again.repetitions = plan.remeasure_repetitions;
    again.out = plan.out;
    merged = remeasure_unsteady(merged, again);
    RefinePlan refine;
    refine.child = plan.child;
    refine.repetitions = plan.repetitions;
    refine.out = plan.out;
    merged = refine_crossovers(merged, plan.refine_rounds, plan.refinable, child_round(refine));
  }
  try {
    merged["analysis"] = analyze(merged, family_analyses());
  } catch (const std::exception& e) {
    fmt::print(stderr, "offloadbench: analysis failed ({}); try 'offloadbench analyze {}'\n",
               e.what(), plan.out);
  }
  write_json_atomically(plan.out, merged);
  lock.release();
  if (!stopped_because.empty()) {
    fmt::print(stderr, "offloadbench: {}; what finished is in {}\n", stopped_because, plan.out);
    return stop_signal ? 128 + stop_signal : 1;
  }
  print_summary(stdout, merged, family_analyses(), {false, &default_reference_runs(), plan.out});
  fmt::print("results: {}\n", plan.out);
  if (invalid_rows) {
    fmt::print(stderr, "offloadbench: benchmark row(s) failed validation (see 'validated' in {})\n",
               plan.out);
    return 1;
  }
  return 0;
}

}  // namespace offloadbench::cli
