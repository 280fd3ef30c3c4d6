// What `offloadbench info` shows and every results file records about the GPUs: deviceQuery's
// facts plus what decides transfer speed (PCIe link, copy engines, NUMA node).
// Implemented by gpu_info_cuda.cpp, or by gpu_info_none.cpp in a build without CUDA.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench {

struct PcieLink {
  int current_generation = 0;  // 0 = unknown
  int max_generation =
      0;  // NVML: "possible with this device and system" (a VM's root port can cap it)
  int current_width = 0;
  int max_width = 0;
  std::string source;  // "nvml", "sysfs", "nvml+sysfs" or "" when unknown
  // The GPU's own capability, whatever its slot: NVML's GpuMaxPcieLinkGeneration, and the GPU
  // function's Link Capabilities as sysfs shows them (max_link_speed, max_link_width).
  int gpu_max_generation = 0;
  int gpu_max_width = 0;

  // Per direction, at the current generation and width; 0 when unknown.
  double theoretical_bytes_per_second() const;
  // Per direction at the highest generation and width any reading allows: the ceiling copies are
  // checked against. An idle GPU down-clocks its link, and inside a virtual machine the system's
  // "maximum" can read below what the GPU runs at (an emulated root port), so the GPU's own
  // capability counts too: a ceiling must never be below what the link can really carry.
  double ceiling_bytes_per_second() const;
  int ceiling_generation() const;
  int ceiling_width() const;
  bool known() const { return current_generation > 0 && current_width > 0; }
  // True when the link runs below its maximum generation or width.
  bool degraded() const;
};

struct GpuInfo {
  int index = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::uint64_t memory_total_bytes = 0;
  std::uint64_t memory_free_bytes = 0;
  std::uint64_t l2_cache_bytes = 0;
  double dram_bytes_per_second = 0;  // theoretical: 2 (DDR) × memory clock × bus width / 8
  int memory_bus_width_bits = 0;
  int async_engine_count = 0;  // copy engines that can run beside compute
  std::string pci_bus_id;
  int numa_node = -1;
  std::vector<int> local_cpus;  // sysfs local_cpulist: the CPUs nearest the GPU; empty when unknown
  PcieLink link;
  int persistence_mode = -1;  // 1 on, 0 off, -1 unknown (no NVML)
  int other_compute_processes =
      -1;  // other processes with a context on it when queried; -1 unknown
};

struct GpuInventory {
  bool built_with_cuda = false;
  int runtime_version = 0;     // 13000 = 13.0
  int driver_version = 0;      // highest CUDA version the driver supports, same encoding
  std::string driver_release;  // NVML's driver version ("570.86.15"), "" when NVML is absent
  std::string nvml_status;     // "available" or why not
  std::vector<GpuInfo> gpus;
  std::string unavailable_reason;  // non-empty when no GPU can be used, with the CUDA error's text
};

// Queried once per process; later calls return the same answer.
const GpuInventory& gpu_inventory();

// "" when device `index` can run GPU cases, else why not (no GPU, no driver, out of range, or this
// process's CUDA context broken by an earlier fault).
std::string gpu_unavailable_reason(int index);

// "" while this process's CUDA context works, else the error that broke it. A fault in device work
// (cudaErrorLaunchFailure, cudaErrorIllegalAddress, ...) is sticky: every later CUDA call of the
// process fails, so the cases after it are skipped with this reason instead of failing or crashing.
// Waits for the device's outstanding work (set-up only, never inside a timed region).
std::string gpu_context_error();

// The rule gpu_context_error applies: `first` is what a synchronize returned, `second` what it
// returned again after the error was cleared; only an error that stays is a broken context.
std::string broken_context_reason(int first, int second, const std::string& error_text);

// Why cudaGetDeviceCount gave no GPU, in the user's terms: `status` is what it returned,
// `driver_version` what cudaDriverGetVersion said (0: no driver library at all), `error_text` the
// CUDA error's text. No driver installed is said as such, not as an "insufficient" driver.
std::string device_count_failure_reason(int status, int driver_version,
                                        const std::string& error_text);

// A plain sentence when a GPU's link runs below its maximum, else "".
std::string link_warning(const GpuInfo& gpu);

// "13.0" from 13000.
std::string cuda_version_string(int encoded);

nlohmann::json to_json(const GpuInfo& gpu);
nlohmann::json to_json(const GpuInventory& inventory);

// The link as it is now (NVML, with the GPU function's sysfs capability; sysfs alone without NVML):
// read again right after copies ran, under load.
PcieLink read_pcie_link(const std::string& pci_bus_id);

// NVML's reading completed by sysfs's: the GPU's own maximum is the higher of the two.
PcieLink merge_link_readings(const PcieLink& nvml, const PcieLink& sysfs);

// Per-direction ceiling of a copy checked after it ran: the higher of the link as first read and as
// read `now`, under load (a link that trained up while busy can run above its idle reading).
double link_ceiling_under_load(const PcieLink& first, const PcieLink& now);

// PCIe link from /sys/bus/pci/devices/<bus id>/{current,max}_link_{speed,width}; empty when absent.
PcieLink read_sysfs_link(const std::string& pci_bus_id,
                         const std::string& sysfs_root = "/sys/bus/pci/devices");
int read_sysfs_numa_node(const std::string& pci_bus_id,
                         const std::string& sysfs_root = "/sys/bus/pci/devices");

}  // namespace offloadbench
