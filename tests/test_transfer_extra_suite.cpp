// Issue 18's transfer cases without a GPU: the table registers with its fields and byte-counting
// rules, the quick suite stays small, the seeded check pattern catches a wrong byte, and every row
// skips with the reason here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "benchmarks/transfer/transfer_extra_cases.h"
#include "harness/gpu_info.h"
#include "kernels/tensor_packing.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace {
const std::set<std::string> kExtraOps = {"device_local_copy", "sm_copy", "latency", "managed",
                                         "small_tensors"};

std::map<std::string, std::vector<nlohmann::json>> extra_fields_by_op(const RunConfig& config) {
  clear_registered_cases();
  register_transfer_suite(config);
  std::map<std::string, std::vector<nlohmann::json>> by_op;
  for (const auto& c : registered_cases()) {
    const auto op = c.fields["op"].get<std::string>();
    if (kExtraOps.count(op)) by_op[op].push_back(c.fields);
  }
  return by_op;
}
}  // namespace

TEST(TransferExtraSuite, QuickRegistersAFewCasesPerOp) {
  RunConfig config;
  config.gpu_devices = {0};
  const auto by_op = extra_fields_by_op(config);
  EXPECT_EQ(by_op.at("device_local_copy").size(), 2u * 2);  // copy engine, SM × 64 KiB, 256 MiB
  EXPECT_EQ(by_op.at("sm_copy").size(), 2u * 2);            // h2d, d2h × the same sizes
  EXPECT_EQ(by_op.at("latency").size(), 4u);
  EXPECT_EQ(by_op.at("managed").size(), 4u * 1);  // four variants × 256 MiB (≥ 1 MiB only)
  EXPECT_EQ(by_op.at("small_tensors").size(), 4u * small_tensor_counts(true).size());
  for (const auto& fields : by_op.at("device_local_copy"))
    EXPECT_EQ(fields["bytes_counted"], "read+write");
  for (const auto& fields : by_op.at("managed"))
    EXPECT_GE(fields["bytes"].get<std::uint64_t>(), 1u << 20);
  for (const auto& [op, rows] : by_op)
    for (const auto& fields : rows) {
      EXPECT_EQ(fields["device"], 0) << op;
      EXPECT_EQ(fields["family"], "transfer") << op;
      EXPECT_GE(fields["bytes"].get<std::uint64_t>(), 1u) << op;
    }
}

TEST(TransferExtraSuite, SmallTensorRowsCarryTheirPayload) {
  RunConfig config;
  config.gpu_devices = {0};
  config.quick = false;
  const auto rows = extra_fields_by_op(config).at("small_tensors");
  ASSERT_EQ(rows.size(), 4u * small_tensor_counts(false).size());
  std::set<std::string> methods;
  for (const auto& fields : rows) {
    methods.insert(fields["method"].get<std::string>());
    const auto n = fields["tensors"].get<std::uint64_t>();
    const auto layout = pack_layout(
        draw_tensor_sizes(bert_tiny_layer_parameters(), n, kSmallTensorsSeed), kPackAlignment);
    EXPECT_EQ(fields["bytes"], layout.payload_bytes) << n;
    EXPECT_EQ(fields["packed_bytes"], layout.total_bytes) << n;
    EXPECT_EQ(fields["parameter_list"], "bert_tiny_layer");
  }
  EXPECT_EQ(methods, (std::set<std::string>{"separate_pageable", "separate_pinned", "packed_pinned",
                                            "batch_api"}));
  EXPECT_EQ(small_tensor_counts(false).front(), 1u);
  EXPECT_EQ(small_tensor_counts(false).back(), 4096u);
}

TEST(TransferExtraSuite, SizesPassThroughAndCpuRegistersNone) {
  RunConfig config;
  config.gpu_devices = {0};
  config.sizes = std::vector<std::uint64_t>{4096, 3 << 20};
  const auto by_op = extra_fields_by_op(config);
  EXPECT_EQ(by_op.at("sm_copy").size(), 2u * 2);
  EXPECT_EQ(by_op.at("managed").size(), 4u * 2) << "--sizes is taken as given";
  config.gpu_devices = {};
  EXPECT_TRUE(extra_fields_by_op(config).empty()) << "--device cpu registers no GPU case";
}

