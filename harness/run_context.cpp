#include "harness/run_context.h"

#include <cstdint>

#include <fmt/format.h>

#include "harness/gpu_info.h"
#include "harness/numa.h"
#include "harness/results/results.h"
#include "harness/system_info.h"

namespace offloadbench {

std::string offloadbench_version() { return OFFLOADBENCH_VERSION; }
std::string offloadbench_git_sha() { return OFFLOADBENCH_GIT_SHA; }
std::string offloadbench_build_type() { return OFFLOADBENCH_BUILD_TYPE; }

namespace {
std::string fnv1a_hex(const std::string& text) {  // stable across compilers, unlike std::hash
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}
}  // namespace

nlohmann::json machine_fingerprint() {
  const auto& inv = gpu_inventory();
  nlohmann::json models = nlohmann::json::array();
  for (const auto& g : inv.gpus) models.push_back(g.name);
  nlohmann::json fp = {
      {"gpu_models", models},
      {"driver",
       inv.driver_release.empty() ? cuda_version_string(inv.driver_version) : inv.driver_release},
      {"cuda_runtime", cuda_version_string(inv.runtime_version)},
      {"cpu_model", query_host_info().cpu_model}};
  fp["id"] = fnv1a_hex(fp.dump());
  return fp;
}

nlohmann::json make_run_context(const RunDescription& run) {
  const auto host = query_host_info();
  nlohmann::json ob = {{"schema_version", kResultsSchemaVersion},
                       {"version", offloadbench_version()},
                       {"git_sha", offloadbench_git_sha()},
                       {"build_type", offloadbench_build_type()},
                       {"suites", run.suites},
                       {"mode", run.mode},
                       {"repetitions", run.repetitions},
                       {"devices", run.devices},
                       {"host_numa", run.host_numa},
                       {"command_line", run.command_line},
                       {"start_time_utc", utc_now_iso8601()},
                       {"incomplete", true}};
  return {{"offloadbench", ob},
          {"host", to_json(host)},
          {"cuda", to_json(gpu_inventory())},
          {"numa", numa_context(read_numa_topology())},
          {"machine_fingerprint", machine_fingerprint()}};
}

}  // namespace offloadbench
