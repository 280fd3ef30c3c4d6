// Crossovers found, not interpolated: the sweep values `run` measures next, so that a crossover
// whose bracket (the measured sizes either side of it) is wider than kLocatedCrossoverRatio narrows
// by bisection on a log scale, round after round, until it is located or the rounds run out. The
// refined cases are rows like any other (with `refinement_round`), so every view, chart and check
// sees them.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench {

// compare_group -> sweep values to measure in it (ascending, no repeats).
using RefinementSizes = std::map<std::string, std::vector<std::uint64_t>>;

// How many rounds `run` refines by default, each a fresh process measuring one size per open
// bracket: a quick sweep's 64× bracket narrows to ±10% in five, its widest (1Ki–16Mi elements) in
// seven.
constexpr int kDefaultRefinementRounds = 8;

// The next round's values: for every crossover of the document's analysis that is a crossover, not
// located, of a family named in `refinable` with that family's sweep (family -> sweep, e.g.
// "compute" -> "elements"), the geometric middle of its bracket, rounded to a whole number (where
// the group measured it already but it gave no point, a case too unsteady to pair, the middles of
// both halves); none where the bracket is within kLocatedCrossoverRatio or no whole number lies
// inside.
RefinementSizes refinement_sizes(const nlohmann::json& document,
                                 const std::map<std::string, std::string>& refinable);

// "GROUP=V,V;GROUP=V" (run --refine-at) and back; parse throws std::invalid_argument naming the
// text.
std::string format_refinement(const RefinementSizes& sizes);
RefinementSizes parse_refinement(const std::string& text);

}  // namespace offloadbench
