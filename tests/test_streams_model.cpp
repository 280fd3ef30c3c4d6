#include <cmath>
// The streams suite's arithmetic: bounds by copy-engine count, efficiency, chunking, calibration.
#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>

#include "benchmarks/streams/streams_model.h"

namespace offloadbench {

TEST(StreamsModel, BoundFollowsTheCopyEngineCount) {
  EXPECT_EQ(overlap_bound_for(0), OverlapBound::no_overlap);
  EXPECT_EQ(overlap_bound_for(1), OverlapBound::one_copy_engine);
  EXPECT_EQ(overlap_bound_for(2), OverlapBound::two_copy_engines);
  EXPECT_EQ(overlap_bound_for(7), OverlapBound::two_copy_engines);
  EXPECT_STREQ(to_string(OverlapBound::two_copy_engines), "two_copy_engines");
}

TEST(StreamsModel, BoundsAreSimpleMultiCopys) {
  const StageTimes s{3.0, 4.0, 2.0};
  EXPECT_DOUBLE_EQ(bound_seconds(s, OverlapBound::no_overlap), 9.0);
  EXPECT_DOUBLE_EQ(bound_seconds(s, OverlapBound::one_copy_engine), 5.0);   // H2D + D2H > K
  EXPECT_DOUBLE_EQ(bound_seconds(s, OverlapBound::two_copy_engines), 4.0);  // the kernel
  const StageTimes compute_bound{1.0, 10.0, 1.0};
  EXPECT_DOUBLE_EQ(bound_seconds(compute_bound, OverlapBound::one_copy_engine), 10.0);
  // More engines never make the bound worse.
  for (const StageTimes& t : {s, compute_bound, StageTimes{1, 1, 1}}) {
    EXPECT_LE(bound_seconds(t, OverlapBound::two_copy_engines),
              bound_seconds(t, OverlapBound::one_copy_engine));
    EXPECT_LE(bound_seconds(t, OverlapBound::one_copy_engine),
              bound_seconds(t, OverlapBound::no_overlap));
  }
}

TEST(StreamsModel, SharedLinkBoundWaitsForBothDirectionsAtOnce) {
  const StageTimes balanced{1.0, 1.0, 1.0};
  // 2 copy engines: H2D and D2H of the buffer together took 1.12 s, not 1 s: the link is shared.
  EXPECT_DOUBLE_EQ(shared_link_bound_seconds(balanced, OverlapBound::two_copy_engines, 1.12), 1.12);
  // A link that keeps both directions at full rate leaves the bound where it was.
  EXPECT_DOUBLE_EQ(shared_link_bound_seconds(balanced, OverlapBound::two_copy_engines, 0.9), 1.0);
  const StageTimes compute_bound{1.0, 4.0, 1.0};
  EXPECT_DOUBLE_EQ(shared_link_bound_seconds(compute_bound, OverlapBound::two_copy_engines, 1.12),
                   4.0);
  // Fewer engines serialize the copies already; an unmeasured time changes nothing.
  EXPECT_DOUBLE_EQ(shared_link_bound_seconds(balanced, OverlapBound::one_copy_engine, 5.0), 2.0);
  EXPECT_DOUBLE_EQ(shared_link_bound_seconds(balanced, OverlapBound::no_overlap, 5.0), 3.0);
  EXPECT_DOUBLE_EQ(shared_link_bound_seconds(balanced, OverlapBound::two_copy_engines, 0.0), 1.0);
  // Never below the engine-count bound, so efficiency against it is never lower.
  for (double both : {0.5, 1.0, 1.5, 3.0})
    EXPECT_GE(shared_link_bound_seconds(balanced, OverlapBound::two_copy_engines, both),
              bound_seconds(balanced, OverlapBound::two_copy_engines));
}

TEST(StreamsModel, EfficiencyIsAchievedGainOverBoundGain) {
  const double serial = 3.0, bound = 1.0;
  for (double achieved : {3.0, 2.0, 1.2, 1.0}) {
    const double achieved_gain = serial / achieved, bound_gain = serial / bound;
    EXPECT_DOUBLE_EQ(overlap_efficiency(bound, achieved), achieved_gain / bound_gain);
  }
  EXPECT_DOUBLE_EQ(overlap_efficiency(1.0, 1.0), 1.0);
  EXPECT_EQ(overlap_efficiency(0.0, 1.0), 0.0);
  EXPECT_EQ(overlap_efficiency(1.0, 0.0), 0.0);
  // The share of the possible saving realized: none at serial speed, all at the bound.
  EXPECT_DOUBLE_EQ(overlap_realized(3.0, 1.0, 3.0), 0.0);
  EXPECT_DOUBLE_EQ(overlap_realized(3.0, 1.0, 2.0), 0.5);
  EXPECT_DOUBLE_EQ(overlap_realized(3.0, 1.0, 1.0), 1.0);
  EXPECT_LT(overlap_realized(3.0, 1.0, 4.0), 0.0);
  EXPECT_EQ(overlap_realized(1.0, 1.0, 0.5), 0.0) << "nothing to save";
}

TEST(StreamsModel, ChunksCoverTheBufferOnceWithAShorterLastChunk) {
  for (std::uint64_t elements : {64ull, 1000ull, 1000003ull, 1ull << 26})
    for (int chunks : {1, 3, 4, 7, 16, 64}) {
      // ceil-sized chunks fill all C whenever elements > C·(C−1); below that some splits cannot.
      if (elements > static_cast<std::uint64_t>(chunks) * (chunks - 1)) {
        EXPECT_EQ(pipeline_problem(elements, 1, chunks), "") << elements << "/" << chunks;
      }
      if (!pipeline_problem(elements, 1, chunks).empty()) continue;
      const auto pieces = split_into_chunks(elements, chunks);
      ASSERT_EQ(pieces.size(), static_cast<std::size_t>(chunks)) << elements << "/" << chunks;
      std::uint64_t next = 0;
      for (const auto& p : pieces) {
        EXPECT_EQ(p.offset, next);
        EXPECT_GT(p.count, 0u);
        EXPECT_LE(p.count, pieces.front().count) << "only the last chunk may be shorter";
        next += p.count;
      }
      EXPECT_EQ(next, elements) << elements << "/" << chunks;
      for (std::size_t i = 0; i + 1 < pieces.size(); ++i)
        EXPECT_EQ(pieces[i].count, pieces.front().count);
    }
  const auto uneven = split_into_chunks(10, 4);  // 3, 3, 3, 1
  EXPECT_EQ(uneven.back().count, 1u);
}

TEST(StreamsModel, InvalidPipelinesAreRejectedWithAReason) {
  EXPECT_EQ(pipeline_problem(1 << 20, 4, 16), "");
  EXPECT_EQ(pipeline_problem(1 << 20, 16, 16), "");
  EXPECT_NE(pipeline_problem(1 << 20, 4, 0).find("chunks must be at least 1"), std::string::npos);
  EXPECT_NE(pipeline_problem(1 << 20, 0, 4).find("streams must be at least 1"), std::string::npos);
  EXPECT_NE(pipeline_problem(1 << 20, 8, 4).find("8 streams for 4 chunks"), std::string::npos);
  EXPECT_NE(pipeline_problem(3, 1, 4).find("a chunk would be empty"), std::string::npos);
  // 10 elements in 6 chunks of 2 fill only 5: the sixth would be empty.
  EXPECT_NE(pipeline_problem(10, 1, 6).find("fill only 5 chunks"), std::string::npos);
  EXPECT_THROW(split_into_chunks(10, 6), std::invalid_argument);
  EXPECT_THROW(split_into_chunks(1 << 20, 0), std::invalid_argument);
}

TEST(StreamsModel, CalibrationInvertsALinearKernelModel) {
  // A kernel that costs 50 µs plus 2 ns per iteration.
  auto seconds = [](int iterations) { return 50e-6 + 2e-9 * iterations; };
  const int a = 16, b = 1024;
  for (double target : {1e-3, 5e-3, 20e-3}) {
    const int iterations = fma_iterations_for(target, a, seconds(a), b, seconds(b));
    EXPECT_NEAR(seconds(iterations), target, 2e-9) << target;
  }
  EXPECT_EQ(fma_iterations_for(1e-6, a, seconds(a), b, seconds(b)), 1)
      << "never below one iteration";
  EXPECT_THROW(fma_iterations_for(1e-3, a, 1e-3, b, 1e-3), std::invalid_argument)
      << "flat: no slope";
  EXPECT_THROW(fma_iterations_for(1e-3, a, 2e-3, b, 1e-3), std::invalid_argument)
      << "faster with more work";
  EXPECT_THROW(fma_iterations_for(1e-3, a, 1e-3, a, 1e-3), std::invalid_argument);
}

TEST(StreamsModel, HostWorkUnitIsTheDependentChainItClaims) {
  // 256 steps of x -> 0.999999·x + 1e-6 move x towards 1: x_n = 1 - (1 - x_0)·0.999999^n.
  for (double seed : {0.0, 0.5, 2.0})
    EXPECT_NEAR(host_work_unit(seed), 1 - (1 - seed) * std::pow(0.999999, 256), 1e-12) << seed;
  EXPECT_NE(host_work_unit(0.5), 0.5) << "the work is not optimised away";
}

}  // namespace offloadbench
