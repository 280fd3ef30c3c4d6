// What a benchmark family adds to the generic analysis of a results file, declared by the family
// (benchmarks/<family>/<family>_analysis.cpp) and run by analyze() and print_summary(), which name
// no family. The generic part (speedups and crossovers between a compare_group's GPU and CPU views,
// ceilings, headline throughputs) needs nothing from a family but the fields on its rows.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/analysis/analysis_detail.h"
#include "harness/analysis/invariants.h"

namespace offloadbench {

struct FamilyAnalysis {
  std::string family;
  // The `analysis` sections this family fills; each starts as [] so a file without the family's
  // rows still has them (docs/results-schema.md). A non-empty one of `gpu_sections` means GPU
  // measurements.
  std::vector<std::string> sections;
  std::vector<std::string> gpu_sections;
  // Fills the family's sections from the measured cases; context is the file's context block.
  void (*analyze)(const std::vector<detail::Measured>& cases, const nlohmann::json& context,
                  nlohmann::json& analysis) = nullptr;
  // Headline lines printed before the generic crossovers (e.g. link rates) and after them; `cases`
  // are our own rows that broke no invariant.
  void (*lead_lines)(const std::vector<detail::Measured>& cases, const nlohmann::json& context,
                     const nlohmann::json& analysis, std::vector<std::string>& out) = nullptr;
  void (*lines)(const nlohmann::json& analysis, std::vector<std::string>& out) = nullptr;
  // The family's own self-checks, run with the generic ones (invariants.h).
  std::vector<Invariant> invariants;
  // Extra text in the terminal summary, after the headline throughputs (e.g. nvbandwidth-style
  // matrices).
  void (*print_summary)(std::FILE* out, const nlohmann::json& results) = nullptr;
};

using FamilyAnalyses = std::vector<FamilyAnalysis>;

}  // namespace offloadbench
