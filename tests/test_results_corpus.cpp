// The results loader never crashes: every file of the generated corpus (tests/data/results_corpus,
// made by tests/data/make_results_corpus.py) and thousands of seeded mutations of a valid file
// either load and compare, or are rejected with a ResultsError naming the file. Any other exception
// fails.
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "harness/regression/compare.h"
#include "harness/regression/history.h"
#include "harness/results/results.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace {

enum class Outcome { loaded, rejected };

// Everything compare and history do with a file, short of the terminal output.
Outcome feed(const std::string& path) {
  try {
    const auto doc = load_for_comparison(path);
    for (const char* metric : {"real_time", "bytes_per_second"})
      benchmark_samples(doc, metric, path);
    CompareOptions options;
    options.allow_different_machines = true;
    const auto c = compare_results(doc, doc, options, path, path);
    comparison_markdown(c, path, path);
    to_json(c);
  } catch (const ResultsError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return Outcome::rejected;
  }
  return Outcome::loaded;
}

// history reads the same file from a directory of its own.
void feed_history(const std::string& path) {
  const auto dir = std::filesystem::path(testing::temp_path("ob_corpus_history"));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(path, dir / "run.json",
                             std::filesystem::copy_options::overwrite_existing);
  try {
    const auto h = load_history(dir.string(), "real_time", false, ChangePointOptions{});
    to_json(h);
  } catch (const ResultsError&) {}
  std::filesystem::remove_all(dir);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST(ResultsCorpus, EveryFileLoadsOrIsRejectedWithAResultsError) {
  const std::filesystem::path corpus = OFFLOADBENCH_TEST_DATA "/results_corpus";
  int loaded = 0, rejected = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    const auto path = entry.path().string();
    try {
      (feed(path) == Outcome::loaded ? loaded : rejected)++;
      feed_history(path);
    } catch (const std::exception& e) {
      ADD_FAILURE() << path << " escaped as " << typeid(e).name() << ": " << e.what();
    }
  }
  EXPECT_GT(loaded, 0);
  EXPECT_GT(rejected, 50);
  std::cout << "corpus: " << loaded << " loaded, " << rejected << " rejected\n";
}

TEST(ResultsCorpus, SeededMutationsOfAValidFileNeverEscape) {
  const auto seed = read_text(OFFLOADBENCH_TEST_DATA "/results_corpus/valid.json");
  ASSERT_FALSE(seed.empty());
  const auto path = testing::temp_path("ob_mutation");
  std::mt19937 rng(20261122);
  const std::string alphabet = "{}[]\",:0123456789.eE-+ntfalsruNI\\ \n";
  for (int i = 0; i < 1000; ++i) {
    std::string text = seed;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const std::size_t pos = rng() % text.size();
      switch (rng() % 4) {
        case 0:
          text[pos] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          text.insert(pos, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 2:
          text.erase(pos, 1);
          break;
        default:
          text.resize(pos);
          break;  // truncated write
      }
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    try {
      feed(path);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "mutation " << i << " escaped: " << e.what() << "\n" << text;
      break;
    }
  }
  std::filesystem::remove(path);
}

}  // namespace offloadbench
