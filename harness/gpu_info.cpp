// The parts of gpu_info.h that need no CUDA: link arithmetic, sysfs, JSON.
#include "harness/gpu_info.h"
#include "harness/nvml.h"

#include <algorithm>
#include <cctype>
#include <fstream>

#include <fmt/format.h>

#include "harness/pcie.h"

namespace offloadbench {

double PcieLink::theoretical_bytes_per_second() const {
  return pcie_link_bytes_per_second(current_generation, current_width);
}

int PcieLink::ceiling_generation() const {
  return std::max({max_generation, current_generation, gpu_max_generation});
}
int PcieLink::ceiling_width() const { return std::max({max_width, current_width, gpu_max_width}); }

double PcieLink::ceiling_bytes_per_second() const {
  return pcie_link_bytes_per_second(ceiling_generation(), ceiling_width());
}

bool PcieLink::degraded() const {
  return known() && ((max_generation > 0 && current_generation < max_generation) ||
                     (max_width > 0 && current_width < max_width));
}

PcieLink read_sysfs_link(const std::string& pci_bus_id, const std::string& sysfs_root) {
  PcieLink link;
  const auto dir = sysfs_pci_device_dir(pci_bus_id, sysfs_root);
  const auto cur_speed = read_first_line(dir + "/current_link_speed");
  const auto max_speed = read_first_line(dir + "/max_link_speed");
  const auto cur_width = read_first_line(dir + "/current_link_width");
  const auto max_width = read_first_line(dir + "/max_link_width");
  if (cur_speed.empty() || cur_width.empty()) return link;
  link.current_generation = pcie_generation_from_speed(cur_speed);
  link.max_generation = pcie_generation_from_speed(max_speed);
  link.current_width = std::atoi(cur_width.c_str());
  link.max_width = std::atoi(max_width.c_str());
  // The GPU function's own Link Capabilities register: what the GPU can do, whatever its slot.
  link.gpu_max_generation = link.max_generation;
  link.gpu_max_width = link.max_width;
  link.source = "sysfs";
  return link;
}

PcieLink merge_link_readings(const PcieLink& nvml, const PcieLink& sysfs) {
  if (!nvml.known()) return sysfs;
  PcieLink link = nvml;
  link.gpu_max_generation = std::max(nvml.gpu_max_generation, sysfs.gpu_max_generation);
  link.gpu_max_width = std::max(nvml.gpu_max_width, sysfs.gpu_max_width);
  if (!sysfs.source.empty()) link.source = nvml.source + "+" + sysfs.source;
  return link;
}

double link_ceiling_under_load(const PcieLink& first, const PcieLink& now) {
  return std::max(first.ceiling_bytes_per_second(), now.ceiling_bytes_per_second());
}

PcieLink read_pcie_link(const std::string& pci_bus_id) {
  PcieLink nvml;
  if (auto link = Nvml::instance().pcie_link(pci_bus_id)) {
    nvml = {link->current_generation,
            link->max_generation,
            link->current_width,
            link->max_width,
            "nvml",
            link->gpu_max_generation,
            0};
  }
  return merge_link_readings(nvml, read_sysfs_link(pci_bus_id));
}

int read_sysfs_numa_node(const std::string& pci_bus_id, const std::string& sysfs_root) {
  const auto text = read_first_line(sysfs_pci_device_dir(pci_bus_id, sysfs_root) + "/numa_node");
  return text.empty() ? -1 : std::atoi(text.c_str());
}

std::string link_warning(const GpuInfo& gpu) {
  const auto& l = gpu.link;
  if (!l.degraded()) return "";
  return fmt::format(
      "GPU {} link runs at PCIe Gen{} x{}, below its maximum Gen{} x{}: host<->device copies are "
      "capped at "
      "{:.1f} GB/s instead of {:.1f} GB/s (check the slot, riser and BIOS; an idle GPU may also "
      "downclock "
      "its link until it is busy)",
      gpu.index, l.current_generation, l.current_width, l.max_generation, l.max_width,
      l.theoretical_bytes_per_second() / 1e9,
      pcie_link_bytes_per_second(l.max_generation, l.max_width) / 1e9);
}

std::string cuda_version_string(int encoded) {
  if (encoded <= 0) return "none";
  return fmt::format("{}.{}", encoded / 1000, (encoded % 1000) / 10);
}

nlohmann::json to_json(const GpuInfo& gpu) {
  const auto& l = gpu.link;
  nlohmann::json link = {{"current_generation", l.current_generation},
                         {"max_generation", l.max_generation},
                         {"current_width", l.current_width},
                         {"max_width", l.max_width},
                         {"gpu_max_generation", l.gpu_max_generation},
                         {"gpu_max_width", l.gpu_max_width},
                         {"source", l.source},
                         {"ceiling_generation", l.ceiling_generation()},
                         {"ceiling_width", l.ceiling_width()},
                         {"theoretical_bytes_per_second", l.theoretical_bytes_per_second()},
                         {"ceiling_bytes_per_second", l.ceiling_bytes_per_second()},
                         {"degraded", l.degraded()}};
  return {{"index", gpu.index},
          {"name", gpu.name},
          {"compute_capability", fmt::format("{}.{}", gpu.cc_major, gpu.cc_minor)},
          {"sm_count", gpu.sm_count},
          {"memory_total_bytes", gpu.memory_total_bytes},
          {"memory_free_bytes", gpu.memory_free_bytes},
          {"l2_cache_bytes", gpu.l2_cache_bytes},
          {"memory_bus_width_bits", gpu.memory_bus_width_bits},
          {"dram_bytes_per_second", gpu.dram_bytes_per_second},
          {"async_engine_count", gpu.async_engine_count},
          {"pci_bus_id", gpu.pci_bus_id},
          {"numa_node", gpu.numa_node},
          {"local_cpus", gpu.local_cpus},
          {"pcie_link", link},
          {"persistence_mode", gpu.persistence_mode < 0 ? "unknown"
                               : gpu.persistence_mode   ? "on"
                                                        : "off"},
          {"other_compute_processes", gpu.other_compute_processes < 0
                                          ? nlohmann::json(nullptr)
                                          : nlohmann::json(gpu.other_compute_processes)}};
}

nlohmann::json to_json(const GpuInventory& inv) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : inv.gpus) gpus.push_back(to_json(g));
  return {{"built_with_cuda", inv.built_with_cuda},
          {"cuda_runtime_version", cuda_version_string(inv.runtime_version)},
          {"cuda_driver_version", cuda_version_string(inv.driver_version)},
          {"driver_release", inv.driver_release},
          {"nvml", inv.nvml_status},
          {"unavailable_reason", inv.unavailable_reason},
          {"gpus", gpus}};
}

