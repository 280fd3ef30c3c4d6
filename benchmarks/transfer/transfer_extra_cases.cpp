// The table of issue 18's transfer cases. Byte counting and ceilings, per op:
//   device_local_copy  bytes_per_second = 2·bytes / t (read + write), ceiling = DRAM peak (none in
//   L2);
//                      copy_bytes_per_second = bytes / t, what nvbandwidth's device_local_copy
//                      prints
//   sm_copy            bytes per direction / t, ceiling = the link
//   latency            latency_ns per dependent access (chase) or per round trip; no bandwidth
//   managed            bytes / t for the host's bytes to be consumed on the device, ceiling = the
//   link small_tensors      Σ tensor bytes (payload, no padding) / t, ceiling = the link
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/transfer/transfer_extra_cases.h"
#include "benchmarks/property_table.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_runner.h"
#include "harness/results/sizes.h"
#include "kernels/tensor_packing.h"

namespace offloadbench {

const char* to_string(CopyInitiator initiator) {
  return initiator == CopyInitiator::copy_engine ? "copy_engine" : "sm";
}

namespace {
constexpr LatencyProbeInfo kLatencyProbes[] = {
    //                                   name                         chase
    {LatencyProbe::chase_mapped_host, "pointer_chase_mapped_host", true},
    {LatencyProbe::chase_device, "pointer_chase_device", true},
    {LatencyProbe::round_trip_h2d_pinned, "round_trip_h2d_pinned", false},
    {LatencyProbe::round_trip_d2h_pinned, "round_trip_d2h_pinned", false},
};
}  // namespace

const LatencyProbeInfo& latency_probe_info(LatencyProbe probe) {
  return row_for(kLatencyProbes, &LatencyProbeInfo::probe, probe, "kLatencyProbes");
}

const char* to_string(LatencyProbe probe) { return latency_probe_info(probe).name; }

const char* to_string(ManagedVariant variant) {
  switch (variant) {
    case ManagedVariant::managed:
      return "managed";
    case ManagedVariant::managed_prefetch:
      return "managed_prefetch";
    case ManagedVariant::pinned_copy:
      return "pinned_copy";
    case ManagedVariant::pageable_copy:
      return "pageable_copy";
  }
  return "unknown";
}

bool is_managed(ManagedVariant variant) {
  return variant == ManagedVariant::managed || variant == ManagedVariant::managed_prefetch;
}

const char* to_string(SmallTensorsMethod method) {
  switch (method) {
    case SmallTensorsMethod::separate_pageable:
      return "separate_pageable";
    case SmallTensorsMethod::separate_pinned:
      return "separate_pinned";
    case SmallTensorsMethod::packed_pinned:
      return "packed_pinned";
    case SmallTensorsMethod::batch_api:
      return "batch_api";
  }
  return "unknown";
}

namespace {
constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;  // splitmix64's increment

// splitmix64's finalizer: a bijection of 64-bit words, so distinct counters give distinct words.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// base = mix64(seed), hoisted out of the loops.
constexpr std::uint64_t word_at(std::uint64_t base, std::uint64_t index) {
  return mix64(base + (index + 1) * kGolden);
}

// The first wrong byte among bytes [from, from + n) of p (from a multiple of 8), or from + n; byte
// by byte, and only where a whole-word compare already failed or for the tail.
std::uint64_t first_wrong_byte_in(const unsigned char* p, std::uint64_t from, std::uint64_t n,
                                  std::uint64_t seed) {
  const std::uint64_t base = mix64(seed);
  for (std::uint64_t at = from; at < from + n; at += 8) {
    unsigned char expected[8];
    const std::uint64_t word = word_at(base, at / 8);
    std::memcpy(expected, &word, 8);
    for (std::uint64_t j = 0; j < 8 && at + j < from + n; ++j)
      if (p[at + j] != expected[j]) return at + j;
  }
  return from + n;
}
}  // namespace

std::string small_tensors_problem(const SmallTensorsCase& c) {
  if (c.method != SmallTensorsMethod::batch_api || c.tensors <= kMaxBatchApiTensors) return "";
  return fmt::format(
      "cudaMemcpyBatchAsync is measured up to {} tensors: 4096 pageable tensors faulted the CUDA "
      "context on an H100 (driver 580.159, CUDA 13.0), which would end every later GPU case",
      kMaxBatchApiTensors);
}

std::uint64_t seeded_word(std::uint64_t seed, std::uint64_t index) {
  return word_at(mix64(seed), index);
}

// memcpy for every load and store: the buffers need not be 8-byte aligned, and compilers make plain
// (unaligned) 8-byte moves of them.
void fill_seeded_bytes(void* data, std::uint64_t bytes, std::uint64_t seed) {
  auto* out = static_cast<unsigned char*>(data);
  const std::uint64_t words = bytes / 8, base = mix64(seed);
  for (std::uint64_t k = 0; k < words; ++k) {
    const std::uint64_t word = word_at(base, k);
    std::memcpy(out + 8 * k, &word, 8);
  }
  if (const std::uint64_t tail = bytes % 8; tail != 0) {
    const std::uint64_t word = word_at(base, words);
    std::memcpy(out + 8 * words, &word, tail);
  }
}

std::uint64_t first_unseeded_byte(const void* got, std::uint64_t bytes, std::uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(got);
  const std::uint64_t words = bytes / 8, base = mix64(seed);
  for (std::uint64_t k = 0; k < words; ++k) {
    std::uint64_t word;
    std::memcpy(&word, p + 8 * k, 8);
    if (word != word_at(base, k)) return first_wrong_byte_in(p, 8 * k, 8, seed);
  }
  return first_wrong_byte_in(p, 8 * words, bytes % 8, seed);
}

double device_local_ceiling(std::uint64_t bytes, const GpuInfo& gpu) {
  return 2 * bytes <= gpu.l2_cache_bytes ? 0.0 : gpu.dram_bytes_per_second;
}

std::vector<std::uint64_t> extra_sizes(const RunConfig& config,
                                       const std::vector<std::uint64_t>& transfer_sizes) {
  if (config.sizes || !config.quick) return transfer_sizes;
  // Quick: one size where per-copy overhead rules and one where bandwidth does.
  std::vector<std::uint64_t> kept;
  for (auto bytes : transfer_sizes)
    if (bytes == (64ull << 10) || bytes == (256ull << 20)) kept.push_back(bytes);
  return kept.empty() ? transfer_sizes : kept;
}

std::vector<std::uint64_t> small_tensor_counts(bool quick) {
  if (quick) return {1, 16, 256, 4096};
  return {1, 4, 16, 64, 256, 1024, 4096};
}

namespace {

// Registers one GPU's cases: sets each case's device, its name's GPU suffix and its device field.
struct GpuCases {
  const RunConfig& config;
  int device;
  template <typename Case, typename Setup>
  void add(const std::string& name, nlohmann::json fields, Clock clock, Case c, Setup setup) const {
    c.device = device;
    fields["device"] = device;
    register_case(measured_case(name + config.gpu_suffix(device), "transfer", std::move(fields),
                                clock, [c, setup] { return setup(c); }));
  }
};

void register_copies(const GpuCases& gpu, const std::vector<std::uint64_t>& sizes) {
  for (auto initiator : {CopyInitiator::copy_engine, CopyInitiator::sm})
    for (auto bytes : sizes) {
      DeviceLocalCopyCase c;
      c.initiator = initiator;
      c.bytes = bytes;
      gpu.add(fmt::format("transfer/device_local/{}/{}", to_string(initiator), format_size(bytes)),
              {{"op", "device_local_copy"},
               {"initiator", to_string(initiator)},
               {"bytes", bytes},
               {"bytes_counted", "read+write"}},
              Clock::device_events, c, OFFLOADBENCH_GPU_RUNNER(setup_device_local_copy));
    }
  for (auto direction : {CopyDirection::h2d, CopyDirection::d2h})
    for (auto bytes : sizes) {
      SmCopyCase c;
      c.direction = direction;
      c.bytes = bytes;
      gpu.add(fmt::format("transfer/sm_copy/{}/{}", to_string(direction), format_size(bytes)),
              {{"op", "sm_copy"},
               {"direction", to_string(direction)},
               {"host_memory", "mapped_pinned"},
               {"initiator", "sm"},
               {"bytes", bytes}},
              Clock::device_events, c, OFFLOADBENCH_GPU_RUNNER(setup_sm_copy));
    }
}

void register_latency(const GpuCases& gpu) {
  for (const auto& probe : kLatencyProbes) {
    LatencyCase c;
    c.probe = probe.probe;
    gpu.add(fmt::format("transfer/latency/{}", probe.name),
            {{"op", "latency"}, {"probe", probe.name}, {"bytes", probe.chase ? 8 : 1}},
            probe.chase ? Clock::device_events : Clock::host_wall, c,
            OFFLOADBENCH_GPU_RUNNER(setup_latency));
  }
}

void register_managed(const GpuCases& gpu, const std::vector<std::uint64_t>& sizes) {
  for (auto variant : {ManagedVariant::managed, ManagedVariant::managed_prefetch,
                       ManagedVariant::pinned_copy, ManagedVariant::pageable_copy})
    for (auto bytes : sizes) {
      if (bytes < (1ull << 20) && !gpu.config.sizes)
        continue;  // migration works in pages: start at 1 MiB
      ManagedCase c;
      c.variant = variant;
      c.bytes = bytes;
      gpu.add(fmt::format("transfer/managed/{}/{}", to_string(variant), format_size(bytes)),
              {{"op", "managed"}, {"variant", to_string(variant)}, {"bytes", bytes}},
              Clock::device_events, c, OFFLOADBENCH_GPU_RUNNER(setup_managed));
    }
}

void register_small_tensors(const GpuCases& gpu) {
  const auto& list = bert_tiny_layer_parameters();
  for (auto method : {SmallTensorsMethod::separate_pageable, SmallTensorsMethod::separate_pinned,
                      SmallTensorsMethod::packed_pinned, SmallTensorsMethod::batch_api})
    for (auto n : small_tensor_counts(gpu.config.quick)) {
      const auto layout =
          pack_layout(draw_tensor_sizes(list, n, kSmallTensorsSeed), kPackAlignment);
      SmallTensorsCase c;
      c.method = method;
      c.tensors = n;
      gpu.add(fmt::format("transfer/small_tensors/{}/n:{}", to_string(method), n),
              {{"op", "small_tensors"},
               {"method", to_string(method)},
               {"tensors", n},
               {"parameter_list", list.name},
               {"seed", kSmallTensorsSeed},
               {"bytes", layout.payload_bytes},
               {"packed_bytes", layout.total_bytes},
               {"bytes_counted", "payload"}},
              Clock::host_wall, c, OFFLOADBENCH_GPU_RUNNER(setup_small_tensors));
    }
}

}  // namespace

void register_transfer_extra_cases(const RunConfig& config,
                                   const std::vector<std::uint64_t>& sizes) {
  const auto thinned = extra_sizes(config, sizes);
  for (int device : config.gpu_devices) {
    const GpuCases gpu{config, device};
    register_copies(gpu, thinned);
    register_latency(gpu);
    register_managed(gpu, thinned);
    register_small_tensors(gpu);
  }
}

}  // namespace offloadbench
