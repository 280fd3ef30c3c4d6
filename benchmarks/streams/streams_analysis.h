// The streams family's part of the analysis (harness/analysis/family_analysis.h).
#pragma once
#include "harness/analysis/family_analysis.h"

namespace offloadbench {

FamilyAnalysis streams_analysis();

}  // namespace offloadbench
