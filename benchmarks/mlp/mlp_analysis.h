// The mlp family's part of the analysis (harness/analysis/family_analysis.h): its self-checks.
#pragma once
#include "harness/analysis/family_analysis.h"

namespace offloadbench {

FamilyAnalysis mlp_analysis();

}  // namespace offloadbench
