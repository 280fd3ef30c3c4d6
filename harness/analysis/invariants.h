// Self-checks: rules that the timings of one results file must satisfy among themselves (a copy's
// device time is not longer than the host's wall time around it; an efficiency does not exceed its
// bound; the best of several shapes is not slower than one of them; ...). A row that breaks one is
// a measurement gone wrong, whatever its cause: analyze() lists it with the reason and leaves it
// out of every speedup, fit and headline. The generic rules read only fields documented in
// docs/results-schema.md; a family adds its own (FamilyAnalysis::invariants).
#pragma once
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/analysis/analysis_detail.h"

namespace offloadbench {

struct FamilyAnalysis;

// One row that breaks a rule; repetition -1: every repetition of the case.
struct BrokenRow {
  std::string name;
  int repetition = -1;
  std::string reason;
};

struct Invariant {
  std::string id;    // "device_within_host", stable: tests and tools key on it
  std::string rule;  // one line, for the summary and the schema
  std::vector<BrokenRow> (*check)(const std::vector<detail::Measured>& cases,
                                  const nlohmann::json& context) = nullptr;
  // A rule that compares cases with each other runs after the rules on single rows and cases, over
  // the rows that passed them: a comparison with an unsteady or impossible row says nothing.
  bool compares_cases = false;
};

// The rules that need nothing from a family.
const std::vector<Invariant>& generic_invariants();

// The coefficient of variation of a case's repetitions when it is above
// invariant_limits::kUnsteadyCv (three repetitions or more), else nullopt: the `steady` rule, and
// what `run` measures again.
std::optional<double> unsteady_cv(const detail::Measured& c);

// Rows measured by another tool beside ours (series "pytorch"/"numpy", or "anchor": true): drawn
// and compared, never pooled into our own fits and findings.
bool is_anchor_row(const nlohmann::json& row);

// Every rule (generic, then each family's) run over `cases`.
struct InvariantReport {
  nlohmann::json section;                        // analysis.invariants (docs/results-schema.md)
  std::set<std::pair<std::string, int>> broken;  // (name, repetition); -1: the whole case
};
InvariantReport check_invariants(const std::vector<detail::Measured>& cases,
                                 const nlohmann::json& context,
                                 const std::vector<FamilyAnalysis>& families);

// `cases` without the broken rows (a case left with none is dropped) and, when `ours_only`, without
// the anchors' rows.
std::vector<detail::Measured> without_broken(const std::vector<detail::Measured>& cases,
                                             const std::set<std::pair<std::string, int>>& broken,
                                             bool ours_only);

// Tolerances, named once: the rules' margins for noise between two timings of the same thing.
namespace invariant_limits {
constexpr double kDeviceOverHost = 1.10;  // device time ≤ 1.1 × host time of the same operation
constexpr double kEfficiency = 1.05;   // efficiency ≤ 1.05 of its bound; rate ≤ 1.05 × ceiling
constexpr double kViewSlack = 1.05;    // a view with transfers ≥ kernel-only time ÷ 1.05
constexpr double kStageTime = 1.10;    // a composite's stage time within 10% of its plain twin
constexpr double kSameTraffic = 1.10;  // kernels moving the same bytes agree within 10%
constexpr double kDramTrafficBytes =
    256.0 * (1 << 20);                // ... from this traffic on: past any CPU's last cache
constexpr double kUnsteadyCv = 0.20;  // coefficient of variation above this: unsteady
}  // namespace invariant_limits

}  // namespace offloadbench
