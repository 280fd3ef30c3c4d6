// Every family of benchmarks offloadbench knows (suites.cpp): the one place the command line learns
// which suites exist. The harness sees a suite only as a name and a registration function.
#pragma once
#include <vector>

#include "harness/suite.h"

namespace offloadbench {

const std::vector<Suite>& all_suites();  // in the order `run --suite all` runs them

}  // namespace offloadbench
