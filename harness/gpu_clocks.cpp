#include "harness/gpu_clocks.h"

#include <algorithm>

#include "harness/gpu_info.h"
#include "harness/nvml.h"

namespace offloadbench {

bool clocks_locked(const SmClockReading& r) {
  return (r.reasons & kClockReasonApplicationsSetting) != 0;
}

bool read_idle(const SmClockReading& r) { return (r.reasons & kClockReasonGpuIdle) != 0; }

bool is_throttled(const SmClockReading& r, double threshold) {
  if (read_idle(r)) return false;
  const unsigned long long slowdowns = kClockReasonHwSlowdown | kClockReasonSwThermal |
                                       kClockReasonHwThermal | kClockReasonHwPowerBrake;
  if (r.reasons & slowdowns) return true;
  return !clocks_locked(r) && r.max_sm_mhz > 0 && r.sm_mhz < threshold * r.max_sm_mhz;
}

void annotate_clock(nlohmann::json& row, const std::optional<SmClockReading>& reading) {
  if (!reading) return;
  row["sm_clock_mhz"] = reading->sm_mhz;
  row["clock_throttled"] = is_throttled(*reading);
  row["clocks_locked"] = clocks_locked(*reading);
  if (row["clock_throttled"] ==
      true) {  // why, for the verdicts (verdicts.h): the maximum and NVML's reasons
    row["sm_clock_max_mhz"] = reading->max_sm_mhz;
    nlohmann::json reasons = nlohmann::json::array();
    for (const auto& [bit, name] : {std::pair{kClockReasonSwPowerCap, "power cap"},
                                    {kClockReasonHwSlowdown, "hw slowdown"},
                                    {kClockReasonSwThermal, "sw thermal"},
                                    {kClockReasonHwThermal, "hw thermal"},
                                    {kClockReasonHwPowerBrake, "power brake"}})
      if (reading->reasons & bit) reasons.push_back(name);
    row["clock_reasons"] = reasons;
  }
  if (read_idle(*reading)) row["clock_read_idle"] = true;
}

std::optional<SmClockReading> summarize_readings(std::vector<SmClockReading> readings) {
  if (readings.empty()) return std::nullopt;
  std::sort(readings.begin(), readings.end(),
            [](const auto& a, const auto& b) { return a.sm_mhz < b.sm_mhz; });
  SmClockReading summary =
      readings[(readings.size() - 1) / 2];  // the lower median: an actual reading
  for (const auto& r : readings) {
    summary.max_sm_mhz = std::max(summary.max_sm_mhz, r.max_sm_mhz);
    summary.reasons |= r.reasons;
  }
  summary.reasons &= ~kClockReasonGpuIdle;  // only busy readings are kept
  return summary;
}

ClockSampler::ClockSampler(SmClockReader reader, std::vector<int> devices,
                           std::chrono::milliseconds period)
    : reader_(std::move(reader)),
      devices_(std::move(devices)),
      period_(period),
      thread_([this] { sample_until_stopped(); }) {}

ClockSampler::~ClockSampler() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::vector<SmClockReading> ClockSampler::take(int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto taken = std::move(busy_[device]);
  busy_[device].clear();
  return taken;
}

void ClockSampler::sample_until_stopped() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    lock.unlock();  // the reads take their time: take() is never held up by them
    std::vector<std::pair<int, SmClockReading>> read;
    for (int device : devices_)
      if (const auto r = reader_(device); r && !read_idle(*r)) read.push_back({device, *r});
    lock.lock();
    for (const auto& [device, r] : read) busy_[device].push_back(r);
    wake_.wait_for(lock, period_, [this] { return stop_; });
  }
}

SmClockReader nvml_clock_reader() {
  return [](int index) -> std::optional<SmClockReading> {
    const auto& inventory = gpu_inventory();
    if (index < 0 || index >= static_cast<int>(inventory.gpus.size())) return std::nullopt;
    return Nvml::instance().sm_clock(inventory.gpus[static_cast<std::size_t>(index)].pci_bus_id);
  };
}

}  // namespace offloadbench
