// The streams suite without a GPU: the case table registers with its fields, every row skips with
// the reason, and shapes that make no sense skip with their own reason before any GPU is asked.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "benchmarks/streams/streams_cases.h"
#include "harness/gpu_info.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace {
std::map<std::string, int> count_by_op() {
  std::map<std::string, int> counts;
  for (const auto& c : registered_cases()) ++counts[c.fields["op"].get<std::string>()];
  return counts;
}
}  // namespace

TEST(StreamsSuite, QuickRegistersTheCaseTableWithItsFields) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  register_streams_suite(config);
  const auto& cases = registered_cases();
  // Per size: ¼ and 4 → serial, async, one pipeline; 1 → pinned and pageable serial, async,
  // 5 pipelines, 1 pageable pipeline, best; then bidirectional and two host-overlap cases.
  ASSERT_EQ(cases.size(), 2u * (3 + 3 + 10 + 1 + 2));
  const auto ops = count_by_op();
  EXPECT_EQ(ops.at("serial"), 2 * 4);
  EXPECT_EQ(ops.at("pipelined"), 2 * 7);
  EXPECT_EQ(ops.at("pageable_pipelined"), 2);
  EXPECT_EQ(ops.at("pipelined_best"), 2);
  EXPECT_EQ(ops.at("bidirectional"), 2);
  EXPECT_EQ(ops.at("host_overlap"), 4);
  std::set<std::uint64_t> sizes;
  std::set<std::string> headlines;
  for (const auto& c : cases) {
    const auto& f = c.fields;
    EXPECT_EQ(c.family, "streams");
    EXPECT_EQ(c.clock, Clock::device_events) << c.name;
    EXPECT_EQ(f["device"], 0) << c.name;
    sizes.insert(f["bytes"].get<std::uint64_t>());
    EXPECT_EQ(f["elements"].get<std::uint64_t>() * 4, f["bytes"].get<std::uint64_t>());
    EXPECT_TRUE(f.contains("bound") && f.contains("host_memory")) << c.name;
    if (f.contains("headline")) headlines.insert(f["headline"].get<std::string>());
    const auto op = f["op"].get<std::string>();
    if (op == "bidirectional") continue;
    EXPECT_TRUE(f.contains("workload_ratio")) << c.name;
    if (op == "pipelined" || op == "pageable_pipelined") {
      EXPECT_LE(f["streams"].get<int>(), f["chunks"].get<int>()) << c.name;
      EXPECT_TRUE(f.contains("issue_order")) << c.name;
      EXPECT_EQ(f["host_memory"], op == "pipelined" ? "pinned" : "pageable") << c.name;
    }
    if (op != "host_overlap") {
      EXPECT_TRUE(f.contains("compare_group") && f.contains("view") && f.contains("series"))
          << c.name;
      EXPECT_EQ(f["sweep"], "bytes");
    }
  }
  EXPECT_EQ(sizes, (std::set<std::uint64_t>{64ull << 20, 256ull << 20}));
  EXPECT_TRUE(headlines.count("streams best pipelined, balanced"));
  EXPECT_TRUE(headlines.count("streams pageable pipelined, balanced"));
}

TEST(StreamsSuite, FullSweepsEveryShapeRatioAndSize) {
  clear_registered_cases();
  RunConfig config;
  config.quick = false;
  config.gpu_devices = {0};
  register_streams_suite(config);
  const auto ops = count_by_op();
  // K ∈ {1,2,4,8} × C ∈ {4,…,64} with K ≤ C is 19 shapes, × 2 orders, × 3 ratios, × 4 sizes.
  EXPECT_EQ(ops.at("pipelined"), 19 * 2 * 3 * 4);
  EXPECT_EQ(ops.at("pageable_pipelined"), 2 * 3 * 4);
  EXPECT_EQ(ops.at("pipelined_best"), 3 * 4);
  std::set<std::uint64_t> sizes;
  for (const auto& c : registered_cases()) sizes.insert(c.fields["bytes"].get<std::uint64_t>());
  EXPECT_EQ(sizes, (std::set<std::uint64_t>{16ull << 20, 64ull << 20, 256ull << 20, 1ull << 30}));
}

