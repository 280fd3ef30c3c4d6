// compare's shared shifts (compare.h, SharedShift): a family's rows that moved together, named
// once.
#include <algorithm>
#include <cmath>
#include <map>

#include "harness/regression/compare.h"

namespace offloadbench {

std::vector<SharedShift> shared_shifts(const std::vector<BenchmarkComparison>& rows,
                                       double common_shift) {
  // family → the rows that moved past δ, each as (its log shift less the common one, its name), per
  // direction
  std::map<std::pair<std::string, bool>, std::vector<std::pair<double, std::string>>> moved;
  for (const auto& row : rows) {
    if (row.test.empty() || row.family.empty()) continue;
    const double shift = row.log_shift - common_shift, margin = std::log1p(row.delta);
    if (std::fabs(shift) > margin) moved[{row.family, shift > 0}].emplace_back(shift, row.name);
  }
  std::vector<SharedShift> out;
  for (auto& [key, members] : moved) {
    if (members.size() < kMinSharedShiftRows) continue;
    std::sort(members.begin(), members.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    SharedShift shift{key.first,
                      key.second,
                      {},
                      std::expm1(members.back().first),
                      std::expm1(members.front().first)};
    for (const auto& member : members) shift.names.push_back(member.second);
    out.push_back(std::move(shift));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.names.size() > b.names.size(); });
  return out;
}

}  // namespace offloadbench
