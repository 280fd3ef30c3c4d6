// The streams suite's output check, exercised on the CPU: it passes a right answer and catches an
// element never written back, a chunk copied to the wrong place and a wrong iteration count.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "benchmarks/streams/streams_check.h"
#include "kernels/fma_workload.h"

namespace offloadbench {

class StreamsCheck : public ::testing::Test {
 protected:
  static constexpr std::uint64_t n = 100003;  // no chunk count divides it
  static constexpr int iterations = 100;
  void SetUp() override {
    in.resize(n);
    out.resize(n);
    for (std::uint64_t i = 0; i < n; ++i) in[i] = streams_input_value(i);
    fma_workload(out.data(), in.data(), n, iterations);
    chunks = split_into_chunks(n, 16);
  }
  std::vector<float> in, out;
  std::vector<Chunk> chunks;
};

TEST_F(StreamsCheck, InputPatternIsInRangeAndVaries) {
  const auto [lo, hi] = std::minmax_element(in.begin(), in.end());
  EXPECT_GE(*lo, 0.0f);
  EXPECT_LT(*hi, 2.0f);
  EXPECT_NE(in[chunks[0].offset], in[chunks[1].offset]) << "chunks must not look alike";
}

TEST_F(StreamsCheck, ARightAnswerPasses) {
  EXPECT_EQ(check_pipeline_output(in.data(), out.data(), n, chunks, iterations), "");
}

TEST_F(StreamsCheck, AnElementNeverWrittenBackIsNamed) {
  out[54321] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(
      check_pipeline_output(in.data(), out.data(), n, chunks, iterations).find("element 54321"),
      std::string::npos);
}

TEST_F(StreamsCheck, AChunkInTheWrongPlaceIsCaught) {
  std::copy_n(out.begin() + chunks[3].offset, chunks[5].count, out.begin() + chunks[5].offset);
  EXPECT_NE(check_pipeline_output(in.data(), out.data(), n, chunks, iterations), "");
}

TEST_F(StreamsCheck, OneIterationTooManyIsCaught) {
  EXPECT_NE(check_pipeline_output(in.data(), out.data(), n, chunks, iterations + 1), "");
}

}  // namespace offloadbench
