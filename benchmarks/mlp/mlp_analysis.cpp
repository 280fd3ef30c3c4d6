// The mlp family's self-check: every row of a (step variant, batch) group starts training from the
// same seeded weights and the same first batch, so the loss before its first step (initial_loss)
// is the same on the CPU and the GPU, eager or graph, in every precision to rounding.
#include "benchmarks/mlp/mlp_analysis.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/analysis/stats.h"

namespace offloadbench {

namespace {

using detail::Measured;
using detail::number;
using detail::text;

constexpr double kLossFp32 = 1e-4;     // relative; CPU and GPU fp32 rows agree to ~1e-7
constexpr double kLossReduced = 1e-3;  // bf16/fp16 rows from the same weights: ~2e-5 measured

// The reference start of a group: the CPU rows' loss, else the eager GPU rows' (a graph row runs
// one step before its capture), else the median of all.
double reference_loss(const std::vector<const Measured*>& members) {
  std::vector<double> cpu, eager, all;
  for (const auto* c : members) {
    const double loss = number(c->row(), "initial_loss");
    all.push_back(loss);
    if (text(c->row(), "view").rfind("cpu", 0) == 0)
      cpu.push_back(loss);
    else if (text(c->row(), "launch_mode") == "eager")
      eager.push_back(loss);
  }
  return median(!cpu.empty() ? cpu : !eager.empty() ? eager : all);
}

std::vector<BrokenRow> same_initial_loss(const std::vector<Measured>& cases,
                                         const nlohmann::json&) {
  std::map<std::pair<std::string, double>, std::vector<const Measured*>> groups;
  for (const auto& c : cases) {
    const auto group = text(c.row(), "compare_group"), sweep = text(c.row(), "sweep");
    if (text(c.row(), "family") != "mlp" || group.empty() || sweep.empty() ||
        !std::isfinite(number(c.row(), "initial_loss")) || is_anchor_row(c.row()))
      continue;
    groups[{group, number(c.row(), sweep)}].push_back(&c);
  }
  std::vector<BrokenRow> out;
  for (const auto& [key, members] : groups) {
    const double reference = reference_loss(members);
    for (const auto* c : members) {
      const double loss = number(c->row(), "initial_loss");
      const auto precision = text(c->row(), "precision");
      const double tolerance = precision.empty() || precision == "fp32" ? kLossFp32 : kLossReduced;
      if (std::fabs(loss - reference) > tolerance * std::fabs(reference))
        out.push_back(
            {c->name, -1,
             fmt::format("initial_loss {:.6g} where the group starts at {:.6g}: trained "
                         "from other weights or another batch than the rows it is compared with",
                         loss, reference)});
    }
  }
  return out;
}

}  // namespace

FamilyAnalysis mlp_analysis() {
  FamilyAnalysis family;
  family.family = "mlp";
  family.invariants = {{"mlp_same_initial_loss",
                        "rows of a step variant and batch start from the same loss (1e-4 relative; "
                        "1e-3 in bf16/fp16)",
                        same_initial_loss, true}};
  return family;
}

}  // namespace offloadbench
