// Shared by the analysis sources only (analysis.cpp, analysis_checks.cpp, analysis_headlines.cpp):
// the measured cases of a file and small field readers. Not part of the harness's interface.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench::detail {

// One benchmark case that ran and passed its checks: its first row (the registered fields) and
// every repetition's row and seconds per iteration. Rows point into the results document.
struct Measured {
  std::string name;
  const nlohmann::json* first_row;
  std::vector<double> seconds;
  std::vector<const nlohmann::json*> rows;
  const nlohmann::json& row() const { return *first_row; }
};
std::vector<Measured> measured_cases(const nlohmann::json& results);

// A numeric field (NaN when absent or not a number); a string field ("" when absent).
double number(const nlohmann::json& row, const std::string& key);
std::string text(const nlohmann::json& row, const std::string& key);

// From the file's context: GPU `device`'s PCIe rate per direction, its DRAM peak; 0 when unknown.
double link_bytes_per_second(const nlohmann::json& context, int device);
double dram_bytes_per_second(const nlohmann::json& context, int device);

// The `ceilings` section: every throughput with a known ceiling checked, the rows above listed.
nlohmann::json check_ceilings(const nlohmann::json& results);

// The copy-idiom sections (analysis_idioms.cpp): torch_idioms, pinning_at_scale and first_touch_at_scale,
// and their headline lines.
void add_torch_idioms(const std::vector<Measured>& cases, nlohmann::json& out);
void add_pinning_at_scale(const std::vector<Measured>& cases, nlohmann::json& out);
void idiom_lines(const nlohmann::json& analysis, std::vector<std::string>& out);
// The batches family (analysis_batches.cpp): per device, image and host memory, each GPU placement
// against a CPU normalize + fp32 copy over the batch sizes (the `batches` section); and one headline
// per crossover of the fp32 GPU normalize ("224x224x3 batches from pinned memory: send uint8 …").
nlohmann::json batches_crossovers(const std::vector<Measured>& cases);
std::string batches_line(const nlohmann::json& crossover, bool name_device);
void batches_lines(const nlohmann::json& analysis, std::vector<std::string>& out);

// The headline findings, one line each, for the terminal summary and report.html.
std::vector<std::string> headlines(const nlohmann::json& results, const nlohmann::json& analysis);

}  // namespace offloadbench::detail
