// For the analysis sources and the families' analyses (family_analysis.h): the measured cases of a
// file and small field readers.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench {
struct FamilyAnalysis;
}

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

// The headline findings, one line each, for the terminal summary and report.html.
// `ours`: the file's own measured cases that broke no invariant.
std::vector<std::string> headlines(const nlohmann::json& results, const std::vector<Measured>& ours,
                                   const nlohmann::json& analysis,
                                   const std::vector<FamilyAnalysis>& families);

}  // namespace offloadbench::detail
