// The results file: a superset of Google Benchmark's JSON ({context, benchmarks}) that every other
// part of offloadbench reads. Written atomically; loaded with checks that name the file and the problem.
// docs/results-schema.md lists every field; docs/results.schema.json is the machine-checkable form.
#pragma once
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace offloadbench {

inline constexpr int kResultsSchemaVersion = 1;

// A results file that cannot be used: the message names the file and the problem, on one line.
struct ResultsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Returns a copy in which every NaN or infinity (anywhere) is null: strict JSON has neither.
nlohmann::json without_non_finite(const nlohmann::json& value);

// Writes `doc` (made finite first) to a temporary file beside `path`, then renames it over `path`,
// so a reader never sees half a file. Throws std::runtime_error naming the path.
void write_json_atomically(const std::string& path, const nlohmann::json& doc);

// Reads and checks a results file: JSON syntax, schema version, context and benchmarks present,
// every row named. Throws ResultsError.
nlohmann::json load_results(const std::string& path);

// Checks an already parsed document the same way; `origin` names it in messages.
void check_results(const nlohmann::json& doc, const std::string& origin);

// Per-repetition rows of a document (run_type "iteration"), skipped rows included.
std::vector<nlohmann::json> iteration_rows(const nlohmann::json& doc);

}  // namespace offloadbench
