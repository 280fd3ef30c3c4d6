// Kernels the transfer family's SM-side cases run, beside their CPU twins: a byte copy
// (device-local copies, and SM-initiated copies through mapped host memory), a word sum that
// consumes a buffer (managed-memory cases), and a dependent pointer chase (latency). The CUDA
// launchers (copy_kernels.cu, CUDA builds only) keep the CPU function's name and arguments and add
// the stream last; they check the launch and do not wait for the work.
#pragma once
#include <cstdint>
#include <vector>

struct CUstream_st;  // cudaStream_t without pulling CUDA headers into CPU-only code

namespace offloadbench {

// dst, src: (bytes) bytes, not overlapping. `=` semantics. The GPU side moves 16-byte words where
// both pointers allow it and single bytes for the rest, so any size and alignment is copied
// exactly.
void copy_bytes(void* dst, const void* src, std::uint64_t bytes);
void copy_bytes(void* dst, const void* src, std::uint64_t bytes, CUstream_st* stream);

// The same copy with loads that refetch system memory (__ldcv) and write-through stores (__stwt),
// so through mapped host memory every call crosses the link even when the bytes were read before:
// what the SM-initiated host<->device copies time.
void copy_bytes_uncached(void* dst, const void* src, std::uint64_t bytes);
void copy_bytes_uncached(void* dst, const void* src, std::uint64_t bytes, CUstream_st* stream);

// *sum = Σ words[i] mod 2^64, words: (n) uint32. `=` semantics. Integer addition is exact and
// order-free, so the GPU's result equals the twin's bit for bit. *sum must be device-visible.
void sum_words(std::uint64_t* sum, const std::uint32_t* words, std::uint64_t n);
void sum_words(std::uint64_t* sum, const std::uint32_t* words, std::uint64_t n,
               CUstream_st* stream);

// ---- pointer chase ----
// A chain of `nodes` 8-byte slots where slot i holds the index of the next slot to visit. Only one
// slot per `stride_slots` (16 slots = one 128-byte line, as nvbandwidth's strideLen) is on the
// cycle, and the lines are visited in a seeded random order, so every step is one dependent 8-byte
// load from a line the chase has not touched for (nodes / stride_slots) steps: no prefetcher or
// cache helps, the load's full latency is paid each time.
inline constexpr std::uint64_t kChaseStrideSlots = 16;

// next: (nodes) slots; nodes a positive multiple of stride_slots. Slots off the cycle point at
// themselves (never visited from slot 0). The cycle through slot 0 has nodes / stride_slots steps.
void build_pointer_chase(std::uint64_t* next, std::uint64_t nodes, std::uint64_t stride_slots,
                         unsigned seed);

// *position ← the slot reached from slot *position after `steps` dependent loads: each call goes on
// where the last one stopped, so repeated calls keep walking lines the caches have not seen.
// GPU side: one thread walks the chain (next may be device or mapped host memory) with loads that
// bypass L1 and refetch system memory (__ldcv); *position must be device memory.
void pointer_chase(std::uint64_t* position, const std::uint64_t* next, std::uint64_t steps);
void pointer_chase(std::uint64_t* position, const std::uint64_t* next, std::uint64_t steps,
                   CUstream_st* stream);

}  // namespace offloadbench
