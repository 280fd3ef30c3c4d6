// Running offloadbench (or a program that behaves as it) as a child process: `ab` runs BASE and NEW
// this way, each round in fresh processes, restricted to chosen benchmarks by an exact-name filter.
#pragma once
#include <string>
#include <vector>

namespace offloadbench::cli {

// A --benchmark_filter value matching exactly these names: ^(a|b)$ with regex characters escaped.
std::string exact_name_filter(const std::vector<std::string>& names);

// Runs `executable` with `arguments` and returns its exit status (128 + signal when killed). Its stdout
// and stderr go to `log_path` when given, a new file (create_new_file: never an existing file or a
// link, FileError), else stdout goes to our stderr so that our own output stays clean. Throws
// std::runtime_error when it cannot be started.
int run_child(const std::string& executable, const std::vector<std::string>& arguments,
              const std::string& log_path = "");

}  // namespace offloadbench::cli
