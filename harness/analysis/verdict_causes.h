// The causes a verdict can name (verdicts.h), each read from what one case's rows and the file's
// context recorded. A limiting cause makes a figure below expectation by itself (copies on a link
// trained below its maximum are capped, whatever the reference says); a contributing one is named
// only when the figure is short of its reference or expected share for a reason the run did not
// record more directly (persistence off costs start-up, not steady throughput).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench::verdict_causes {

struct Causes {
  std::vector<std::string> limiting;
  std::vector<std::string> contributing;
};

// `rows`: the case's repetitions (non-empty); `context`: the file's context block.
Causes of_case(const std::vector<const nlohmann::json*>& rows, const nlohmann::json& context);

// The context's entry for GPU `device` (cuda.gpus[i] with index == device); null when absent.
const nlohmann::json& gpu_context(const nlohmann::json& context, int device);

// "Gen4 x8 in a Gen5 x16 slot" when the link is trained below its maximum, else "".
std::string link_shortfall(int generation, int width, int max_generation, int max_width);

// The OpenBLAS core type named in a BLAS config string when it is a fallback kernel set (what
// OpenBLAS picks when it cannot identify the CPU, common in VMs: Prescott, Katmai, ...), else "".
std::string fallback_blas_core(const std::string& blas_config);

}  // namespace offloadbench::verdict_causes
