// gpu_inventory() through the CUDA runtime, NVML when the driver has it, sysfs when it does not.
#include <cuda_runtime.h>

#include <fmt/format.h>

#include "harness/gpu_info.h"
#include "harness/numa.h"
#include "harness/nvml.h"

namespace offloadbench {

namespace {
std::string cuda_error_text(cudaError_t rc) {
  return fmt::format("{} ({}): {}", cudaGetErrorName(rc), static_cast<int>(rc),
                     cudaGetErrorString(rc));
}

GpuInfo query_one(int index) {
  GpuInfo g;
  g.index = index;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, index) != cudaSuccess) return g;
  g.name = prop.name;
  g.cc_major = prop.major;
  g.cc_minor = prop.minor;
  g.sm_count = prop.multiProcessorCount;
  g.memory_total_bytes = prop.totalGlobalMem;
  g.l2_cache_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
  g.memory_bus_width_bits = prop.memoryBusWidth;
  g.async_engine_count = prop.asyncEngineCount;
  int memory_clock_khz = 0;  // CUDA 13 removed it from cudaDeviceProp; the attribute remains
  if (cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, index) == cudaSuccess)
    g.dram_bytes_per_second = 2.0 * memory_clock_khz * 1e3 * prop.memoryBusWidth / 8.0;
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, index) == cudaSuccess) g.pci_bus_id = bus_id;
  if (cudaSetDevice(index) == cudaSuccess) {
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) g.memory_free_bytes = free_bytes;
  }
  g.numa_node = read_sysfs_numa_node(g.pci_bus_id);
  g.local_cpus = read_sysfs_local_cpus(g.pci_bus_id);
  g.link = read_pcie_link(g.pci_bus_id);
  if (const auto on = Nvml::instance().persistence_mode(g.pci_bus_id))
    g.persistence_mode = *on ? 1 : 0;
  if (const auto others = Nvml::instance().other_compute_processes(g.pci_bus_id))
    g.other_compute_processes = *others;
  return g;
}
}  // namespace

std::string gpu_context_error() {
  static std::string broken;  // a broken context stays broken
  if (!broken.empty() || gpu_inventory().gpus.empty()) return broken;
  const cudaError_t first = cudaDeviceSynchronize();  // a fault in earlier work is reported here
  if (first == cudaSuccess) return "";
  cudaGetLastError();  // a non-sticky error is cleared by this, a sticky one is not
  const cudaError_t second = cudaDeviceSynchronize();
  broken = broken_context_reason(static_cast<int>(first), static_cast<int>(second),
                                 cuda_error_text(second));
  return broken;
}

const GpuInventory& gpu_inventory() {
  static const GpuInventory inventory = [] {
    GpuInventory inv;
    inv.built_with_cuda = true;
    cudaRuntimeGetVersion(&inv.runtime_version);
    cudaDriverGetVersion(&inv.driver_version);
    const auto& nvml = Nvml::instance();
    inv.nvml_status = nvml.available() ? "available" : nvml.unavailable_reason();
    inv.driver_release = nvml.driver_version();
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    // No driver (cudaErrorInsufficientDriver) is the same situation as no device for us.
    if (rc != cudaSuccess) {
      inv.unavailable_reason =
          device_count_failure_reason(rc, inv.driver_version, cuda_error_text(rc));
      cudaGetLastError();  // clear the sticky-free error so later calls start clean
      return inv;
    }
    if (count == 0) {
      inv.unavailable_reason = "no usable GPU: cudaGetDeviceCount found 0 devices";
      return inv;
    }
    for (int i = 0; i < count; ++i) inv.gpus.push_back(query_one(i));
    if (count > 0) cudaSetDevice(0);
    return inv;
  }();
  return inventory;
}

}  // namespace offloadbench
