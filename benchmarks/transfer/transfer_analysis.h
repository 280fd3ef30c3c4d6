// The transfer family's part of the analysis (harness/analysis/family_analysis.h).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/analysis/family_analysis.h"

namespace offloadbench {

FamilyAnalysis transfer_analysis();

namespace detail {
// PyTorch's copy idioms and pinning at scale (transfer_idioms_analysis.cpp): the torch_idioms,
// pinning_at_scale and first_touch_at_scale sections, and their headline lines.
void add_torch_idioms(const std::vector<Measured>& cases, nlohmann::json& out);
void add_pinning_at_scale(const std::vector<Measured>& cases, nlohmann::json& out);
void idiom_lines(const nlohmann::json& analysis, std::vector<std::string>& out);
}  // namespace detail

}  // namespace offloadbench
