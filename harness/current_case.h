// The name of the benchmark case running on this thread, for code that needs it inside a case (the
// self-test's slowdown injection): Google Benchmark 1.7's State does not carry its name.
#pragma once
#include <string>

namespace offloadbench {

const std::string& current_case_name();  // "" outside a case

}  // namespace offloadbench
