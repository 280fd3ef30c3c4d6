// libFuzzer target for what offloadbench reads from users: a results file (through a real file, as
// load_results reads one: size cap, nesting bound, JSON, schema types), a --sizes list and the
// Google Benchmark flags after --. Each input must load or be refused with the documented
// exception; a crash, a sanitizer report or any other exception is a finding. Built and run by
// scripts/fuzz (CI: 45 s).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "cli/benchmark_flags.h"
#include "cli/commands.h"
#include "harness/results/results.h"
#include "harness/results/sizes.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  static const std::string path = "/tmp/offloadbench_fuzz_" + std::to_string(getpid()) + ".json";
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  try {
    const auto doc = offloadbench::load_results(path);
    offloadbench::write_json_atomically(path, doc);  // what analyze does with a file it accepted
  } catch (const offloadbench::ResultsError&) {}
  try {
    offloadbench::parse_size_list(text);
  } catch (const std::invalid_argument&) {}
  try {
    offloadbench::cli::check_benchmark_flags({text});
  } catch (const offloadbench::cli::UsageError&) {}
  return 0;
}
