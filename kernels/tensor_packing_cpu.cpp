// Parameter lists, the seeded size draw and host-side packing (see tensor_packing.h).
#include "kernels/tensor_packing.h"

#include <cstring>
#include <random>
#include <stdexcept>

#include "kernels/mlp.h"

namespace offloadbench {

const ParameterList& bert_tiny_layer_parameters() {
  constexpr std::uint64_t h = 128, ffn = 512, fp32 = 4;
  static const ParameterList list{"bert_tiny_layer",
                                  {h * h * fp32, h * fp32,      // attention query weight, bias
                                   h * h * fp32, h * fp32,      // key
                                   h * h * fp32, h * fp32,      // value
                                   h * h * fp32, h * fp32,      // attention output dense
                                   h * fp32, h * fp32,          // attention LayerNorm gamma, beta
                                   ffn * h * fp32, ffn * fp32,  // intermediate dense
                                   h * ffn * fp32, h * fp32,    // output dense
                                   h * fp32, h * fp32}};        // output LayerNorm gamma, beta
  return list;
}

const ParameterList& mlp_784_128_10_parameters() {
  // The tensors of the MLP's own flat parameter layout (fp32), so the two cannot drift apart.
  static const ParameterList list = [] {
    const auto l = mlp_param_layout(MlpShape{784, 128, 10});
    return ParameterList{
        "mlp_784_128_10",
        {(l.b1 - l.w1) * 4, (l.w2 - l.b1) * 4, (l.b2 - l.w2) * 4, (l.count - l.b2) * 4}};
  }();
  return list;
}

std::vector<std::uint64_t> draw_tensor_sizes(const ParameterList& list, std::uint64_t n,
                                             std::uint64_t seed) {
  if (list.bytes.empty()) throw std::invalid_argument("draw_tensor_sizes: empty parameter list");
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> sizes(n);
  for (auto& size : sizes) size = list.bytes[rng() % list.bytes.size()];
  return sizes;
}

PackedLayout pack_layout(const std::vector<std::uint64_t>& sizes, std::uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    throw std::invalid_argument("pack_layout: alignment must be a power of two");
  PackedLayout layout;
  layout.sizes = sizes;
  std::uint64_t end = 0;
  for (auto size : sizes) {
    const std::uint64_t offset = (end + alignment - 1) & ~(alignment - 1);
    layout.offsets.push_back(offset);
    end = offset + size;
    layout.payload_bytes += size;
  }
  layout.total_bytes = end;
  return layout;
}

void pack_tensors(void* packed, const void* const* tensors, const PackedLayout& layout) {
  auto* out = static_cast<unsigned char*>(packed);
  for (std::size_t i = 0; i < layout.sizes.size(); ++i)
    std::memcpy(out + layout.offsets[i], tensors[i], layout.sizes[i]);
}

void unpack_tensors(void* const* tensors, const void* packed, const PackedLayout& layout) {
  const auto* in = static_cast<const unsigned char*>(packed);
  for (std::size_t i = 0; i < layout.sizes.size(); ++i)
    std::memcpy(tensors[i], in + layout.offsets[i], layout.sizes[i]);
}

}  // namespace offloadbench