TEST(StreamsSuite, CpuOnlyRegistersNothing) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {};
  register_streams_suite(config);
  EXPECT_TRUE(registered_cases().empty());
}

TEST(StreamsSuite, EveryRowSkipsWithTheReasonWhenNoGpu) {
  const auto reason = gpu_unavailable_reason(0);
  if (reason.empty()) GTEST_SKIP() << "a GPU is present; tests/test_gpu_streams.cpp covers it";
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  config.sizes = std::vector<std::uint64_t>{1 << 20};
  register_streams_suite(config);
  const auto doc = testing::run_registered("streams/");
  const auto rows = iteration_rows(doc);
  ASSERT_EQ(rows.size(), registered_cases().size());
  for (const auto& row : rows) {
    EXPECT_EQ(row["skipped"], true) << row["name"];
    EXPECT_EQ(row["skip_reason"], reason) << row["name"];
    EXPECT_TRUE(row["validated"].is_null()) << row["name"];
    EXPECT_EQ(row["family"], "streams");
    EXPECT_EQ(row["bytes"], 1 << 20);
  }
}

TEST(StreamsSuite, ShapesThatMakeNoSenseSkipWithTheirReason) {
  clear_registered_cases();
  const StreamsCase base = StreamsCase{}
                               .on(0, 1 << 20)
                               .pipelined({4, 16, IssueOrder::depth_first}, HostMemoryKind::pinned);
  const std::pair<const char*, StreamsCase> bad[] = {
      {"more_streams_than_chunks",
       [&] {
         auto c = base;
         c.streams = 8;
         c.chunks = 4;
         return c;
       }()},
      {"no_chunks",
       [&] {
         auto c = base;
         c.chunks = 0;
         return c;
       }()},
      {"no_streams",
       [&] {
         auto c = base;
         c.streams = 0;
         return c;
       }()},
      {"not_whole_floats",
       [&] {
         auto c = base;
         c.bytes = 1001;
         return c;
       }()},
      {"more_chunks_than_elements",
       [&] {
         auto c = base;
         c.bytes = 16;
         c.streams = 1;
         c.chunks = 8;
         return c;
       }()},
      {"best_of_nothing",
       [&] {
         auto c = base;
         c.op = StreamsOp::pipelined_best;
         return c;
       }()},
  };
  const char* reasons[] = {"8 streams for 4 chunks",     "chunks must be at least 1",
                           "streams must be at least 1", "not a whole number of floats",
                           "a chunk would be empty",     "no pipeline shapes"};
  for (const auto& [label, c] : bad)
    register_case(measured_case(std::string("streams_bad/") + label, "streams",
                                {{"op", "pipelined"}}, Clock::device_events,
                                [c = c] { return setup_streams_case(c); }));
  const auto doc = testing::run_registered("streams_bad/");
  const auto rows = iteration_rows(doc);
  ASSERT_EQ(rows.size(), std::size(bad));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["skipped"], true) << rows[i]["name"];
    EXPECT_NE(rows[i]["skip_reason"].get<std::string>().find(reasons[i]), std::string::npos)
        << rows[i]["name"] << ": " << rows[i]["skip_reason"];
  }
}

TEST(StreamsSuite, NamesCarryTheShape) {
  const StreamsCase sized = StreamsCase{}.on(0, 256ull << 20).at_ratio(0.25);
  const StreamsCase c =
      sized.pipelined({4, 16, IssueOrder::breadth_first}, HostMemoryKind::pageable);
  EXPECT_EQ(streams_case_name(c, ""),
            "streams/pipelined/pageable/ratio:0.25/K:4/C:16/breadth_first/256MiB");
  EXPECT_EQ(streams_case_name(sized.host_overlap(true), "/gpu:1"),
            "streams/host_overlap/sync_api/ratio:1/256MiB/gpu:1");
  EXPECT_EQ(streams_case_name(sized.bidirectional(), ""), "streams/bidirectional/pinned/256MiB");
}

}  // namespace offloadbench
