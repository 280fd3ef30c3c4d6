// The short terminal summary at the end of `run`: headline throughputs (rows registered with a
// "headline" field), what was skipped and why, and what failed validation.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench {

// `families` may add text of their own after the headline throughputs (family_analysis.h).
struct FamilyAnalysis;
void print_summary(std::FILE* out, const nlohmann::json& results, const std::vector<FamilyAnalysis>& families);

// Median of a numeric field over the non-skipped per-repetition rows named `name`; NaN when none.
double median_of(const nlohmann::json& results, const std::string& name, const std::string& field);

}  // namespace offloadbench
