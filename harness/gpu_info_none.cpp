// gpu_inventory() for a build without CUDA: no GPU can be used, and the reason says why.
#include "harness/gpu_info.h"
#include "harness/nvml.h"

namespace offloadbench {

std::string gpu_context_error() { return ""; }

const GpuInventory& gpu_inventory() {
  static const GpuInventory inventory = [] {
    GpuInventory inv;
    inv.built_with_cuda = false;
    inv.unavailable_reason = "offloadbench was built without CUDA (no nvcc at configure time)";
    const auto& nvml = Nvml::instance();
    inv.nvml_status = nvml.available() ? "available" : nvml.unavailable_reason();
    inv.driver_release = nvml.driver_version();
    return inv;
  }();
  return inventory;
}

}  // namespace offloadbench
