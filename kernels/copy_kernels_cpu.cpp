// CPU twins of the transfer family's kernels (see copy_kernels.h) and the pointer-chase chain
// builder.
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <utility>

#include "kernels/copy_kernels.h"

namespace offloadbench {

void copy_bytes(void* dst, const void* src, std::uint64_t bytes) { std::memcpy(dst, src, bytes); }

void copy_bytes_uncached(void* dst, const void* src, std::uint64_t bytes) {
  std::memcpy(dst, src, bytes);
}

void sum_words(std::uint64_t* sum, const std::uint32_t* words, std::uint64_t n) {
  std::uint64_t total = 0;
  for (std::uint64_t i = 0; i < n; ++i) total += words[i];
  *sum = total;
}

void build_pointer_chase(std::uint64_t* next, std::uint64_t nodes, std::uint64_t stride_slots,
                         unsigned seed) {
  if (stride_slots == 0 || nodes == 0 || nodes % stride_slots != 0)
    throw std::invalid_argument("pointer chase: nodes must be a positive multiple of stride_slots");
  const std::uint64_t lines = nodes / stride_slots;
  for (std::uint64_t i = 0; i < nodes; ++i) next[i] = i;
  // Sattolo's algorithm: a uniformly random permutation of the lines that is one single cycle.
  std::vector<std::uint64_t> order(lines);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  for (std::uint64_t i = lines - 1; i > 0; --i) {
    const std::uint64_t j = std::uniform_int_distribution<std::uint64_t>(0, i - 1)(rng);
    std::swap(order[i], order[j]);
  }
  // order is a cycle as a permutation: line l is followed by line order[l].
  for (std::uint64_t line = 0; line < lines; ++line)
    next[line * stride_slots] = order[line] * stride_slots;
}

void pointer_chase(std::uint64_t* position, const std::uint64_t* next, std::uint64_t steps) {
  std::uint64_t at = *position;
  for (std::uint64_t s = 0; s < steps; ++s) at = next[at];
  *position = at;
}

}  // namespace offloadbench
