// The transfer family's cases beyond copy-engine host<->device copies (issue 18): device-local
// copies, SM-initiated (zero-copy) copies, latency, managed memory, and many small tensors moved
// one by one, packed into one pinned staging buffer, or as one cudaMemcpyBatchAsync.
// transfer_extra_cases.cpp registers them; transfer_extra_run_gpu.cpp /
// transfer_tensors_run_gpu.cpp set them up (built with CUDA only: harness/gpu_runner.h).
#pragma once
#include <cstdint>

#include <benchmark/benchmark.h>

#include "benchmarks/transfer/transfer_cases.h"
#include "harness/gpu_info.h"
#include "harness/measure.h"

namespace offloadbench {

// Who moves the bytes: a copy engine (cudaMemcpyAsync) or the SMs (a copy kernel).
enum class CopyInitiator { copy_engine, sm };
const char* to_string(CopyInitiator initiator);

// D2D on one GPU. Counted as read + write (2·bytes), so the rate compares with the DRAM peak;
// copy_bytes_per_second (bytes / time) is the figure nvbandwidth's device_local_copy prints.
struct DeviceLocalCopyCase {
  CopyInitiator initiator = CopyInitiator::copy_engine;
  std::uint64_t bytes = 0;
  int device = 0;
};

// The DRAM peak, or 0 (no ceiling) when source and destination fit in L2 together: a repeated copy
// of them is served by L2, which is not bounded by DRAM.
double device_local_ceiling(std::uint64_t bytes, const GpuInfo& gpu);

// A copy kernel reading mapped pinned host memory (h2d) or writing it (d2h); bytes per direction.
struct SmCopyCase {
  CopyDirection direction = CopyDirection::h2d;  // h2d or d2h
  std::uint64_t bytes = 0;
  int device = 0;
};

enum class LatencyProbe {
  chase_mapped_host,      // pointer chase over mapped pinned host memory (nvbandwidth's
                          // host_device_latency_sm)
  chase_device,           // the same chase over device memory: the reference
  round_trip_h2d_pinned,  // 1-byte cudaMemcpyAsync + cudaStreamSynchronize, host wall clock
  round_trip_d2h_pinned,
};
struct LatencyProbeInfo {
  LatencyProbe probe;
  const char* name;
  bool chase;  // a pointer chase timed by device events; else a round trip timed by the host clock
};
const LatencyProbeInfo& latency_probe_info(LatencyProbe probe);
const char* to_string(LatencyProbe probe);

struct LatencyCase {
  LatencyProbe probe = LatencyProbe::chase_device;
  int device = 0;
};

// Host data consumed by a kernel (sum_words) on the device, four ways.
enum class ManagedVariant {
  managed,  // cudaMallocManaged, written by the host, read by the kernel (migrates on fault)
  managed_prefetch,  // the same after cudaMemPrefetchAsync to the device
  pinned_copy,       // cudaMemcpyAsync from pinned memory, then the kernel
  pageable_copy,     // cudaMemcpyAsync from pageable memory, then the kernel
};
const char* to_string(ManagedVariant variant);
bool is_managed(ManagedVariant variant);  // cudaMallocManaged memory, not a copy

struct ManagedCase {
  ManagedVariant variant = ManagedVariant::managed;
  std::uint64_t bytes = 0;
  int device = 0;
};

// N tensors host -> device, sizes drawn from a parameter list (kernels/tensor_packing.h).
enum class SmallTensorsMethod {
  separate_pageable,  // N cudaMemcpyAsync from the tensors' own pageable memory
  separate_pinned,    // N cudaMemcpyAsync from tensors already in pinned memory
  packed_pinned,      // pack into one pinned staging buffer (timed) + one cudaMemcpyAsync
  batch_api,          // one cudaMemcpyBatchAsync of the N pageable tensors
};
const char* to_string(SmallTensorsMethod method);

struct SmallTensorsCase {
  SmallTensorsMethod method = SmallTensorsMethod::separate_pageable;
  std::uint64_t tensors = 1;
  int device = 0;
};

inline constexpr std::uint64_t kSmallTensorsSeed = 18;
// cudaMemcpyBatchAsync of 4096 pageable tensors (197 MB) faulted the CUDA context on an H100 with
// driver 580.159 and CUDA 13.0 (cudaErrorLaunchFailure; 1 to 256 tensors ran clean), and a fault
// ends every later GPU case of the process, so the batch API is measured up to this many tensors.
inline constexpr std::uint64_t kMaxBatchApiTensors = 256;
// "" when the case can run, else why it is left out (the batch API above kMaxBatchApiTensors).
std::string small_tensors_problem(const SmallTensorsCase& c);
inline constexpr std::uint64_t kPackAlignment = 256;

// Each case's setup for the measurement layer (harness/measure.h), or why it cannot run here.
MeasuredCase setup_device_local_copy(const DeviceLocalCopyCase& c);
MeasuredCase setup_sm_copy(const SmCopyCase& c);
MeasuredCase setup_latency(const LatencyCase& c);
MeasuredCase setup_managed(const ManagedCase& c);
MeasuredCase setup_small_tensors(const SmallTensorsCase& c);

// Seeded bytes for the transfer family's output checks, and the index of the first byte of `got`
// that differs from that pattern (bytes when none does; every byte is checked, any alignment).
// Bytes [8k, 8k + 8) hold seeded_word(seed, k) in host byte order, and a tail shorter than 8 bytes
// the first bytes of the next word: counter-based, so the check regenerates each word where it
// reads it (no copy of the expected bytes), and every word differs from every other word and every
// other seed's, so a copy from the wrong offset or of the wrong buffer fails. A stale buffer that
// already holds the same seed's pattern passes: the callers poison destinations before the copy.
std::uint64_t seeded_word(std::uint64_t seed, std::uint64_t index);
void fill_seeded_bytes(void* data, std::uint64_t bytes, std::uint64_t seed);
std::uint64_t first_unseeded_byte(const void* got, std::uint64_t bytes, std::uint64_t seed);

// Registers every case above (called by register_transfer_suite).
void register_transfer_extra_cases(const RunConfig& config,
                                   const std::vector<std::uint64_t>& sizes);

// Byte sizes the extra cases sweep: the transfer sizes, thinned to three in quick mode.
std::vector<std::uint64_t> extra_sizes(const RunConfig& config,
                                       const std::vector<std::uint64_t>& transfer_sizes);
// Tensor counts of the many-small-tensors sweep.
std::vector<std::uint64_t> small_tensor_counts(bool quick);

}  // namespace offloadbench