TEST(TransferExtraSuite, SeededPatternFindsTheFirstWrongByte) {
  std::vector<unsigned char> data(1003);
  fill_seeded_bytes(data.data(), data.size(), 7);
  EXPECT_EQ(first_unseeded_byte(data.data(), data.size(), 7), data.size());
  EXPECT_LT(first_unseeded_byte(data.data(), data.size(), 8), 8u)
      << "another seed, another pattern";
  data[1001] ^= 1;
  EXPECT_EQ(first_unseeded_byte(data.data(), data.size(), 7), 1001u);
}

// The check compares whole words but must still catch, and place, a single wrong bit in any byte:
// first, middle, last, in a tail shorter than a word, at every alignment of the buffer.
TEST(TransferExtraSuite, SeededPatternCatchesOneFlippedBitAnywhereAtAnyAlignment) {
  for (std::uint64_t bytes : {1ull, 7ull, 8ull, 9ull, 64ull, 1003ull, (1ull << 16) + 5})
    for (std::uint64_t misalign = 0; misalign < 8; ++misalign) {
      std::vector<unsigned char> storage(bytes + 16);
      unsigned char* data = storage.data() + misalign;
      fill_seeded_bytes(data, bytes, 11);
      ASSERT_EQ(first_unseeded_byte(data, bytes, 11), bytes) << bytes << " bytes at +" << misalign;
      const std::uint64_t tail_byte =
          bytes - 1 - (bytes % 8 > 1 ? 1 : 0);  // inside the tail when there is one
      for (std::uint64_t at : std::vector<std::uint64_t>{0, bytes / 2, bytes - 1, tail_byte})
        for (unsigned char bit : {0x01, 0x80}) {
          data[at] ^= bit;
          EXPECT_EQ(first_unseeded_byte(data, bytes, 11), at) << bytes << " bytes at +" << misalign;
          data[at] ^= bit;
        }
      EXPECT_EQ(first_unseeded_byte(data, bytes, 11), bytes);
    }
}

TEST(TransferExtraSuite, SeededPatternIsSeededWordsInOrderWithATruncatedTail) {
  const std::uint64_t bytes = 8 * 100 + 5;
  std::vector<unsigned char> data(bytes), shorter(bytes - 7);
  fill_seeded_bytes(data.data(), bytes, 3);
  for (std::uint64_t k = 0; k <= bytes / 8; ++k) {
    const std::uint64_t word = seeded_word(3, k);
    unsigned char expected[8];
    std::memcpy(expected, &word, 8);
    for (std::uint64_t j = 0; j < 8 && 8 * k + j < bytes; ++j)
      ASSERT_EQ(data[8 * k + j], expected[j]) << k << ", " << j;
  }
  // Any prefix is the same pattern: a check of part of a buffer needs no state from the rest.
  fill_seeded_bytes(shorter.data(), shorter.size(), 3);
  EXPECT_TRUE(std::equal(shorter.begin(), shorter.end(), data.begin()));
  EXPECT_EQ(first_unseeded_byte(data.data(), shorter.size(), 3), shorter.size());
}

