#include "harness/results/results_schema.h"

#include <fmt/format.h>

#include "harness/results_schema_text.h"  // generated from docs/results.schema.json: kResultsSchemaText

namespace offloadbench {

namespace {

using json = nlohmann::json;

bool has_type(const json& value, const std::string& type) {
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  return true;
}

std::string type_name(const json& value) {
  if (value.is_number_integer()) return "an integer";
  if (value.is_number()) return "a number";
  return fmt::format("{} {}", value.is_object() || value.is_array() ? "an" : "a",
                     value.type_name());
}

// Integers compare as integers: 4294967297 is not 1 (a cast to int would make it so).
bool equal(const json& a, const json& b) {
  return a == b && a.is_number_integer() == b.is_number_integer();
}

// The problem with one value under one schema node, or "". The message starts with the path below
// this node (".bytes", "[3] ('name')") and is built only when there is a problem: files have 100k
// rows.
std::string problem(const json& value, const json& schema) {
  if (const auto ref = schema.find("$ref");
      ref != schema.end())  // "#/$defs/…", within this schema only
    return problem(value,
                   results_schema().at(json::json_pointer(ref->get<std::string>().substr(1))));
  if (const auto type = schema.find("type"); type != schema.end()) {
    bool ok = false;
    if (type->is_string())
      ok = has_type(value, *type);
    else
      for (const auto& t : *type) ok |= has_type(value, t);
    if (!ok) return fmt::format(" is {}, expected {}", type_name(value), type->dump());
  }
  if (const auto c = schema.find("const"); c != schema.end() && !equal(value, *c))
    return fmt::format(" is {}, expected {}", value.dump(), c->dump());
  if (const auto e = schema.find("enum"); e != schema.end()) {
    bool ok = false;
    for (const auto& allowed : *e) ok |= equal(value, allowed);
    if (!ok)
      return fmt::format(" is {}, expected one of {}", value.dump().substr(0, 80), e->dump());
  }
  if (const auto m = schema.find("minimum"); m != schema.end() && value.is_number() && value < *m)
    return fmt::format(" is {}, below the minimum {}", value.dump(), m->dump());
  if (const auto m = schema.find("minLength");
      m != schema.end() && value.is_string() && value.get_ref<const std::string&>().size() < *m)
    return fmt::format(" is shorter than {} character(s)", m->dump());
  if (const auto one_of = schema.find("oneOf"); one_of != schema.end()) {
    int matches = 0;
    for (const auto& option : *one_of) matches += problem(value, option).empty();
    if (matches != 1)
      return fmt::format(" is {}, which the schema does not allow", value.dump().substr(0, 80));
  }
  if (const auto props = schema.find("properties"); props != schema.end() && value.is_object())
    for (auto it = props->begin(); it != props->end(); ++it)
      if (const auto field = value.find(it.key()); field != value.end())
        if (auto p = problem(*field, it.value()); !p.empty())
          return fmt::format(".{}{}", it.key(), p);
  if (const auto items = schema.find("items"); items != schema.end() && value.is_array())
    for (std::size_t i = 0; i < value.size(); ++i)
      if (auto p = problem(value[i], *items); !p.empty()) {
        const bool named =
            value[i].is_object() && value[i].contains("name") && value[i]["name"].is_string();
        return fmt::format("[{}]{}{}", i,
                           named ? fmt::format(" ('{}')", value[i]["name"].get<std::string>()) : "",
                           p);
      }
  return "";
}

}  // namespace

const nlohmann::json& results_schema() {
  static const json schema = json::parse(kResultsSchemaText);
  return schema;
}

std::string schema_type_problem(const nlohmann::json& doc) {
  auto found = problem(doc, results_schema());
  if (found.empty()) return found;
  if (found[0] == '.')
    return found.substr(1);  // "benchmarks[3] ('a/b').bytes is a string, expected …"
  return "the document" + found;
}

}  // namespace offloadbench
