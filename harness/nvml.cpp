// NVML through dlopen. The few entry points are declared here by their documented C ABI
// (nvmlReturn_t is an int, nvmlDevice_t an opaque pointer), so no nvml.h is needed to build.
#include "harness/nvml.h"
#include "harness/pcie.h"

#include <dlfcn.h>
#include <unistd.h>

namespace offloadbench {

namespace {
using nvml_device = void*;
using init_fn = int (*)();
using shutdown_fn = int (*)();
using handle_by_bus_fn = int (*)(const char*, nvml_device*);
using uint_query_fn = int (*)(nvml_device, unsigned*);
using driver_version_fn = int (*)(char*, unsigned);
using clock_fn = int (*)(nvml_device, int,
                         unsigned*);  // nvmlClockType_t is an int; NVML_CLOCK_SM = 1
using reasons_fn = int (*)(nvml_device, unsigned long long*);
constexpr int kNvmlClockSm = 1;
using topology_fn = int (*)(nvml_device, nvml_device, int*);  // nvmlGpuTopologyLevel_t*
using p2p_status_fn = int (*)(nvml_device, nvml_device, int,
                              int*);  // caps index, nvmlGpuP2PStatus_t*
using nvlink_uint_fn = int (*)(nvml_device, unsigned,
                               unsigned*);  // state (nvmlEnableState_t), version
constexpr int kP2pCapsRead = 0, kP2pCapsNvlink = 2;
constexpr unsigned kMaxNvlinks = 32;  // above NVML_NVLINK_MAX_LINKS of any driver so far (18)
// nvmlPciInfo_t as nvmlDeviceGetNvLinkRemotePciInfo_v2 fills it.
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
using remote_pci_fn = int (*)(nvml_device, unsigned, NvmlPciInfo*);
using enable_state_fn = int (*)(nvml_device, int*);  // nvmlEnableState_t: 0 disabled, 1 enabled
// nvmlProcessInfo_t (v2 and v3 layouts agree) as nvmlDeviceGetComputeRunningProcesses_v3 fills it.
struct NvmlProcessInfo {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
};
using processes_fn = int (*)(nvml_device, unsigned*, NvmlProcessInfo*);
constexpr int kNvmlInsufficientSize = 7;

template <typename Fn>
Fn symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

// The NVML handle of the GPU at this PCI bus id; nullptr when NVML cannot say.
nvml_device device_at(void* library, const std::string& pci_bus_id) {
  auto by_bus = symbol<handle_by_bus_fn>(library, "nvmlDeviceGetHandleByPciBusId_v2");
  nvml_device device = nullptr;
  return by_bus && by_bus(pci_bus_id.c_str(), &device) == 0 ? device : nullptr;
}
}  // namespace

Nvml& Nvml::instance() {
  static Nvml nvml;
  return nvml;
}

Nvml::Nvml() {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    reason_ = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
    return;
  }
  auto init = symbol<init_fn>(library_, "nvmlInit_v2");
  if (!init) {
    reason_ = "libnvidia-ml.so.1 has no nvmlInit_v2";
    return;
  }
  const int rc = init();
  if (rc != 0) {
    reason_ = "nvmlInit_v2 failed with NVML error " + std::to_string(rc);
    return;
  }
  available_ = true;
}

Nvml::~Nvml() {
  if (available_) {
    if (auto shutdown = symbol<shutdown_fn>(library_, "nvmlShutdown")) shutdown();
  }
  // The library stays loaded: unloading the driver's NVML at exit has crashed in the past.
}

std::string Nvml::driver_version() const {
  if (!available_) return "";
  auto query = symbol<driver_version_fn>(library_, "nvmlSystemGetDriverVersion");
  char text[96] = {};
  if (!query || query(text, sizeof text) != 0) return "";
  return text;
}

std::optional<PcieLinkState> Nvml::pcie_link(const std::string& pci_bus_id) const {
  if (!available_) return std::nullopt;
  auto cur_gen = symbol<uint_query_fn>(library_, "nvmlDeviceGetCurrPcieLinkGeneration");
  auto max_gen = symbol<uint_query_fn>(library_, "nvmlDeviceGetMaxPcieLinkGeneration");
  auto cur_width = symbol<uint_query_fn>(library_, "nvmlDeviceGetCurrPcieLinkWidth");
  auto max_width = symbol<uint_query_fn>(library_, "nvmlDeviceGetMaxPcieLinkWidth");
  nvml_device device = device_at(library_, pci_bus_id);
  if (!device || !cur_gen || !max_gen || !cur_width || !max_width) return std::nullopt;
  unsigned values[4] = {};
  if (cur_gen(device, &values[0]) || max_gen(device, &values[1]) || cur_width(device, &values[2]) ||
      max_width(device, &values[3]))
    return std::nullopt;
  PcieLinkState state{static_cast<int>(values[0]), static_cast<int>(values[1]),
                      static_cast<int>(values[2]), static_cast<int>(values[3])};
  // Newer drivers only; NVML has no such query for the width (sysfs gives the GPU function's).
  unsigned gpu_max = 0;
  if (auto gpu_max_gen = symbol<uint_query_fn>(library_, "nvmlDeviceGetGpuMaxPcieLinkGeneration");
      gpu_max_gen && gpu_max_gen(device, &gpu_max) == 0)
    state.gpu_max_generation = static_cast<int>(gpu_max);
  return state;
}

