// `offloadbench history DIR` over a tree of machines, as the nightly workflow keeps it
// (DIR/<fingerprint id>/*.json): each machine's history on its own, and the steps that appeared at
// the same commit on several machines named once ("appeared in abc123 on 3 of 4 machines"), since a
// step that several machines show is the code's, and one that only one shows is likelier its own.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/regression/history.h"

namespace offloadbench {

struct MachineHistory {
  std::string machine;  // the folder's name (the fingerprint id in the nightly tree)
  std::string label;  // host · GPU · driver (or host · CPU · no GPU), from the first file read
  History history;
};

// One step (benchmark, commit, direction) seen on more than one machine.
struct SharedStep {
  std::string benchmark, git_sha,
      previous_git_sha;  // previous_git_sha: of the first machine listed
  bool slower = false;
  std::vector<std::string> machines;  // folders where it appeared, in the tree's order
  std::size_t machines_measured = 0;  // machines whose history has this benchmark at all
  double smallest_change = 0, largest_change = 0;  // after / before − 1, over those machines
};

struct HistoryTree {
  std::string directory;
  std::vector<MachineHistory> machines;  // sorted by folder name
  std::vector<std::string> ignored;      // "folder: why" for machines left out
  std::vector<SharedStep> shared_steps;  // slower first, then by how many machines, then name
};

// Whether DIR is a tree of machines: it has no *.json of its own, and a subfolder that has.
bool is_history_tree(const std::string& directory);

// Every subfolder of DIR with *.json files, each read as load_history reads a folder. A machine
// whose folder cannot be read (a bad file, mixed machines) is left out and named in `ignored` with
// the reason; throws ResultsError when no machine can be read.
HistoryTree load_history_tree(const std::string& directory, const std::string& metric,
                              bool allow_different_machines, const ChangePointOptions& options);

// The steps found at the same commit, in the same direction, on at least two machines.
std::vector<SharedStep> shared_steps(const std::vector<MachineHistory>& machines);

// "host · GPU model(s) · driver" from a history's first file, or "host · CPU · no GPU".
std::string machine_label(const History& history);

void print_history_tree(std::FILE* out, const HistoryTree& tree, bool every_benchmark);

// {directory, metric, …, machines: [{machine, label, …each machine's to_json(History) fields}],
//  shared_change_points: [...], ignored: [...]}.
nlohmann::json to_json(const HistoryTree& tree);

}  // namespace offloadbench
