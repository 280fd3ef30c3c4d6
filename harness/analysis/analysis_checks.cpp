// Ceilings: every throughput in the file checked against its physical limit. The row's own
// ceiling counter when it has one, else one derived from the context: a device copy against the
// PCIe link (× 2 for bidirectional), a resident GPU kernel's bytes against the DRAM peak.
#include <cmath>

#include "harness/analysis/analysis.h"
#include "harness/analysis/analysis_detail.h"
#include "harness/results/results.h"

namespace offloadbench::detail {

namespace {
const nlohmann::json* gpu_entry(const nlohmann::json& context, int device) {
  if (!context.contains("cuda") || !context["cuda"].contains("gpus")) return nullptr;
  for (const auto& gpu : context["cuda"]["gpus"])
    if (gpu.value("index", -1) == device) return &gpu;
  return nullptr;
}

// The ceiling that applies to `rate_key` of `row` and where it comes from; 0 when none is known.
std::pair<double, std::string> ceiling_for(const nlohmann::json& row, const nlohmann::json& context,
                                           const std::string& rate_key) {
  const std::string own =
      rate_key == "bytes_per_second" ? "ceiling_bytes_per_second" : "ceiling_flop_per_second";
  if (double c = number(row, own); std::isfinite(c) && c > 0) return {c, own};
  if (rate_key != "bytes_per_second" || !row.contains("device") ||
      !row["device"].is_number_integer())
    return {0, ""};
  const int device = row["device"].get<int>();
  if (text(row, "op") == "device_copy") {
    const double link = link_bytes_per_second(context, device) *
                        (text(row, "direction") == "bidirectional" ? 2 : 1);
    return {link, "pcie_link"};
  }
  const auto view = text(row, "view");
  if (view.empty() || view == "gpu_kernel")
    return {dram_bytes_per_second(context, device), "dram_peak"};
  return {0, ""};
}
}  // namespace

double link_bytes_per_second(const nlohmann::json& context, int device) {
  const auto* gpu = gpu_entry(context, device);
  if (!gpu || !gpu->contains("pcie_link")) return 0;
  // The link's maximum, not its state when the file was written (idle links down-clock); files
  // written before ceiling_bytes_per_second existed have only the current rate.
  const auto& link = (*gpu)["pcie_link"];
  for (const char* key : {"ceiling_bytes_per_second", "theoretical_bytes_per_second"})
    if (number(link, key) > 0) return number(link, key);
  return 0;
}

double dram_bytes_per_second(const nlohmann::json& context, int device) {
  const auto* gpu = gpu_entry(context, device);
  const double v = gpu ? number(*gpu, "dram_bytes_per_second") : 0;
  return std::isfinite(v) && v > 0 ? v : 0;
}

nlohmann::json check_ceilings(const nlohmann::json& results) {
  const auto& context = results.contains("context") ? results["context"] : nlohmann::json::object();
  int checked = 0, unchecked = 0;
  nlohmann::json suspects = nlohmann::json::array();
  for (const auto* row_pointer : iteration_row_pointers(results)) {
    const auto& row = *row_pointer;
    if (row.value("skipped", false) || row.value("error_occurred", false)) continue;
    for (const char* rate_key : {"bytes_per_second", "flop_per_second"}) {
      const double rate = number(row, rate_key);
      if (!std::isfinite(rate)) continue;
      const auto [ceiling, source] = ceiling_for(row, context, rate_key);
      if (!(ceiling > 0)) {
        ++unchecked;
        continue;
      }
      ++checked;
      if (rate > ceiling)
        suspects.push_back({{"name", row["name"]},
                            {"repetition_index", row.value("repetition_index", 0)},
                            {"quantity", rate_key},
                            {"value", rate},
                            {"ceiling", ceiling},
                            {"ceiling_source", source},
                            {"ratio", rate / ceiling}});
    }
  }
  return {{"checked", checked}, {"without_ceiling", unchecked}, {"suspects", suspects}};
}

}  // namespace offloadbench::detail
