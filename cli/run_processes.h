// `run --processes N`: the repetitions of every benchmark spread over N fresh processes, run one
// after another, written as one results file. Repetitions inside one process share its memory
// layout (where each buffer landed, its alignment, its pages) and its few seconds of the machine's
// state; a second process draws them again, and on a shared machine single benchmarks move
// by 1.5-5x between processes while their repetitions inside each agree to 0.5%
// (lab/records/regression.md). Files whose repetitions come from several processes carry that
// spread, so `compare` of two such files judges a change against what really varies between runs.
// pyperf runs worker processes for the same reason.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/child_process.h"

namespace offloadbench::cli {

// How many repetitions each of `processes` runs: as equal as can be, the larger shares first
// (5 over 3: 2, 2, 1). Needs 1 <= processes <= repetitions.
std::vector<int> repetition_shares(int repetitions, int processes);

// One results document from the processes' documents, in order: their iteration rows with
// `process` (0-based) and repetition_index numbered again per benchmark across the processes; a
// skipped benchmark's row once; Google Benchmark's aggregate rows left out (each process's mean of
// its own share means nothing for the whole). The context is the first document's, with
// offloadbench.repetitions the sum asked of them all, offloadbench.processes = `planned`, and
// incomplete when any document is or fewer than `planned` came.
nlohmann::json merge_process_results(const std::vector<nlohmann::json>& documents, int planned,
                                     int repetitions, const std::vector<std::string>& command_line);

// A private folder beside `out` (.<name>.processes) for the children's files, removed with
// everything in it when this goes out of scope.
class ProcessFolder {
 public:
  explicit ProcessFolder(const std::string& out);
  ~ProcessFolder();
  ProcessFolder(const ProcessFolder&) = delete;
  ProcessFolder& operator=(const ProcessFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// This program's own path (/proc/self/exe), to start children of the same build.
std::string own_executable();

struct ProcessRunPlan {
  ChildRun child;  // what each process measures; its repetitions and out are set per process
  int repetitions = 5, processes = 1;
  int remeasure_repetitions =
      0;  // unsteady cases measured again with this many (cli/remeasure.h); 0: never
  int refine_rounds = 0;  // rounds of locating crossovers (cli/refine.h); 0: never
  std::map<std::string, std::string> refinable;  // family -> the sweep it refines
  std::string out;
  std::vector<std::string> command_line;  // ours, recorded in the file
};

// Runs the children (each `offloadbench run ... --repetitions SHARE --out TEMP`), rewrites `out`
// after each one with everything so far (marked incomplete until the last), then analyses and
// summarises as `run` does. Returns run's exit status: 0, 1 when a row failed validation or a
// process failed (what finished is kept), 128 + signal when interrupted (what finished is kept).
int run_in_processes(const ProcessRunPlan& plan);

}  // namespace offloadbench::cli
