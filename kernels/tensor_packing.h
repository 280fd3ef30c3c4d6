// Many small tensors moved as one: the sizes of a real model's parameter list, a seeded draw of N
// of them, and the packing of N host tensors into one staging buffer (and back) that the "many
// small tensors" transfer cases copy in one piece. On the device each tensor is a view into the
// packed buffer at its offset, so no unpacking kernel runs there; unpack_tensors is the CPU
// reference the copied-back buffer is checked with.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace offloadbench {

struct ParameterList {
  std::string name;                  // "bert_tiny_layer"
  std::vector<std::uint64_t> bytes;  // one entry per tensor, in the model's order
};

// One encoder layer of BERT-tiny (hidden 128, intermediate 512, fp32): 16 tensors, 512 B – 256 KiB.
const ParameterList& bert_tiny_layer_parameters();
// This project's MLP 784-128-10 (fp32): W1, b1, W2, b2.
const ParameterList& mlp_784_128_10_parameters();

// n sizes drawn uniformly with replacement from list.bytes, seeded: index = mt19937_64() mod size,
// which (unlike std::uniform_int_distribution) gives the same draw with every standard library.
std::vector<std::uint64_t> draw_tensor_sizes(const ParameterList& list, std::uint64_t n,
                                             std::uint64_t seed);

// Where each tensor sits in the packed buffer: offsets aligned to `alignment` (a power of two; 256
// matches cudaMalloc's, so a view is aligned like a separate allocation), in order, not
// overlapping.
struct PackedLayout {
  std::vector<std::uint64_t> sizes, offsets;
  std::uint64_t total_bytes = 0;    // end of the last tensor: what one packed copy moves
  std::uint64_t payload_bytes = 0;  // Σ sizes: what every variant counts as moved
};
PackedLayout pack_layout(const std::vector<std::uint64_t>& sizes, std::uint64_t alignment);

// packed: (layout.total_bytes); tensors: (layout.sizes.size()) pointers. `=` semantics; padding
// bytes are left as they are.
void pack_tensors(void* packed, const void* const* tensors, const PackedLayout& layout);
void unpack_tensors(void* const* tensors, const void* packed, const PackedLayout& layout);

}  // namespace offloadbench
