#include <sys/resource.h>
#include <sys/stat.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include "harness/results/results.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace {
nlohmann::json minimal_results() {
  return {{"context", {{"offloadbench", {{"schema_version", kResultsSchemaVersion}}}}},
          {"benchmarks",
           {{{"name", "a"}, {"run_type", "iteration"}, {"real_time", 1.5}, {"time_unit", "ns"}}}}};
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string load_error(const std::string& path) {
  try {
    load_results(path);
  } catch (const ResultsError& e) { return e.what(); }
  return "";
}
}  // namespace

TEST(Results, RoundTripKeepsEveryField) {
  const auto path = testing::temp_path("ob_roundtrip");
  auto doc = minimal_results();
  doc["benchmarks"][0]["bytes"] = 1ull << 40;
  doc["benchmarks"][0]["host_memory"] = "pinned";
  write_json_atomically(path, doc);
  EXPECT_EQ(load_results(path), doc);
  std::filesystem::remove(path);
}

TEST(Results, AWrittenFileHoldsNullWhereTheDocumentHadNaN) {
  const auto path = testing::temp_path("ob_nonfinite");
  auto doc = minimal_results();
  doc["benchmarks"][0]["bytes_per_second"] = std::nan("");
  write_json_atomically(path, doc);
  EXPECT_TRUE(load_results(path)["benchmarks"][0]["bytes_per_second"].is_null());
  std::filesystem::remove(path);
}

TEST(Results, NonFiniteNumbersBecomeNull) {
  nlohmann::json doc = {{"a", std::nan("")},
                        {"b", {1.0, std::numeric_limits<double>::infinity()}},
                        {"c", {{"d", -std::numeric_limits<double>::infinity()}}},
                        {"e", 2.5}};
  const auto clean = without_non_finite(doc);
  EXPECT_TRUE(clean["a"].is_null());
  EXPECT_TRUE(clean["b"][1].is_null());
  EXPECT_TRUE(clean["c"]["d"].is_null());
  EXPECT_EQ(clean["e"], 2.5);
  const auto text = clean.dump();
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  EXPECT_EQ(text.find("Infinity"), std::string::npos);
}

TEST(Results, AtomicWriteReplacesWholeFileAndLeavesNoTemporary) {
  const auto path = testing::temp_path("ob_atomic");
  write_text(path, "old contents");
  write_json_atomically(path, minimal_results());
  EXPECT_NO_THROW(load_results(path));
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    EXPECT_EQ(entry.path().string().find(path + ".tmp"), std::string::npos) << entry.path();
  std::filesystem::remove(path);
}

TEST(Results, FailedWriteNamesThePathAndKeepsTheOldFile) {
  EXPECT_THROW(write_json_atomically("/nonexistent-dir/x.json", minimal_results()),
               std::runtime_error);
  // A write that fails half-way (the file size limit, as a full disk would): the old file is whole,
  // the message names it, and no temporary is left beside it.
  const auto path = testing::temp_path("ob_keep_old");
  write_text(path, "old contents");
  auto big = minimal_results();
  big["context"]["padding"] = std::string(1 << 16, 'x');
  const auto previous = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &limit), 0);
  const rlimit small{4096, limit.rlim_max};
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    write_json_atomically(path, big);
  } catch (const std::runtime_error& e) { message = e.what(); }
  setrlimit(RLIMIT_FSIZE, &limit);
  std::signal(SIGXFSZ, previous);
  EXPECT_NE(message.find(path), std::string::npos) << message;
  std::ifstream in(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "old contents");
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    EXPECT_EQ(entry.path().string().find(path + ".tmp"), std::string::npos) << entry.path();
  std::filesystem::remove(path);
}

TEST(Results, ANewResultsFileIsAsReadableAsAnyOtherFile) {
  // mkstemp makes its temporary 0600: the file it becomes must get the umask's mode instead.
  const auto path = testing::temp_path("ob_mode");
  std::filesystem::remove(path);
  const mode_t mask = umask(022);
  write_json_atomically(path, minimal_results());
  umask(mask);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  std::filesystem::remove(path);
}

TEST(Results, TheLoaderCountsRowsFromZero) {
  auto doc = minimal_results();
  const auto good = doc["benchmarks"][0];
  doc["benchmarks"] = {
      good, good, {{"run_type", "iteration"}}};  // the third row, index 2, has no name
  try {
    check_results(doc, "f.json");
    FAIL() << "a row without a name was accepted";
  } catch (const ResultsError& e) {
    EXPECT_NE(std::string(e.what()).find("benchmark 2 has no 'name'"), std::string::npos)
        << e.what();
  }
}

