// The types docs/results.schema.json gives each field, checked on every file offloadbench loads.
// The schema is compiled in (generated header), so the C++ loader and plots/results.py apply one
// rule.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace offloadbench {

// docs/results.schema.json as built into this binary.
const nlohmann::json& results_schema();

// The first field of `doc` whose value the schema does not allow, as "where: problem", or "".
// Checks the fields present (type, enum, const, minimum, minLength, oneOf) down through properties
// and items; which fields must be present is check_results' business, so that older and partial
// files still load.
std::string schema_type_problem(const nlohmann::json& doc);

}  // namespace offloadbench
