// `compare --history DIR`: how far each benchmark's floor (its fastest repetition) moves between
// runs of this machine when nothing changed. Some benchmarks' floors move with the machine's state
// — large memory-bound ones with the memory bus its other tenants share, page faults with the
// kernel — and two files alone cannot tell such a move from a regression; earlier runs can
// (lab/records/regression.md).
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench {

// Per benchmark, the standard deviation of one run's log floor around its level, from successive
// runs (in time order): 1.4826 · median |step| / √2, each run's floors first shifted by the run's
// median offset (the machine's state moves every benchmark together; compare allows for that
// already). Successive steps, not the spread of all runs, so that a real change in the history (one
// step) barely moves it. Benchmarks measured in fewer than 3 runs get none.
std::map<std::string, double> floor_step_spread(
    const std::vector<std::map<std::string, double>>& log_floors_by_run);

struct FloorHistory {
  std::string directory;
  std::size_t runs = 0;                  // results files used
  std::map<std::string, double> spread;  // floor_step_spread of those files
  std::vector<std::string> ignored;      // "file: why" for files left out
};

// Reads every *.json in `directory` (not recursive) measured on the machine of `fingerprint` with
// repetitions from several processes (run --processes), finished, and orders them by start time.
// Other files are left out and listed in `ignored`. Throws ResultsError when fewer than 3 remain or
// the directory cannot be read.
FloorHistory load_floor_history(const std::string& directory, const std::string& metric,
                                const nlohmann::json& fingerprint);

}  // namespace offloadbench
