// `offloadbench info`: deviceQuery plus what decides transfer speed, and the host facts.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "cli/environment.h"
#include "harness/analysis/verdicts.h"
#include "harness/gpu_info.h"
#include "harness/numa.h"
#include "harness/results/results.h"
#include "harness/results/sizes.h"
#include "harness/run_context.h"
#include "harness/system_info.h"

namespace offloadbench::cli {

namespace {

void print_gpu(const GpuInfo& g, const NumaTopology& numa) {
  const auto& l = g.link;
  fmt::print("GPU {}: {}\n", g.index, g.name);
  fmt::print("  compute capability     {}.{}, {} SMs\n", g.cc_major, g.cc_minor, g.sm_count);
  fmt::print("  memory                 {:.1f} GiB total, {:.1f} GiB free, L2 {}\n",
             g.memory_total_bytes / 1073741824.0, g.memory_free_bytes / 1073741824.0,
             format_size(g.l2_cache_bytes));
  fmt::print("  DRAM bandwidth         {:.0f} GB/s theoretical ({}-bit bus)\n",
             g.dram_bytes_per_second / 1e9, g.memory_bus_width_bits);
  if (l.known()) {
    fmt::print(
        "  PCIe link              Gen{} x{} now, Gen{} x{} max ({}): {:.1f} GB/s per direction "
        "theoretical\n",
        l.current_generation, l.current_width, l.max_generation, l.max_width, l.source,
        l.theoretical_bytes_per_second() / 1e9);
    fmt::print(
        "  copy ceiling           Gen{} x{} (the GPU's own maximum Gen{} x{}): {:.1f} GB/s per "
        "direction\n",
        l.ceiling_generation(), l.ceiling_width(), l.gpu_max_generation, l.gpu_max_width,
        l.ceiling_bytes_per_second() / 1e9);
  } else
    fmt::print("  PCIe link              unknown (no NVML and no sysfs entry for {})\n",
               g.pci_bus_id);
  fmt::print("  copy engines           {} (asyncEngineCount)\n", g.async_engine_count);
  fmt::print("  persistence mode       {}; other processes on it: {}\n",
             g.persistence_mode < 0 ? "unknown"
             : g.persistence_mode   ? "on"
                                    : "off",
             g.other_compute_processes < 0 ? "unknown" : std::to_string(g.other_compute_processes));
  fmt::print("  PCI bus id / NUMA node {} / {}\n", g.pci_bus_id, g.numa_node);
  if (!g.local_cpus.empty())
    fmt::print("  local CPUs             {}\n", fmt::join(g.local_cpus, ","));
  if (auto warning = link_warning(g); !warning.empty()) fmt::print("  WARNING: {}\n", warning);
  const auto& libnuma = Libnuma::instance();
  if (auto warning = default_placement_warning(g.index, g.numa_node, numa, libnuma.available(),
                                               libnuma.unavailable_reason());
      !warning.empty())
    fmt::print("  WARNING: {}\n", warning);
}

// The variables of offloadbench --help's Environment section that are set, one line each.
void print_environment() {
  const auto in_use = environment_in_use(process_environment());
  fmt::print("Environment:{}\n",
             in_use.empty() ? " none of offloadbench --help's variables is set" : "");
  for (const auto& [name, value] : in_use) fmt::print("  {}='{}'\n", name, printable(value));
}

int execute_info(bool as_json) {
  const auto host = query_host_info();
  const auto& inv = gpu_inventory();
  const auto numa = read_numa_topology();
  const nlohmann::json context = {
      {"host", to_json(host)}, {"cuda", to_json(inv)}, {"numa", numa_context(numa)}};
  // The machine half of the verdicts (verdicts.h): what will limit the figures before any run.
  const auto limits = machine_limits(context);
  if (as_json) {
    auto doc = context;
    doc["machine_limits"] = limits;
    doc["machine_fingerprint"] = machine_fingerprint();
    doc["offloadbench"] = {{"version", offloadbench_version()},
                           {"git_sha", offloadbench_git_sha()}};
    doc["environment"] = nlohmann::json::object();
    for (const auto& [name, value] : environment_in_use(process_environment()))
      doc["environment"][name] = value;
    fmt::print("{}\n", doc.dump(2));
    return 0;
  }
  fmt::print("offloadbench {} ({})\n", offloadbench_version(), offloadbench_git_sha());
  fmt::print("CPU: {}, {} logical CPUs, {} OpenMP threads\n", host.cpu_model, host.logical_cpus,
             host.omp_threads);
  fmt::print("Host memory: {:.1f} GiB total, {:.1f} GiB available\n",
             host.memory_total_bytes / 1073741824.0, host.memory_available_bytes / 1073741824.0);
  fmt::print("BLAS: {} ({} threads)\n", host.blas_library, host.blas_threads);
  fmt::print("CPU governor: {}; THP: {}\n",
             host.cpu_governor.empty() ? "none (no cpufreq)" : host.cpu_governor,
             host.thp_enabled.empty() ? "unknown" : host.thp_enabled);
  fmt::print("CUDA: built {}, runtime {}, driver supports {}, driver release {}\n",
             inv.built_with_cuda ? "with CUDA" : "without CUDA",
             cuda_version_string(inv.runtime_version), cuda_version_string(inv.driver_version),
             inv.driver_release.empty() ? "unknown" : inv.driver_release);
  fmt::print("NVML: {}\n", inv.nvml_status);
  if (!inv.unavailable_reason.empty()) fmt::print("GPUs: {}\n", inv.unavailable_reason);
  const auto& libnuma = Libnuma::instance();
  fmt::print("NUMA: {} node(s) with memory{}; libnuma {}\n", numa.nodes_with_memory.size(),
             numa.nodes_with_memory.empty()
                 ? ""
                 : fmt::format(" ({})", fmt::join(numa.nodes_with_memory, ",")),
             libnuma.available() ? "available" : libnuma.unavailable_reason());
  for (const auto& g : inv.gpus) print_gpu(g, numa);
  if (!inv.gpus.empty() || !limits.empty()) {
    fmt::print("Before any run: {}\n", limits.empty() ? "nothing recorded here limits the figures"
                                                      : "this machine will limit");
    for (const auto& line : limits) fmt::print("  {}\n", line);
  }
  print_environment();
  return 0;
}

}  // namespace

Command add_info_command(CLI::App& app) {
  auto as_json = std::make_shared<bool>(false);
  auto* info =
      app.add_subcommand("info", "Show the GPUs, PCIe links, CPU, BLAS and driver versions");
  info->add_flag("--json", *as_json, "Print as JSON");
  return {info, [as_json] { return execute_info(*as_json); }};
}

}  // namespace offloadbench::cli
