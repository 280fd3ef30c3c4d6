#include "harness/analysis/verdict_causes.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "harness/analysis/analysis_detail.h"

namespace offloadbench::verdict_causes {

namespace {

using detail::number;
using detail::text;

int whole(const nlohmann::json& row, const char* key) {
  const double v = number(row, key);
  return std::isfinite(v) ? static_cast<int>(v) : 0;
}

bool any_true(const std::vector<const nlohmann::json*>& rows, const char* key) {
  return std::any_of(rows.begin(), rows.end(),
                     [&](const auto* r) { return r->value(key, false) == true; });
}

// The link under load, as the copy rows read it right after their copies.
void link_cause(const std::vector<const nlohmann::json*>& rows, Causes& out) {
  for (const auto* row : rows) {
    if (row->value("link_below_max_under_load", false) != true) continue;
    const auto shortfall = link_shortfall(
        whole(*row, "link_generation_under_load"), whole(*row, "link_width_under_load"),
        whole(*row, "link_max_generation"), whole(*row, "link_max_width"));
    out.limiting.push_back(fmt::format("link trained {} under load: check the slot or riser",
                                       shortfall.empty() ? "below its maximum" : shortfall));
    return;
  }
}

// Host memory or the thread on another NUMA node than the GPU.
void numa_cause(const nlohmann::json& row, const nlohmann::json& gpu, Causes& out) {
  const int gpu_node = gpu.is_object() ? gpu.value("numa_node", -1) : -1;
  if (gpu_node < 0) return;
  const double memory = number(row, "host_memory_numa_node"),
               thread = number(row, "thread_numa_node");
  if (std::isfinite(memory) && memory >= 0 && static_cast<int>(memory) != gpu_node)
    out.limiting.push_back(
        fmt::format("host memory on NUMA node {}, the GPU on node {} (far node): run with "
                    "--host-numa local",
                    static_cast<int>(memory), gpu_node));
  else if (std::isfinite(thread) && thread >= 0 && static_cast<int>(thread) != gpu_node)
    out.limiting.push_back(
        fmt::format("the measuring thread on NUMA node {}, the GPU on node {} (far node)",
                    static_cast<int>(thread), gpu_node));
}

void clock_cause(const std::vector<const nlohmann::json*>& rows, Causes& out) {
  if (!any_true(rows, "clock_throttled")) return;
  std::set<std::string> reasons;
  double lowest = INFINITY, most = 0;
  for (const auto* row : rows) {
    if (row->value("clock_throttled", false) != true) continue;
    lowest = std::min(lowest, number(*row, "sm_clock_mhz"));
    most = std::max(most, number(*row, "sm_clock_max_mhz"));
    if (row->contains("clock_reasons") && (*row)["clock_reasons"].is_array())
      for (const auto& r : (*row)["clock_reasons"])
        if (r.is_string()) reasons.insert(r.get<std::string>());
  }
  std::string why;
  for (const auto& r : reasons) why += (why.empty() ? "" : ", ") + r;
  std::string clock = std::isfinite(lowest) ? fmt::format(" at {:.0f}", lowest) : "";
  if (!clock.empty() && most > 0) clock += fmt::format(" of {:.0f}", most);
  if (!clock.empty()) clock += " MHz";
  out.limiting.push_back(
      fmt::format("SM clock throttled{}{}", clock, why.empty() ? "" : " (" + why + ")"));
}

void gpu_context_causes(const nlohmann::json& gpu, Causes& out) {
  if (!gpu.is_object()) return;
  if (const double others = number(gpu, "other_compute_processes");
      std::isfinite(others) && others > 0)
    out.limiting.push_back(
        fmt::format("{} other process(es) on the GPU when the run started", others));
  if (text(gpu, "persistence_mode") == "off")
    out.contributing.push_back(
        "persistence mode off (nvidia-smi -pm 1): each process pays the driver's start-up");
}

// CPU rows: the governor, the BLAS core type.
void cpu_causes(const nlohmann::json& row, const nlohmann::json& context, Causes& out) {
  const auto& host = context.contains("host") ? context["host"] : nlohmann::json::object();
  if (text(host, "cpu_governor") == "powersave")
    out.contributing.push_back(
        "CPU frequency governor powersave (cpupower frequency-set -g performance)");
  const auto library = text(row, "library");
  if (library.find("OpenBLAS") == std::string::npos || library.find("oneDNN") != std::string::npos)
    return;
  const auto blas = host.contains("blas") ? text(host["blas"], "library") : std::string();
  if (const auto core = fallback_blas_core(blas.empty() ? library : blas); !core.empty())
    out.limiting.push_back(
        fmt::format("CPU BLAS on a fallback core type (OpenBLAS {}): set OPENBLAS_CORETYPE to "
                    "this CPU's (e.g. Haswell, SkylakeX, Zen)",
                    core));
}

}  // namespace

const nlohmann::json& gpu_context(const nlohmann::json& context, int device) {
  static const nlohmann::json none;
  if (!context.contains("cuda") || !context["cuda"].is_object() ||
      !context["cuda"].contains("gpus"))
    return none;
  for (const auto& g : context["cuda"]["gpus"])
    if (g.is_object() && g.value("index", -1) == device) return g;
  return none;
}

std::string link_shortfall(int generation, int width, int max_generation, int max_width) {
  const bool slow = max_generation > 0 && generation > 0 && generation < max_generation;
  const bool narrow = max_width > 0 && width > 0 && width < max_width;
  if (!slow && !narrow) return "";
  return fmt::format("Gen{} x{} in a Gen{} x{} slot", generation, width, max_generation, max_width);
}

std::string fallback_blas_core(const std::string& blas_config) {
  // x86 kernel sets from before AVX that DYNAMIC_ARCH falls back to for a CPU it does not
  // recognize.
  static const std::set<std::string> fallback = {"Prescott", "Katmai",  "Coppermine", "Northwood",
                                                 "Banias",   "GENERIC", "Generic"};
  std::istringstream words(blas_config);
  for (std::string word; words >> word;)
    if (fallback.count(word)) return word;
  return "";
}

Causes of_case(const std::vector<const nlohmann::json*>& rows, const nlohmann::json& context) {
  Causes out;
  const auto& row = *rows.front();
  link_cause(rows, out);
  if (row.contains("device") && row["device"].is_number_integer()) {
    const auto& gpu = gpu_context(context, row["device"].get<int>());
    numa_cause(row, gpu, out);
    clock_cause(rows, out);
    gpu_context_causes(gpu, out);
  } else if (text(row, "device") == "cpu") {
    cpu_causes(row, context, out);
  }
  if (text(row, "thp_enabled") == "never")
    out.contributing.push_back(
        "THP off (transparent_hugepage never): pinning at scale maps 4 KiB pages");
  return out;
}

}  // namespace offloadbench::verdict_causes
