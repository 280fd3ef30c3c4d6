// Parsing of the options that several subcommands share (--suite, --device).
#pragma once
#include <string>
#include <vector>

#include "harness/suite.h"

namespace offloadbench::cli {

// "all" or a comma-separated list of suite names; throws UsageError naming an unknown one.
std::vector<const Suite*> select_suites(const std::string& text);

// --sizes for these suites: throws UsageError naming the suites whose sweeps are fixed (they would
// ignore it), with what it sets in the others.
void check_sizes_apply(const std::vector<const Suite*>& suites);

// One line per suite that takes --sizes: "transfer: bytes per host<->device copy; …".
std::string sizes_meanings();

// "cpu" → {}, "all" → every visible GPU, "N" → {N}, "N,M,..." → those GPUs. With no GPU visible, 0
// and "all" select GPU 0 so that its cases are recorded as skipped with the reason. Throws
// UsageError when N is out of range.
std::vector<int> select_devices(const std::string& text);

}  // namespace offloadbench::cli
