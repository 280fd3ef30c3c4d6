// The transfer suite's table of cases. Sizes: quick 4KiB..256MiB in 16x steps, full 4KiB..1GiB in
// powers of two, or --sizes. Byte counting: a device copy moves `bytes` per direction
// (bidirectional counts both); a host memcpy reads and writes, so it counts 2·bytes as
// BabelStream's copy does.
#include "benchmarks/transfer/transfer_cases.h"

#include <fmt/format.h>

#include "benchmarks/transfer/transfer_extra_cases.h"
#include "benchmarks/transfer/transfer_idioms_cases.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"
#include "harness/gpu_runner.h"
#include "harness/results/sizes.h"
#include "harness/system_info.h"

namespace offloadbench {

const char* to_string(CopyDirection direction) {
  switch (direction) {
    case CopyDirection::h2d:
      return "h2d";
    case CopyDirection::d2h:
      return "d2h";
    case CopyDirection::bidirectional:
      return "bidirectional";
  }
  return "unknown";
}

namespace {

// Every pin operation: its name in case names, and the calls one timed call makes (the row's
// pin_operation).
struct PinOperationInfo {
  PinOperation operation;
  const char* name;
  const char* api_calls;
};
constexpr PinOperationInfo kPinOperations[] = {
    {PinOperation::host_alloc, "host_alloc", "cudaHostAlloc+cudaFreeHost"},
    {PinOperation::host_register, "host_register", "cudaHostRegister+cudaHostUnregister"},
};

// The GPU's NUMA node as sysfs gives it; -1 when unknown or there is no such GPU.
int gpu_numa_node(int device) {
  const auto& gpus = gpu_inventory().gpus;
  return device >= 0 && device < static_cast<int>(gpus.size())
             ? gpus[static_cast<std::size_t>(device)].numa_node
             : -1;
}

std::vector<std::uint64_t> transfer_sizes(const RunConfig& config) {
  if (config.sizes) return *config.sizes;
  if (config.quick) return {4ull << 10, 64ull << 10, 1ull << 20, 16ull << 20, 256ull << 20};
  return powers_of_two(4ull << 10, 1ull << 30);
}

void register_device_copies(const RunConfig& config, const std::vector<std::uint64_t>& sizes) {
  const CopyDirection directions[] = {CopyDirection::h2d, CopyDirection::d2h,
                                      CopyDirection::bidirectional};
  const HostMemoryKind kinds[] = {HostMemoryKind::pageable, HostMemoryKind::pinned,
                                  HostMemoryKind::registered, HostMemoryKind::write_combined};
  const auto numa = read_numa_topology();
  for (int device : config.gpu_devices)
    for (const auto& placement : host_placements(config.host_numa, gpu_numa_node(device), numa))
      for (auto direction : directions)
        for (auto kind : kinds)
          for (auto bytes : sizes) {
            DeviceCopyCase c;
            c.direction = direction;
            c.host_memory = kind;
            c.bytes = bytes;
            c.device = device;
            c.placement = placement;
            nlohmann::json fields = {{"op", "device_copy"},
                                     {"direction", to_string(direction)},
                                     {"host_memory", to_string(kind)},
                                     {"bytes", bytes},
                                     {"device", device},
                                     {"host_numa", placement.label},
                                     {"host_numa_node", placement.node}};
            if ((kind == HostMemoryKind::pinned || kind == HostMemoryKind::pageable) &&
                placement.label == "local")
              fields["headline"] = fmt::format("{} {}", to_string(direction), to_string(kind));
            register_case(measured_case(
                fmt::format("transfer/{}/{}/{}{}{}", to_string(direction), to_string(kind),
                            format_size(bytes), placement.name_suffix(), config.gpu_suffix(device)),
                "transfer", fields, Clock::device_events,
                [c] { return OFFLOADBENCH_GPU_RUNNER(setup_device_copy)(c); }));
          }
}

void register_pin_costs(const RunConfig& config, const std::vector<std::uint64_t>& sizes) {
  for (int device : config.gpu_devices)
    for (const auto& pin : kPinOperations)
      for (auto bytes : sizes) {
        PinCostCase c;
        c.operation = pin.operation;
        c.bytes = bytes;
        c.device = device;
        register_case(measured_case(fmt::format("transfer/pin_cost/{}/{}{}", pin.name,
                                                format_size(bytes), config.gpu_suffix(device)),
                                    "transfer",
                                    {{"op", "pin_cost"},
                                     {"pin_operation", pin.api_calls},
                                     {"bytes", bytes},
                                     {"device", device}},
                                    Clock::host_wall,
                                    [c] { return OFFLOADBENCH_GPU_RUNNER(setup_pin_cost)(c); }));
      }
}

void register_host_baseline(const std::vector<std::uint64_t>& sizes) {
  const int all_threads = query_host_info().omp_threads;
  for (auto bytes : sizes) {
    for (int threads : {1, all_threads}) {
      register_case(measured_case(
          fmt::format("transfer/host_memcpy/pretouched/threads:{}/{}", threads, format_size(bytes)),
          "transfer",
          {{"op", "host_memcpy"},
           {"host_memory", "pageable"},
           {"touch", "pretouched"},
           {"cpu_threads", threads},
           {"bytes", bytes},
           {"bytes_counted", "read+write"},
           {"device", "cpu"},
           {"headline", fmt::format("host memcpy, {} thread(s)", threads)}},
          Clock::host_wall, [bytes, threads] { return setup_host_memcpy(bytes, threads); }));
      if (all_threads == 1) break;
    }
    register_case(measured_case(
        fmt::format("transfer/host_memcpy/first_touch/{}", format_size(bytes)), "transfer",
        {{"op", "host_memcpy"},
         {"host_memory", "pageable"},
         {"touch", "first_touch"},
         {"cpu_threads", 1},
         {"bytes", bytes},
         {"bytes_counted", "read+write"},
         {"device", "cpu"}},
        Clock::host_wall, [bytes] { return setup_host_memcpy_first_touch(bytes); }));
    register_case(measured_case(
        fmt::format("transfer/pin_cost/first_touch/{}", format_size(bytes)), "transfer",
        {{"op", "pin_cost"}, {"pin_operation", "first_touch"}, {"bytes", bytes}, {"device", "cpu"}},
        Clock::host_wall, [bytes] { return setup_first_touch(bytes); }));
  }
}

}  // namespace

void register_transfer_suite(const RunConfig& config) {
  const auto sizes = transfer_sizes(config);
  register_device_copies(config, sizes);
  register_pin_costs(config, sizes);
  register_transfer_extra_cases(
      config, sizes);  // device-local, SM-initiated, latency, managed, small tensors
  register_host_baseline(sizes);
  register_transfer_idioms_cases(config);  // PyTorch's copy idioms, pinning at scale
}

Suite transfer_suite() {
  return {
      "transfer",
      "host<->device copies by direction and host memory kind, pinning costs, host memcpy baseline",
      register_transfer_suite, "bytes per host<->device copy", ""};
}

LaneRates bidirectional_lane_rates(std::uint64_t bytes_per_direction, const Totals& totals) {
  const auto& lanes = totals.lane_seconds;
  if (lanes.size() != 2 || lanes[0] <= 0 || lanes[1] <= 0 || totals.calls <= 0) return {};
  const double moved = static_cast<double>(bytes_per_direction) * static_cast<double>(totals.calls);
  LaneRates rates{moved / lanes[0], moved / lanes[1], 0};
  rates.sum = rates.h2d + rates.d2h;
  return rates;
}

}  // namespace offloadbench