// What a broken copy looks like: from the wrong offset, only partly done, not done at all, or of
// the other direction's buffer. Every one fails, at the first byte it got wrong.
TEST(TransferExtraSuite, SeededPatternCatchesShiftedPartialStaleAndCrossedCopies) {
  const std::uint64_t bytes = (256ull << 10) + 3, seed = 5;
  std::vector<unsigned char> source(bytes + (64ull << 10)), got(bytes);
  fill_seeded_bytes(source.data(), source.size(), seed);
  // The old patterns repeated every 2 KiB and 32 KiB: shifts by those are caught now as well.
  for (std::uint64_t shift : {1ull, 4ull, 8ull, 16ull, 2048ull, 32768ull}) {
    std::memcpy(got.data(), source.data() + shift, bytes);
    EXPECT_LT(first_unseeded_byte(got.data(), bytes, seed), 8u) << "shifted by " << shift;
  }
  std::memcpy(got.data(), source.data(), bytes);
  ASSERT_EQ(first_unseeded_byte(got.data(), bytes, seed), bytes);
  std::fill(got.begin() + 100001, got.end(), 0);  // a partial copy into a poisoned buffer
  EXPECT_EQ(first_unseeded_byte(got.data(), bytes, seed), 100001u);
  std::fill(got.begin(), got.end(), 0xA5);  // nothing copied
  EXPECT_EQ(first_unseeded_byte(got.data(), bytes, seed), 0u);
  fill_seeded_bytes(got.data(), bytes, seed + 1);  // the other direction's bytes
  EXPECT_LT(first_unseeded_byte(got.data(), bytes, seed), 8u);
  EXPECT_EQ(first_unseeded_byte(got.data(), 0, seed), 0u) << "nothing to check";
}

TEST(TransferExtraSuite, SeededWordsAreDistinctWithinAndAcrossSeeds) {
  std::vector<std::uint64_t> words;
  for (std::uint64_t seed : {1, 2, 3, 4, 5, 6, 7, 100, 101})
    for (std::uint64_t k = 0; k < 50000; ++k) words.push_back(seeded_word(seed, k));
  std::sort(words.begin(), words.end());
  EXPECT_EQ(std::adjacent_find(words.begin(), words.end()), words.end()) << "two words are equal";
}

TEST(TransferExtraSuite, DeviceLocalCeilingIsDramUnlessBothBuffersFitInL2) {
  GpuInfo gpu;
  gpu.l2_cache_bytes = 50ull << 20;
  gpu.dram_bytes_per_second = 2.0e12;
  EXPECT_EQ(device_local_ceiling(25ull << 20, gpu), 0.0) << "2 × 25 MiB fit in 50 MiB of L2";
  EXPECT_EQ(device_local_ceiling((25ull << 20) + 1, gpu), 2.0e12);
  EXPECT_EQ(device_local_ceiling(1ull << 30, gpu), 2.0e12);
}

TEST(TransferExtraSuite, EveryCaseSkipsWithTheReasonWhenNoGpu) {
  if (gpu_unavailable_reason(0).empty())
    GTEST_SKIP() << "a GPU is present; tests/test_gpu_transfer_extra.cpp covers it";
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  config.sizes = std::vector<std::uint64_t>{1 << 20};
  register_transfer_suite(config);
  const auto doc =
      testing::run_registered("transfer/(device_local|sm_copy|latency|managed|small_tensors)/");
  const auto rows = iteration_rows(doc);
  ASSERT_EQ(rows.size(), 2u + 2 + 4 + 4 + 4 * small_tensor_counts(true).size());
  for (const auto& row : rows) {
    EXPECT_EQ(row["skipped"], true) << row["name"];
    EXPECT_EQ(row["skip_reason"], gpu_unavailable_reason(0)) << row["name"];
    EXPECT_TRUE(kExtraOps.count(row["op"].get<std::string>())) << row["name"];
  }
}

}  // namespace offloadbench

namespace offloadbench {
TEST(SmallTensorsCases, TheBatchApiIsLeftOutAboveItsLimitWithAReason) {
  SmallTensorsCase c;
  c.method = SmallTensorsMethod::batch_api;
  c.tensors = kMaxBatchApiTensors;
  EXPECT_EQ(small_tensors_problem(c), "");
  c.tensors = 4096;
  const auto reason = small_tensors_problem(c);
  EXPECT_NE(reason.find("faulted the CUDA context"), std::string::npos) << reason;
  c.method = SmallTensorsMethod::separate_pageable;  // the other methods run at every count
  EXPECT_EQ(small_tensors_problem(c), "");
}
}  // namespace offloadbench
