// See gpu_checks.h.
#include "harness/cuda/gpu_checks.h"

#include <algorithm>

#include "harness/gpu_info.h"
#include "kernels/cuda/cuda_raii.h"

namespace offloadbench {

std::string gpu_problem(int device, std::uint64_t device_bytes) {
  if (auto reason = gpu_unavailable_reason(device); !reason.empty()) return reason;
  CUDA_CHECK(cudaSetDevice(device));
  return device_fit_problem(device_bytes);
}

int device_attribute(cudaDeviceAttr attribute, int device) {
  int value = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

double link_ceiling(int device) {
  return gpu_inventory().gpus.at(device).link.ceiling_bytes_per_second();
}

void report_link_under_load(benchmark::State& state, int device, int directions) {
  const auto& gpu = gpu_inventory().gpus.at(device);
  const auto now = read_pcie_link(gpu.pci_bus_id);
  state.counters["link_max_generation"] = gpu.link.max_generation;
  state.counters["link_max_width"] = gpu.link.max_width;
  if (!now.known()) return;
  state.counters["link_generation_under_load"] = now.current_generation;
  state.counters["link_width_under_load"] = now.current_width;
  const double ceiling = link_ceiling_under_load(gpu.link, now);
  if (ceiling <= 0) return;
  // Set after the measurement layer's own ceiling counter, so this one is what the row is checked
  // against.
  state.counters["ceiling_bytes_per_second"] = ceiling * directions;
  state.counters["link_ceiling_generation"] =
      std::max(gpu.link.ceiling_generation(), now.ceiling_generation());
  state.counters["link_ceiling_width"] = std::max(gpu.link.ceiling_width(), now.ceiling_width());
}

}  // namespace offloadbench
