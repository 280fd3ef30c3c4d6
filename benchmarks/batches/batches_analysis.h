// The batches family's part of the analysis (harness/analysis/family_analysis.h): per device, image
// and host memory, each GPU placement against a CPU normalize + fp32 copy over the batch sizes (the
// `batches` section), and one headline per crossover of the fp32 GPU normalize ("224x224x3 batches
// from pinned memory: send uint8 …").
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/analysis/family_analysis.h"

namespace offloadbench {

FamilyAnalysis batches_analysis();

namespace detail {
nlohmann::json batches_crossovers(const std::vector<Measured>& cases);
std::string batches_line(const nlohmann::json& crossover, bool name_device);
void batches_lines(const nlohmann::json& analysis, std::vector<std::string>& out);
}  // namespace detail

}  // namespace offloadbench
