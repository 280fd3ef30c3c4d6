// Many small tensors on the host: the parameter lists are the real models', the seeded draw is
// reproducible and follows the list, and packing lays tensors out aligned and round-trips exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "kernels/mlp.h"
#include "kernels/tensor_packing.h"

namespace offloadbench {

TEST(ParameterLists, MatchTheModelsParameterCounts) {
  // A BERT encoder layer with hidden H and intermediate I has 4H² + 2HI + 9H + I parameters
  // (Q, K, V, output: H²+H each; two LayerNorms: 2H each; FFN: HI+I and IH+H).
  const std::uint64_t h = 128, i = 512;
  std::uint64_t bert = 0;
  for (auto b : bert_tiny_layer_parameters().bytes) bert += b;
  EXPECT_EQ(bert_tiny_layer_parameters().bytes.size(), 16u);
  EXPECT_EQ(bert, 4 * (4 * h * h + 2 * h * i + 9 * h + i));
  std::uint64_t mlp = 0;
  for (auto b : mlp_784_128_10_parameters().bytes) mlp += b;
  EXPECT_EQ(mlp, 4 * mlp_param_layout(MlpShape{784, 128, 10}).count);
  EXPECT_EQ(mlp_784_128_10_parameters().bytes.front(), 784u * 128 * 4);
}

TEST(DrawTensorSizes, ReproducibleAndDrawnFromTheList) {
  const auto& list = bert_tiny_layer_parameters();
  const auto a = draw_tensor_sizes(list, 4096, 18), b = draw_tensor_sizes(list, 4096, 18);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, draw_tensor_sizes(list, 4096, 19));
  // A prefix of a longer draw is the shorter draw: N = 16 tensors are the first 16 of N = 4096.
  const auto prefix = draw_tensor_sizes(list, 16, 18);
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), a.begin()));
  // Every draw is a size in the list, with the list's frequencies (each entry 1/16 of draws).
  std::map<std::uint64_t, int> list_count, drawn;
  for (auto s : list.bytes) ++list_count[s];
  for (auto s : a) ++drawn[s];
  for (const auto& [size, count] : drawn) ASSERT_TRUE(list_count.count(size)) << size;
  for (const auto& [size, count] : list_count) {
    const double expected = 4096.0 * count / list.bytes.size();
    EXPECT_NEAR(drawn[size], expected, 5 * std::sqrt(expected)) << size;
  }
  EXPECT_THROW(draw_tensor_sizes(ParameterList{"empty", {}}, 3, 1), std::invalid_argument);
}

TEST(PackLayout, AlignedInOrderAndNotOverlapping) {
  const std::vector<std::uint64_t> sizes = {3, 256, 1, 1000, 512, 7};
  const auto layout = pack_layout(sizes, 256);
  ASSERT_EQ(layout.offsets.size(), sizes.size());
  EXPECT_EQ(layout.offsets[0], 0u);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(layout.offsets[i] % 256, 0u) << i;
    if (i == 0) continue;
    EXPECT_GE(layout.offsets[i], layout.offsets[i - 1] + sizes[i - 1]) << i;
    EXPECT_LT(layout.offsets[i], layout.offsets[i - 1] + sizes[i - 1] + 256)
        << "no gap of a whole line";
  }
  EXPECT_EQ(layout.payload_bytes, 3u + 256 + 1 + 1000 + 512 + 7);
  EXPECT_EQ(layout.total_bytes, layout.offsets.back() + 7);
  EXPECT_EQ(pack_layout(sizes, 1).total_bytes, layout.payload_bytes) << "alignment 1 packs tightly";
  EXPECT_EQ(pack_layout({}, 256).total_bytes, 0u);
  EXPECT_THROW(pack_layout(sizes, 48), std::invalid_argument);
  EXPECT_THROW(pack_layout(sizes, 0), std::invalid_argument);
}

TEST(PackTensors, RoundTripsAndLeavesPaddingAlone) {
  const auto layout = pack_layout(draw_tensor_sizes(mlp_784_128_10_parameters(), 9, 2), 256);
  std::vector<std::vector<unsigned char>> tensors(9), back(9);
  std::vector<const void*> sources;
  std::vector<void*> targets;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    tensors[i].resize(layout.sizes[i]);
    for (std::size_t b = 0; b < tensors[i].size(); ++b)
      tensors[i][b] = static_cast<unsigned char>(i * 31 + b);
    back[i].assign(layout.sizes[i], 0);
    sources.push_back(tensors[i].data());
    targets.push_back(back[i].data());
  }
  std::vector<unsigned char> packed(layout.total_bytes, 0xab);
  pack_tensors(packed.data(), sources.data(), layout);
  for (std::size_t i = 0; i < tensors.size(); ++i)
    EXPECT_TRUE(
        std::equal(tensors[i].begin(), tensors[i].end(), packed.begin() + layout.offsets[i]))
        << i;
  for (std::size_t i = 0; i + 1 < tensors.size(); ++i)
    for (auto at = layout.offsets[i] + layout.sizes[i]; at < layout.offsets[i + 1]; ++at)
      ASSERT_EQ(packed[at], 0xab) << "padding byte " << at << " was written";
  unpack_tensors(targets.data(), packed.data(), layout);
  EXPECT_EQ(back, tensors);
}

}  // namespace offloadbench
