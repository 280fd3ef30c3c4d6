// NVML, loaded at run time from the driver's libnvidia-ml.so.1 when it is there. Nothing here may
// fail to start without it: every query answers "unknown" and says why.
#pragma once
#include <optional>
#include <string>

#include "harness/gpu_clocks.h"

namespace offloadbench {

struct PcieLinkState {
  int current_generation = 0;
  int max_generation = 0;
  int current_width = 0;
  int max_width = 0;
  int gpu_max_generation =
      0;  // nvmlDeviceGetGpuMaxPcieLinkGeneration: the GPU's own, not the system's; 0 = unknown
};

// What NVML says lies between two GPUs; -1 / 0 where it cannot say.
struct NvmlPeerLink {
  int common_ancestor = -1;  // nvmlGpuTopologyLevel_t: 0 same board, 10 one switch, 20 several, 30
                             // host bridge, 40 NUMA node, 50 system
  int p2p_read_status = -1;  // nvmlGpuP2PStatus_t for NVML_P2P_CAPS_INDEX_READ: 0 = OK
  int p2p_nvlink_status = -1;   // the same for NVML_P2P_CAPS_INDEX_NVLINK
  int direct_nvlinks = 0;       // active NVLinks of the first GPU whose far end is the second
  int active_nvlinks = 0;       // active NVLinks of the first GPU in all (to an NVSwitch, say)
  unsigned nvlink_version = 0;  // nvmlDeviceGetNvLinkVersion of its first active link
};

class Nvml {
 public:
  static Nvml& instance();  // loads and initialises once
  bool available() const { return available_; }
  const std::string& unavailable_reason() const { return reason_; }
  std::string driver_version() const;  // "" when unknown
  // pci_bus_id as cudaDeviceGetPCIBusId writes it ("0000:1B:00.0").
  std::optional<PcieLinkState> pcie_link(const std::string& pci_bus_id) const;
  // The SM clock now, its maximum, and the clocks event reasons; nullopt where NVML cannot say.
  std::optional<SmClockReading> sm_clock(const std::string& pci_bus_id) const;
  // Persistence mode (nvidia-smi -pm); nullopt where NVML cannot say.
  std::optional<bool> persistence_mode(const std::string& pci_bus_id) const;
  // Processes other than this one holding a compute context on the GPU; nullopt where NVML cannot
  // say.
  std::optional<int> other_compute_processes(const std::string& pci_bus_id) const;
  // The link between two GPUs by their bus ids; nullopt without NVML or either GPU.
  std::optional<NvmlPeerLink> peer_link(const std::string& bus_a, const std::string& bus_b) const;

  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

 private:
  Nvml();
  ~Nvml();
  void* library_ = nullptr;
  bool available_ = false;
  std::string reason_;
};

}  // namespace offloadbench
