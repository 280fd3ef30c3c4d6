// The results file: a superset of Google Benchmark's JSON ({context, benchmarks}) that every other
// part of offloadbench reads. Written atomically; loaded with checks that name the file and the
// problem. docs/results-schema.md lists every field; docs/results.schema.json is the
// machine-checkable form.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench {

inline constexpr int kResultsSchemaVersion = 1;

// A results file that cannot be used: the message names the file and the problem, on one line.
struct ResultsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `text` (a name, reason or path taken from an input file) made safe to print on one line of a
// terminal or CI log: C0 controls (newline included), DEL, C1 controls, line separators and bidi
// overrides become \r, \n, \t, \xNN or \uNNNN, and bytes that are not UTF-8 become \xNN. Otherwise
// a name holding CR or ESC [2K could overwrite the line it is on and forge a verdict. Valid
// printable UTF-8 passes unchanged.
std::string printable(std::string_view text);

// printable(text) as plain Markdown text (a table cell): every ASCII punctuation character is
// backslash-escaped, so text from a file cannot add a column ('|'), open a code span, emphasis or a
// link, or put raw HTML (<img …>) into a CI job summary.
std::string markdown_cell(std::string_view text);

// printable(text) as a Markdown code span: fenced with more backticks than any run inside it, so a
// backtick in a name cannot close the span and let what follows be read as Markdown or HTML. In a
// table (GFM) '|' is escaped too, which GFM honours inside code spans.
std::string markdown_code(std::string_view text, bool in_table = true);

// Returns a copy in which every NaN or infinity (anywhere) is null: strict JSON has neither.
nlohmann::json without_non_finite(const nlohmann::json& value);

// Writes `doc` (made finite first) with write_file_atomically (harness/files.h): a temporary file
// beside `path` renamed over it, and only over a regular file or a new path (FileError otherwise).
void write_json_atomically(const std::string& path, const nlohmann::json& doc);

// Deeper JSON is refused before parsing: the recursive walks over a document would overflow the
// stack.
inline constexpr std::size_t kMaxNestingDepth = 64;

// How deeply arrays and objects nest in JSON text (brackets inside strings do not count).
std::size_t nesting_depth(const std::string& text);

// Reads and checks a results file: a regular file of bounded size, nesting depth, JSON syntax,
// schema version, context and benchmarks present, every row named, and every field of the type that
// docs/results.schema.json gives it. Throws ResultsError naming the file, the row and the field.
nlohmann::json load_results(const std::string& path);

// Checks an already parsed document the same way; `origin` names it in messages.
void check_results(const nlohmann::json& doc, const std::string& origin);

// Per-repetition rows of a document (run_type "iteration"), skipped rows included: copies, and
// pointers into `doc` (which must outlive them) for readers of large files.
std::vector<nlohmann::json> iteration_rows(const nlohmann::json& doc);
std::vector<const nlohmann::json*> iteration_row_pointers(const nlohmann::json& doc);

}  // namespace offloadbench
