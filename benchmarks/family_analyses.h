// What every family adds to the analysis of a results file, in the order of the suites: pass it to
// analyze() and print_summary() (harness/analysis). The list is generated
// (benchmarks/CMakeLists.txt).
#pragma once
#include "harness/analysis/family_analysis.h"

namespace offloadbench {

const FamilyAnalyses& family_analyses();

}  // namespace offloadbench
