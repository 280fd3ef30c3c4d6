// A suite is a family of benchmarks (transfer, streams, compute, mlp): a name and a function that
// registers its cases. The harness knows no suite by name; benchmarks/suites.h lists them.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/numa.h"

namespace offloadbench {

struct RunConfig {
  bool quick = true;             // --quick (default) or --full
  std::vector<int> gpu_devices;  // GPU indices to register GPU cases for; empty with --device cpu
  std::optional<std::vector<std::uint64_t>> sizes;  // --sizes: overrides byte-size sweeps
  HostNumaOption host_numa;  // --host-numa: where transfer cases put their host buffers
  // Crossover refinement (run's extra rounds, harness/analysis/refinement.h): compare_group ->
  // sweep values inside a crossover's bracket. When set, a suite registers those cases of those
  // groups and nothing else (one whose sweeps cannot be refined registers nothing).
  std::optional<std::map<std::string, std::vector<std::uint64_t>>> refine;

  // What tells one GPU's case names from another's: "/gpu:1" when the run has several GPUs, else
  // "".
  std::string gpu_suffix(int device) const {
    return gpu_devices.size() > 1 ? "/gpu:" + std::to_string(device) : "";
  }
};

struct Suite {
  std::string name;
  std::string description;
  std::function<void(const RunConfig&)> register_cases;  // calls register_case() once per case
  // What `--sizes` sets in this suite ("bytes per copy"); empty: its sweeps are fixed and --sizes
  // is refused for it rather than silently ignored.
  std::string sizes_meaning;
  // The sweep (a row's `sweep`, e.g. "elements") whose crossovers run refines for this suite, whose
  // registration then honours RunConfig::refine; empty: its crossovers are left as measured.
  std::string refinable_sweep;
};

}  // namespace offloadbench
