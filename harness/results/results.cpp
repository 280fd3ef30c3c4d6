#include "harness/results/results.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>

#include <fmt/format.h>

#include "harness/results/files.h"
#include "harness/results/results_schema.h"

namespace offloadbench {

namespace {

// Length of the UTF-8 sequence at text[i] and its code point, or 0 when it is not valid UTF-8
// (overlong forms, surrogates and code points above U+10FFFF included).
std::size_t utf8_sequence(std::string_view text, std::size_t i, char32_t& code_point) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned lead = byte(0);
  const std::size_t length = lead >= 0xc2 && lead <= 0xdf   ? 2
                             : lead >= 0xe0 && lead <= 0xef ? 3
                             : lead >= 0xf0 && lead <= 0xf4 ? 4
                                                            : 0;
  if (length == 0 || i + length > text.size()) return 0;
  code_point = lead & (0x7f >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xc0) != 0x80) return 0;
    code_point = code_point << 6 | (byte(k) & 0x3f);
  }
  const char32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code_point < smallest[length] || code_point > 0x10ffff ||
      (code_point >= 0xd800 && code_point <= 0xdfff))
    return 0;
  return length;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x80) {  // C0 control or DEL
      out += c == '\n'   ? "\\n"
             : c == '\r' ? "\\r"
             : c == '\t' ? "\\t"
                         : fmt::format("\\x{:02x}", c);
      ++i;
    } else if (char32_t cp = 0; const auto length = utf8_sequence(text, i, cp)) {
      const bool control = cp <= 0x9f || cp == 0x2028 || cp == 0x2029 ||
                           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
      if (control)
        out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(cp));
      else
        out.append(text, i, length);
      i += length;
    } else {
      out += fmt::format("\\x{:02x}",
                         c);  // a lone byte: a C1 control to a Latin-1 terminal (0x9b is CSI)
      ++i;
    }
  }
  return out;
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char c : printable(text)) {
    if (std::ispunct(static_cast<unsigned char>(c)))
      out += '\\';  // CommonMark: any ASCII punctuation
    out += c;
  }
  return out;
}

std::string markdown_code(std::string_view text, bool in_table) {
  std::string inner;
  std::size_t run = 0, longest = 0;
  for (const char c : printable(text)) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (c == '|' && in_table) inner += '\\';
    inner += c;
  }
  const std::string fence(longest + 1, '`');
  // A span whose text starts or ends with a backtick needs a space there; one space each side is
  // dropped.
  const bool pad =
      !inner.empty() && (inner.front() == '`' || inner.back() == '`' || inner.front() == ' ');
  return pad ? fence + " " + inner + " " + fence : fence + inner + fence;
}

nlohmann::json without_non_finite(const nlohmann::json& value) {
  if (value.is_number_float()) {
    const double v = value.get<double>();
    return std::isfinite(v) ? value : nlohmann::json(nullptr);
  }
  if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = value.begin(); it != value.end(); ++it)
      out[it.key()] = without_non_finite(it.value());
    return out;
  }
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : value) out.push_back(without_non_finite(item));
    return out;
  }
  return value;
}

namespace {
bool all_finite(const nlohmann::json& value) {
  if (value.is_number_float()) return std::isfinite(value.get<double>());
  if (value.is_structured())
    for (const auto& item : value)
      if (!all_finite(item)) return false;
  return true;
}
}  // namespace

void write_json_atomically(const std::string& path, const nlohmann::json& doc) {
  // The copy without NaN/Infinity only when there is one: a large document is then dumped as it is.
  if (all_finite(doc))
    write_file_atomically(path, doc.dump(2) + "\n");
  else
    write_file_atomically(path, without_non_finite(doc).dump(2) + "\n");
}