TEST(Results, LoadRejectsBadFilesWithOneLineNamingFileAndProblem) {
  const auto path = testing::temp_path("ob_bad");
  const std::pair<std::string, std::string> cases[] = {
      {"", "empty file"},
      {"{\"context\": {", "not valid JSON"},
      {"not json at all", "not valid JSON"},
      {R"({"context": {"offloadbench": {"schema_version": 1}}, "benchmarks": [{"name": "a", "run_type": "iteration", "real_time": NaN}]})",
       "not valid JSON"},
      {"[]", "top level is not a JSON object"},
      {R"({"benchmarks": []})", "missing 'context'"},
      {R"({"context": {}, "benchmarks": []})", "context.offloadbench"},
      {R"({"context": {"offloadbench": {"schema_version": 99}}, "benchmarks": []})",
       "schema version 99"},
      {R"({"context": {"offloadbench": {"schema_version": 1}}})", "missing 'benchmarks'"},
      {R"({"context": {"offloadbench": {"schema_version": 1}}, "benchmarks": [{"run_type": "iteration"}]})",
       "has no 'name'"},
  };
  for (const auto& [text, expected] : cases) {
    write_text(path, text);
    const auto message = load_error(path);
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << "for " << text << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  std::filesystem::remove(path);
  EXPECT_NE(load_error(path).find("cannot open"), std::string::npos);
}

// Issue 38, item 13: a name holding CR, ESC [2K or BEL must not reach a terminal raw, where it
// could erase its own line and print a forged verdict in its place.
TEST(Printable, ControlCharactersAreEscapedAndPrintableTextKept) {
  EXPECT_EQ(printable("transfer/h2d/pinned/4KiB"), "transfer/h2d/pinned/4KiB");
  EXPECT_EQ(printable("\r\x1b[2K\aSLOWER"), "\\r\\x1b[2K\\x07SLOWER");
  EXPECT_EQ(printable("a\nb\tc"), "a\\nb\\tc");  // a name's newline would start a line of its own
  EXPECT_EQ(printable(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
  // Valid UTF-8 outside the controls passes: µ, →, and a 4-byte emoji.
  EXPECT_EQ(printable("1 \xc2\xb5s \xe2\x86\x92 \xf0\x9f\x9a\x80"),
            "1 \xc2\xb5s \xe2\x86\x92 \xf0\x9f\x9a\x80");
  // C1 controls (U+009B is CSI), line separators and bidi overrides as code points.
  EXPECT_EQ(printable("\xc2\x9b"
                      "2K"),
            "\\u009b2K");
  EXPECT_EQ(printable("a\xe2\x80\xa8"
                      "b\xe2\x80\xae"
                      "c\xe2\x81\xa6"),
            "a\\u2028b\\u202ec\\u2066");
}

TEST(Printable, BytesThatAreNotUtf8AreEscapedOneByOne) {
  EXPECT_EQ(printable("\x9b"
                      "2K"),
            "\\x9b2K");                            // a lone C1 byte: CSI to a Latin-1 terminal
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");  // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(printable("\xe2\x86"), "\\xe2\\x86");                    // cut short at the end
  EXPECT_EQ(printable("\xe2"
                      "A"),
            "\\xe2"
            "A");  // a lead byte without its continuation
}

TEST(Printable, MarkdownCellsAlsoEscapeThePipe) {
  EXPECT_EQ(markdown_cell("a|b\r"), "a\\|b\\\\r");
  EXPECT_EQ(markdown_cell("plain"), "plain");
}

// Issue 54, 3: a backtick in a name closed its code span and a raw <img> reached the job summary.
TEST(Printable, MarkdownCannotBeOpenedFromData) {
  EXPECT_EQ(markdown_cell("<img src=x>`*[a](b)"), "\\<img src\\=x\\>\\`\\*\\[a\\]\\(b\\)");
  EXPECT_EQ(markdown_code("a`b <img src=x>"), "``a`b <img src=x>``");
  EXPECT_EQ(markdown_code("``x"), "``` ``x ```");
  EXPECT_EQ(markdown_code("a|b"), "`a\\|b`");
  EXPECT_EQ(markdown_code("a|b", false), "`a|b`");
}

}  // namespace offloadbench
