// `compare --rerun`: re-measure only the benchmarks found SLOWER, with the same suites, mode, sizes,
// devices, repetitions and Google Benchmark flags as the NEW file was made with (read from its context).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench::cli {

// A --benchmark_filter value matching exactly these names: ^(a|b)$ with regex characters escaped.
std::string exact_name_filter(const std::vector<std::string>& names);

// Arguments after the executable for `offloadbench run` that re-measures `names` into `out`, as the run
// described by `context` (a results file's context) was made.
std::vector<std::string> rerun_arguments(const nlohmann::json& context, const std::vector<std::string>& names,
                                         const std::string& out);

// Runs `executable` with `arguments` (its stdout goes to our stderr, so that compare's own output stays
// clean) and returns its exit status; throws std::runtime_error when it cannot be started.
int run_child(const std::string& executable, const std::vector<std::string>& arguments);

}  // namespace offloadbench::cli
