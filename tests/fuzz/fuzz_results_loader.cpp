// libFuzzer target for the results loader and what compare does with a loaded file. Optional and
// not part of the CMake build (it needs clang's libFuzzer); after scripts/test has built the
// harness:
//   clang++ -std=c++17 -g -O1 -fsanitize=fuzzer -I. tests/fuzz/fuzz_results_loader.cpp \
//       build/test/harness/liboffloadbench_harness.a -lfmt -o build/fuzz_results_loader
//   mkdir -p build/fuzz_corpus && build/fuzz_results_loader -max_total_time=60 build/fuzz_corpus
//   tests/data/results_corpus
// Every input must load or be rejected with ResultsError; anything else escaping is a crash it
// reports. What CI runs instead is tests/test_results_corpus.cpp over the kept corpus.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "harness/regression/compare.h"
#include "harness/results/results.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // load_results reads a path, so the input goes through a file like a real results file does.
  static const std::string path = "/tmp/offloadbench_fuzz_" + std::to_string(getpid()) + ".json";
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  try {
    const auto doc = offloadbench::load_for_comparison(path);
    offloadbench::CompareOptions options;
    options.allow_different_machines = true;
    offloadbench::comparison_markdown(offloadbench::compare_results(doc, doc, options, path, path),
                                      path, path);
  } catch (const offloadbench::ResultsError&) {}
  return 0;
}