std::size_t nesting_depth(const std::string& text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // skip the escaped character
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

namespace {

// Every reader pools the iteration rows of one name as repetitions of one case: rows of one name
// with different units or thread counts (a merged or edited file) would be pooled as if alike, and
// a time without its unit would be read as nanoseconds. "" when the rows are consistent.
std::string rows_problem(const nlohmann::json& rows) {
  std::map<std::string, std::size_t> first;  // name -> its first iteration row
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const auto& name = row["name"].get_ref<const std::string&>();
    const bool timed = (row.contains("real_time") && row["real_time"].is_number()) ||
                       (row.contains("cpu_time") && row["cpu_time"].is_number());
    if (timed && !row.contains("time_unit"))
      return fmt::format("benchmarks[{}] ('{}') has a time but no 'time_unit'", i, printable(name));
    if (row["run_type"] != "iteration") continue;
    const auto [found, added] = first.emplace(name, i);
    if (added) continue;
    const auto& other = rows[found->second];
    for (const char* key : {"time_unit", "threads"}) {
      const auto mine = row.value(key, nlohmann::json()),
                 theirs = other.value(key, nlohmann::json());
      if (mine != theirs)
        return fmt::format(
            "benchmarks[{}] ('{}').{} is {}, but benchmarks[{}] of the same name has {} (the rows "
            "of "
            "one name are repetitions of one case and must agree)",
            i, printable(name), key, mine.dump(), found->second, theirs.dump());
    }
  }
  return "";
}

}  // namespace

void check_results(const nlohmann::json& doc, const std::string& origin) {
  auto fail = [&](const std::string& problem) {
    throw ResultsError(fmt::format("{}: {}", origin, problem));
  };
  if (!doc.is_object()) fail("not a results file (top level is not a JSON object)");
  if (!doc.contains("context") || !doc["context"].is_object()) fail("missing 'context' object");
  if (!doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    fail("missing 'benchmarks' array");
  const auto& ctx = doc["context"];
  if (!ctx.contains("offloadbench") || !ctx["offloadbench"].is_object())
    fail("missing 'context.offloadbench' (not written by offloadbench?)");
  const auto& ob = ctx["offloadbench"];
  if (!ob.contains("schema_version") || !ob["schema_version"].is_number_integer())
    fail("missing 'context.offloadbench.schema_version'");
  // Compared as JSON integers: 4294967297 must not pass as 1 through a cast to int.
  if (ob["schema_version"] != kResultsSchemaVersion)
    fail(fmt::format("schema version {} is not supported (this build reads version {})",
                     ob["schema_version"].dump(), kResultsSchemaVersion));
  std::size_t i = 0;
  for (const auto& row : doc["benchmarks"]) {
    if (!row.is_object() || !row.contains("name") || !row["name"].is_string())
      fail(fmt::format("benchmark {} has no 'name'", i));
    if (!row.contains("run_type") || !row["run_type"].is_string())
      fail(fmt::format("benchmark '{}' has no 'run_type'", row["name"].get<std::string>()));
    ++i;
  }
  if (auto problem = schema_type_problem(doc); !problem.empty()) fail(problem);
  if (auto problem = rows_problem(doc["benchmarks"]); !problem.empty()) fail(problem);
}

nlohmann::json load_results(const std::string& path) {
  std::string text;
  try {
    text = read_regular_file(path);
  } catch (const FileError& e) { throw ResultsError(e.what()); }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw ResultsError(fmt::format("{}: empty file", path));
  if (nesting_depth(text) > kMaxNestingDepth)
    throw ResultsError(
        fmt::format("{}: JSON nested deeper than {} levels (a results file needs fewer than 10)",
                    path, kMaxNestingDepth));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // e.what() names the byte; NaN and Infinity land here too (strict JSON has neither), and so
    // does a number too large for a double (out_of_range, not parse_error).
    throw ResultsError(fmt::format("{}: not valid JSON ({})", path, e.what()));
  }
  check_results(doc, path);
  return doc;
}

std::vector<const nlohmann::json*> iteration_row_pointers(const nlohmann::json& doc) {
  std::vector<const nlohmann::json*> rows;
  for (const auto& row : doc.at("benchmarks")) {
    const auto type =
        row.find("run_type");  // no string copied: this runs once per row of large files
    if (type != row.end() && type->is_string() &&
        type->get_ref<const std::string&>() == "iteration")
      rows.push_back(&row);
  }
  return rows;
}

std::vector<nlohmann::json> iteration_rows(const nlohmann::json& doc) {
  std::vector<nlohmann::json> rows;
  for (const auto& row : doc.at("benchmarks"))
    if (row.value("run_type", "") == "iteration") rows.push_back(row);
  return rows;
}

}  // namespace offloadbench