std::optional<SmClockReading> Nvml::sm_clock(const std::string& pci_bus_id) const {
  if (!available_) return std::nullopt;
  auto current = symbol<clock_fn>(library_, "nvmlDeviceGetClockInfo");
  auto maximum = symbol<clock_fn>(library_, "nvmlDeviceGetMaxClockInfo");
  auto reasons = symbol<reasons_fn>(library_, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!reasons)
    reasons =
        symbol<reasons_fn>(library_, "nvmlDeviceGetCurrentClocksThrottleReasons");  // older drivers
  nvml_device device = device_at(library_, pci_bus_id);
  if (!device || !current || !maximum || !reasons) return std::nullopt;
  SmClockReading r;
  if (current(device, kNvmlClockSm, &r.sm_mhz) || maximum(device, kNvmlClockSm, &r.max_sm_mhz) ||
      reasons(device, &r.reasons))
    return std::nullopt;
  return r;
}

std::optional<bool> Nvml::persistence_mode(const std::string& pci_bus_id) const {
  if (!available_) return std::nullopt;
  auto query = symbol<enable_state_fn>(library_, "nvmlDeviceGetPersistenceMode");
  nvml_device device = device_at(library_, pci_bus_id);
  int state = 0;
  if (!device || !query || query(device, &state) != 0) return std::nullopt;
  return state == 1;
}

std::optional<int> Nvml::other_compute_processes(const std::string& pci_bus_id) const {
  if (!available_) return std::nullopt;
  auto query = symbol<processes_fn>(library_, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!query) query = symbol<processes_fn>(library_, "nvmlDeviceGetComputeRunningProcesses_v2");
  nvml_device device = device_at(library_, pci_bus_id);
  if (!device || !query) return std::nullopt;
  NvmlProcessInfo infos[64] = {};
  unsigned count = 64;
  const int rc = query(device, &count, infos);
  if (rc == kNvmlInsufficientSize)
    return static_cast<int>(count);  // more than 64: all of them others, near enough
  if (rc != 0) return std::nullopt;
  int others = 0;
  for (unsigned i = 0; i < count && i < 64; ++i)
    others += infos[i].pid != static_cast<unsigned>(getpid());
  return others;
}

std::optional<NvmlPeerLink> Nvml::peer_link(const std::string& bus_a,
                                            const std::string& bus_b) const {
  if (!available_) return std::nullopt;
  nvml_device a = device_at(library_, bus_a), b = device_at(library_, bus_b);
  if (!a || !b) return std::nullopt;
  NvmlPeerLink link;
  if (auto topology = symbol<topology_fn>(library_, "nvmlDeviceGetTopologyCommonAncestor"))
    if (int level = -1; topology(a, b, &level) == 0) link.common_ancestor = level;
  if (auto p2p = symbol<p2p_status_fn>(library_, "nvmlDeviceGetP2PStatus")) {
    if (int status = -1; p2p(a, b, kP2pCapsRead, &status) == 0) link.p2p_read_status = status;
    if (int status = -1; p2p(a, b, kP2pCapsNvlink, &status) == 0) link.p2p_nvlink_status = status;
  }
  auto state = symbol<nvlink_uint_fn>(library_, "nvmlDeviceGetNvLinkState");
  auto version = symbol<nvlink_uint_fn>(library_, "nvmlDeviceGetNvLinkVersion");
  auto remote = symbol<remote_pci_fn>(library_, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  if (!state) return link;
  const std::string far_end = normalized_pci_bus_id(bus_b);
  for (unsigned l = 0; l < kMaxNvlinks; ++l) {
    unsigned active = 0;
    if (state(a, l, &active) != 0) break;  // past the GPU's last link (or no NVLink at all)
    if (!active) continue;
    ++link.active_nvlinks;
    if (link.nvlink_version == 0 && version) version(a, l, &link.nvlink_version);
    NvmlPciInfo info{};
    if (remote && remote(a, l, &info) == 0 && normalized_pci_bus_id(info.bus_id) == far_end)
      ++link.direct_nvlinks;
  }
  return link;
}

}  // namespace offloadbench
