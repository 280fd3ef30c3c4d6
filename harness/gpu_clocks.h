// The SM clock with each GPU sample, so that A/B runs can drop samples taken while the GPU was
// throttled (NVBench does the same) and say when clocks were not locked. NVML supplies the reading
// where it can; the decisions are plain functions that tests drive with fake readings.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace offloadbench {

struct SmClockReading {
  unsigned sm_mhz = 0;             // current SM clock
  unsigned max_sm_mhz = 0;         // the highest the SM clock can run
  unsigned long long reasons = 0;  // NVML clocks event (throttle) reasons bitmask
};

// NVML's event-reason bits that this code reads (nvml.h, nvmlClocksEventReason*).
inline constexpr unsigned long long kClockReasonGpuIdle =
    0x1;  // nothing running: clocks on their way down
inline constexpr unsigned long long kClockReasonApplicationsSetting =
    0x2;  // clocks set/locked by the user
inline constexpr unsigned long long kClockReasonSwPowerCap = 0x4;
inline constexpr unsigned long long kClockReasonHwSlowdown = 0x8;
inline constexpr unsigned long long kClockReasonSwThermal = 0x20;
inline constexpr unsigned long long kClockReasonHwThermal = 0x40;
inline constexpr unsigned long long kClockReasonHwPowerBrake = 0x80;

// Throttled: a thermal or hardware slowdown reason, or the SM clock below `threshold` of its
// maximum while clocks were not locked there on purpose (NVBench's default threshold is 75%, and
// NVBench judges by the clock alone). The software power cap alone is judged by the clock: an H100
// running large GEMMs sits at its power cap, a little below its top clock, as its normal state. A
// reading taken once the GPU went idle (the reading follows the sample) is never throttled: it
// describes the idle GPU, not the sample.
bool is_throttled(const SmClockReading& reading, double threshold = 0.75);
// The reading was taken with the GPU idle (NVML's GpuIdle reason).
bool read_idle(const SmClockReading& reading);

// Locked: the user fixed the clocks (nvidia-smi --lock-gpu-clocks / application clocks), which NVML
// reports as the applications-clocks reason. Unlocked clocks boost and sag with temperature.
bool clocks_locked(const SmClockReading& reading);

// Adds sm_clock_mhz, clock_throttled and clocks_locked (and clock_read_idle when read_idle) to a
// GPU row when there is a reading.
void annotate_clock(nlohmann::json& row, const std::optional<SmClockReading>& reading);

// Reads device `index`'s SM clock now; nullopt where NVML cannot.
using SmClockReader = std::function<std::optional<SmClockReading>(int device_index)>;

// The reader backed by NVML (the PCI bus ids come from the GPU inventory); never fails to build.
SmClockReader nvml_clock_reader();

// One reading standing for several taken while a case ran: the median SM clock, the highest
// maximum, and every reason any of them gave. nullopt for none.
std::optional<SmClockReading> summarize_readings(std::vector<SmClockReading> readings);

// Reads the SM clock of `devices` every `period` on a thread of its own and keeps the readings
// taken while the GPU was busy (not read_idle). A reading taken when a case's rows are reported
// finds the GPU idle again, its clock back at the top (an H100 read 1980 MHz on every row, GEMMs at
// the power cap included): these say what the clock was during the work.
class ClockSampler {
 public:
  ClockSampler(SmClockReader reader, std::vector<int> devices,
               std::chrono::milliseconds period = std::chrono::milliseconds(50));
  ~ClockSampler();
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;
  // The busy readings of `device` since the last take, oldest first.
  std::vector<SmClockReading> take(int device);

 private:
  void sample_until_stopped();
  SmClockReader reader_;
  std::vector<int> devices_;
  std::chrono::milliseconds period_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::map<int, std::vector<SmClockReading>> busy_;
  std::thread thread_;  // last: started once everything it uses exists
};

}  // namespace offloadbench