std::string gpu_unavailable_reason(int index) {
  const auto& inv = gpu_inventory();
  if (!inv.unavailable_reason.empty()) return inv.unavailable_reason;
  if (index < 0 || index >= static_cast<int>(inv.gpus.size()))
    return fmt::format("GPU {} does not exist ({} visible)", index, inv.gpus.size());
  return gpu_context_error();
}

std::string broken_context_reason(int first, int second, const std::string& error_text) {
  if (first == 0 || second == 0) return "";
  return fmt::format(
      "an earlier GPU case broke this process's CUDA context ({}); every later GPU case is "
      "skipped: run the failing case alone (--benchmark_filter) to see which",
      error_text);
}

std::string device_count_failure_reason(int status, int driver_version,
                                        const std::string& error_text) {
  constexpr int kInsufficientDriver = 35,
                kNoDevice = 100;  // cudaErrorInsufficientDriver, cudaErrorNoDevice
  if (driver_version == 0) return "no usable GPU: no NVIDIA driver installed";
  if (status == kNoDevice) return "no usable GPU: the NVIDIA driver sees no device";
  if (status == kInsufficientDriver)
    return fmt::format(
        "no usable GPU: the NVIDIA driver (CUDA {}.{}) is older than this build's CUDA runtime "
        "needs",
        driver_version / 1000, driver_version % 1000 / 10);
  return "no usable GPU: cudaGetDeviceCount failed with " + error_text;
}

}  // namespace offloadbench
