// The peer family's figures as nvbandwidth prints them: one GPU x GPU matrix per testcase (row: the
// GPU that runs the copy or the chase, column: its peer; one row for the per-GPU patterns), the
// median of each cell's repetitions, in GB/s (latency in ns). N/A where nothing was measured.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/analysis/family_analysis.h"

namespace offloadbench {

struct PeerMatrix {
  std::string testcase;   // nvbandwidth's name
  bool latency = false;   // cells in ns, else GB/s
  bool one_row = false;   // per-GPU patterns: one row, a column per GPU
  std::vector<int> gpus;  // rows and columns, sorted
  std::vector<std::vector<double>>
      cells;  // [row][column]; NaN: not measured (skipped, waived, diagonal)
};

// Every peer testcase of `results` with at least one measured cell, in nvbandwidth's order of first
// appearance. Only the largest size of a testcase is shown (nvbandwidth measures one).
std::vector<PeerMatrix> peer_matrices(const nlohmann::json& results);

// The matrices, as text (nothing when the file has no measured peer row).
void print_peer_matrices(std::FILE* out, const nlohmann::json& results);

// The peer family's part of the analysis: the matrices in the terminal summary.
FamilyAnalysis peer_analysis();

}  // namespace offloadbench
