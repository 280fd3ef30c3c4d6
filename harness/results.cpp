#include "results.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace offloadbench {

nlohmann::json without_non_finite(const nlohmann::json& value) {
  if (value.is_number_float()) {
    const double v = value.get<double>();
    return std::isfinite(v) ? value : nlohmann::json(nullptr);
  }
  if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = value.begin(); it != value.end(); ++it) out[it.key()] = without_non_finite(it.value());
    return out;
  }
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : value) out.push_back(without_non_finite(item));
    return out;
  }
  return value;
}

void write_json_atomically(const std::string& path, const nlohmann::json& doc) {
  const std::string temporary = fmt::format("{}.tmp.{}", path, getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("cannot write '{}': {}", temporary, std::strerror(errno)));
    out << without_non_finite(doc).dump(2) << '\n';
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw std::runtime_error(fmt::format("writing '{}' failed: {}", temporary, std::strerror(errno)));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(temporary.c_str());
    throw std::runtime_error(fmt::format("cannot rename '{}' to '{}': {}", temporary, path, std::strerror(err)));
  }
}

void check_results(const nlohmann::json& doc, const std::string& origin) {
  auto fail = [&](const std::string& problem) { throw ResultsError(fmt::format("{}: {}", origin, problem)); };
  if (!doc.is_object()) fail("not a results file (top level is not a JSON object)");
  if (!doc.contains("context") || !doc["context"].is_object()) fail("missing 'context' object");
  if (!doc.contains("benchmarks") || !doc["benchmarks"].is_array()) fail("missing 'benchmarks' array");
  const auto& ctx = doc["context"];
  if (!ctx.contains("offloadbench") || !ctx["offloadbench"].is_object())
    fail("missing 'context.offloadbench' (not written by offloadbench?)");
  const auto& ob = ctx["offloadbench"];
  if (!ob.contains("schema_version") || !ob["schema_version"].is_number_integer())
    fail("missing 'context.offloadbench.schema_version'");
  const int version = ob["schema_version"].get<int>();
  if (version != kResultsSchemaVersion)
    fail(fmt::format("schema version {} is not supported (this build reads version {})", version,
                     kResultsSchemaVersion));
  std::size_t i = 0;
  for (const auto& row : doc["benchmarks"]) {
    if (!row.is_object() || !row.contains("name") || !row["name"].is_string())
      fail(fmt::format("benchmark {} has no 'name'", i));
    if (!row.contains("run_type") || !row["run_type"].is_string())
      fail(fmt::format("benchmark '{}' has no 'run_type'", row["name"].get<std::string>()));
    ++i;
  }
}

nlohmann::json load_results(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ResultsError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().empty()) throw ResultsError(fmt::format("{}: empty file", path));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    // e.what() names the byte; NaN and Infinity land here too (strict JSON has neither), and so
    // does a number too large for a double (out_of_range, not parse_error).
    throw ResultsError(fmt::format("{}: not valid JSON ({})", path, e.what()));
  }
  check_results(doc, path);
  return doc;
}

std::vector<nlohmann::json> iteration_rows(const nlohmann::json& doc) {
  std::vector<nlohmann::json> rows;
  for (const auto& row : doc.at("benchmarks"))
    if (row.value("run_type", "") == "iteration") rows.push_back(row);
  return rows;
}

}  // namespace offloadbench
