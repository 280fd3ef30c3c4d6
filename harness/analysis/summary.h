// The terminal summary (`summary`, and the end of `run` and `analyze`). Its first screen answers
// "are my numbers right, and where does the GPU win": a verdict per headline figure with its cause
// (verdicts.h), invalid rows with their reasons, one line per compare group with its crossover
// against the strongest CPU measured. `all` adds every table and finding: headline throughputs,
// the families' own text, what was skipped and why, the self-checks, the analysis's findings.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench {

// `families` may add text of their own after the headline throughputs (family_analysis.h).
struct FamilyAnalysis;
struct ReferenceRun;
struct SummaryOptions {
  bool all = false;
  const std::vector<ReferenceRun>* references =
      nullptr;       // what verdicts compare with (none: ceilings alone)
  std::string file;  // the results file, for the "--all" hint
};
constexpr std::size_t kSummaryColumns =
    100;  // the first screen's lines are cut to this many columns
void print_summary(std::FILE* out, const nlohmann::json& results,
                   const std::vector<FamilyAnalysis>& families, const SummaryOptions& options = {});

// The first screen alone (print_summary prints it first).
void print_first_screen(std::FILE* out, const nlohmann::json& results,
                        const SummaryOptions& options);

// `line` cut to `columns` characters (UTF-8 code points), "…" marking the cut.
std::string fit_columns(const std::string& line, std::size_t columns = kSummaryColumns);

// Median of a numeric field over the non-skipped per-repetition rows named `name`; NaN when none.
double median_of(const nlohmann::json& results, const std::string& name, const std::string& field);

}  // namespace offloadbench
