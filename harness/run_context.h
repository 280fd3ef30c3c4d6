// The `context` block offloadbench adds to every results file: who ran what, where, and a machine
// fingerprint that later comparisons use to refuse apples-to-oranges.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/suite.h"

namespace offloadbench {

struct RunDescription {
  std::vector<std::string> suites;
  std::string mode;  // "quick" or "full"
  int repetitions = 0;
  std::string devices;  // as given to --device
  std::vector<std::string> command_line;
  std::string host_numa = "local";  // as given to --host-numa
};

// {offloadbench: {...}, host: {...}, cuda: {...}, machine_fingerprint: {...}}
nlohmann::json make_run_context(const RunDescription& run);

// GPU model(s), driver, CUDA runtime and CPU model, plus a stable hash of them ("id").
nlohmann::json machine_fingerprint();

// Version and build facts compiled in (see harness/CMakeLists.txt).
std::string offloadbench_version();
std::string offloadbench_git_sha();
std::string offloadbench_build_type();

}  // namespace offloadbench
