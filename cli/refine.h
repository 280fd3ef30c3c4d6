// `run` locates its crossovers instead of interpolating them: after the sweep (and the unsteady
// cases' second measurement), each crossover of a refinable family that is not yet located gets the
// geometric middle of its bracket measured, in a fresh process, round after round
// (harness/analysis/refinement.h).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/child_process.h"
#include "harness/analysis/refinement.h"

namespace offloadbench::cli {

// Measures one round: the cases of `sizes`, returned as a results document; nullopt when it failed
// (what was refined so far stays).
using MeasureRound =
    std::function<std::optional<nlohmann::json>(const RefinementSizes& sizes, int round)>;

// `doc` with up to `rounds` rounds of refinement rows appended (each iteration row with
// `refinement_round`), stopping early once no crossover has anything left to measure. `refinable`:
// family -> the sweep its registration refines (Suite::refinable_sweep). The analysis is computed
// afresh for each round; the caller analyses the result once more.
nlohmann::json refine_crossovers(nlohmann::json doc, int rounds,
                                 const std::map<std::string, std::string>& refinable,
                                 const MeasureRound& measure);

struct RefinePlan {
  ChildRun child;  // what the run measured (device, mode); suites, repetitions and out are set here
  int repetitions = 5;
  std::string out;  // the results file: the children's files go beside it
};

// A MeasureRound that starts `offloadbench run --refine-at …` as a child, as remeasure does.
MeasureRound child_round(const RefinePlan& plan);

}  // namespace offloadbench::cli
