#include "harness/gpu_clocks.h"

#include "harness/gpu_info.h"
#include "harness/nvml.h"

namespace offloadbench {

bool clocks_locked(const SmClockReading& r) { return (r.reasons & kClockReasonApplicationsSetting) != 0; }

bool read_idle(const SmClockReading& r) { return (r.reasons & kClockReasonGpuIdle) != 0; }

bool is_throttled(const SmClockReading& r, double threshold) {
  if (read_idle(r)) return false;
  const unsigned long long slowdowns =
      kClockReasonHwSlowdown | kClockReasonSwThermal | kClockReasonHwThermal | kClockReasonHwPowerBrake;
  if (r.reasons & slowdowns) return true;
  return !clocks_locked(r) && r.max_sm_mhz > 0 && r.sm_mhz < threshold * r.max_sm_mhz;
}

void annotate_clock(nlohmann::json& row, const std::optional<SmClockReading>& reading) {
  if (!reading) return;
  row["sm_clock_mhz"] = reading->sm_mhz;
  row["clock_throttled"] = is_throttled(*reading);
  row["clocks_locked"] = clocks_locked(*reading);
  if (read_idle(*reading)) row["clock_read_idle"] = true;
}

SmClockReader nvml_clock_reader() {
  return [](int index) -> std::optional<SmClockReading> {
    const auto& inventory = gpu_inventory();
    if (index < 0 || index >= static_cast<int>(inventory.gpus.size())) return std::nullopt;
    return Nvml::instance().sm_clock(inventory.gpus[static_cast<std::size_t>(index)].pci_bus_id);
  };
}

}  // namespace offloadbench
