// The memset family on the CPU: its table registers every view and size with the fields the
// analysis pairs on, the host fill writes every byte at any size and thread count, the check finds
// one wrong byte anywhere and rejects fills that skip work, CPU rows validate and count bytes
// written once, and GPU rows say why they cannot run where no GPU can be used.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "benchmarks/memset/memset_cases.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"
#include "harness/results/results.h"
#include "harness/results_reporter.h"
#include "harness/run_context.h"
#include "harness/system_info.h"

namespace offloadbench {
namespace {

// The registered cases matching `filter`, run with a tiny time budget through the real results
// reporter; the per-repetition rows of the file it wrote. (A family folder includes no test helpers
// from tests/: the layering puts benchmarks/ below it.)
std::vector<nlohmann::json> run_memset_cases(const std::string& filter) {
  std::vector<std::string> args = {"tests", "--benchmark_filter=" + filter,
                                   "--benchmark_repetitions=1", "--benchmark_min_time=0.001"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  static char program_name[] = "tests";  // Google Benchmark keeps argv[0] after Initialize returns
  argv[0] = program_name;
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  const auto path =
      (std::filesystem::temp_directory_path() / fmt::format("ob_memset_test_{}.json", ::getpid()))
          .string();
  ResultsReporter reporter(
      path, make_run_context(RunDescription{{"memset"}, "quick", 1, "cpu", args}), 0, false);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.finish();
  const auto doc = load_results(path);
  std::filesystem::remove(path);
  return iteration_rows(doc);
}

int cpu_views() { return query_host_info().omp_threads > 1 ? 2 : 1; }

TEST(MemsetSuite, TableRegistersEveryViewAndSizeWithThePairingFields) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};  // registering needs no GPU; running them is another test
  config.sizes = std::vector<std::uint64_t>{1 << 20, 4096, 1024, 4096};  // unordered, with a repeat
  register_memset_suite(config);
  const auto& cases = registered_cases();
  ASSERT_EQ(cases.size(), 3u * (1 + cpu_views()));
  std::set<std::string> views;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto& f = c.fields;
    EXPECT_EQ(c.family, "memset");
    EXPECT_EQ(f["family"], "memset");
    EXPECT_EQ(f["op"], "memset");
    EXPECT_EQ(f["compare_group"], "memset/bytes");
    EXPECT_EQ(f["sweep"], "bytes");
    EXPECT_EQ(f["bytes_counted"], "write");
    const auto bytes = f["bytes"].get<std::uint64_t>();
    EXPECT_TRUE(bytes == 1024 || bytes == 4096 || bytes == (1u << 20));
    const auto view = f["view"].get<std::string>();
    views.insert(view);
    EXPECT_EQ(f["headline"], "memset " + view);
    if (view == "gpu_kernel") {
      EXPECT_EQ(f["device"], 0);
      EXPECT_FALSE(f.contains("cpu_threads"));
      EXPECT_EQ(c.clock, Clock::device_events);
      EXPECT_GT(c.min_time_s, 0);  // cold samples: a shorter budget of timed time
    } else {
      EXPECT_EQ(f["device"], "cpu");
      EXPECT_EQ(f["cpu_threads"], view == "cpu_1t" ? 1 : query_host_info().omp_threads);
      EXPECT_EQ(c.clock, Clock::host_wall);
    }
  }
  EXPECT_EQ(views.count("gpu_kernel"), 1u);
  EXPECT_EQ(views.count("cpu_1t"), 1u);
  EXPECT_EQ(views.count("cpu_all"), cpu_views() > 1 ? 1u : 0u);
  EXPECT_FALSE(case_fields("memset/cpu_1t/1MiB").is_null());
  EXPECT_FALSE(case_fields("memset/gpu_kernel/4KiB").is_null());
  EXPECT_EQ(case_fields("memset/cpu_1t/1KiB")["bytes"], 1024);

  RunConfig quick, full;
  EXPECT_EQ(memset_sizes(quick), (std::vector<std::uint64_t>{4ull << 10, 64ull << 10, 1ull << 20,
                                                             16ull << 20, 256ull << 20}));
  full.quick = false;
  const auto full_sizes = memset_sizes(full);
  ASSERT_EQ(full_sizes.size(), 19u);  // 4 KiB, 8 KiB, …, 1 GiB
  EXPECT_EQ(full_sizes.front(), 4ull << 10);
  EXPECT_EQ(full_sizes.back(), 1ull << 30);
  EXPECT_EQ(memset_suite().name, "memset");
  EXPECT_FALSE(memset_suite().description.empty());
  clear_registered_cases();
}

TEST(MemsetSuite, FillValuesChangeEveryCallAndNeverWriteZero) {
  std::set<int> seen;
  std::uint8_t v = 0;
  for (int call = 0; call < 255; ++call) {
    const std::uint8_t next = next_fill_value(v);
    EXPECT_NE(next, v);
    EXPECT_NE(next, 0);
    seen.insert(next);
    v = next;
  }
  EXPECT_EQ(seen.size(), 255u);  // every non-zero byte value, then the cycle starts again
  EXPECT_EQ(next_fill_value(v), 1);
}

TEST(MemsetSuite, HostMemsetWritesEveryByteAndNothingAroundIt) {
  const int all = query_host_info().omp_threads;
  for (std::uint64_t bytes : {1ull, 63ull, 64ull, 65ull, 4097ull, (1ull << 20) + 3})
    for (int threads : {1, 2, 3, 7, all}) {
      SCOPED_TRACE(fmt::format("{} bytes, {} threads", bytes, threads));
      std::vector<std::uint8_t> buffer(bytes + 2, 0xEE);  // one guard byte either side
      host_memset(buffer.data() + 1, bytes, 0x3C, threads);
      EXPECT_EQ(buffer.front(), 0xEE);
      EXPECT_EQ(buffer.back(), 0xEE);
      std::uint64_t wrong = 0;
      for (std::uint64_t i = 1; i <= bytes; ++i) wrong += buffer[i] != 0x3C;
      EXPECT_EQ(wrong, 0u);
    }
}

TEST(MemsetSuite, CheckFindsOneWrongByteAnywhere) {
  const std::uint64_t bytes = 4099;  // whole words and a tail
  std::vector<std::uint8_t> buffer(bytes, 0x5A);
  EXPECT_EQ(check_fill(buffer.data(), bytes, 0x5A), "");
  EXPECT_NE(check_fill(buffer.data(), bytes, 0x5B), "");
  for (std::uint64_t at : {0ull, 7ull, 8ull, 2048ull, 4095ull, 4096ull, 4098ull}) {
    buffer[at] = 0x5B;
    const auto found = check_fill(buffer.data(), bytes, 0x5A);
    EXPECT_NE(found.find(fmt::format("byte {} of {}", at, bytes)), std::string::npos) << found;
    buffer[at] = 0x5A;
  }
  EXPECT_EQ(check_fill(buffer.data(), 0, 0x5A), "");
}

TEST(MemsetSuite, ASampledCheckReadsEveryStrideThPageAndTheLastOne) {
  const std::uint64_t page = 4096, bytes = 130 * page + 5;  // pages 0..130, the last one partial
  std::vector<std::uint8_t> buffer(bytes, 0x5A);
  EXPECT_EQ(check_fill(buffer.data(), bytes, 0x5A, 64), "");
  for (const std::uint64_t at :
       std::vector<std::uint64_t>{0, page - 1, 64 * page + 17, 128 * page, 130 * page + 4}) {
    buffer[at] = 0x5B;
    const auto found = check_fill(buffer.data(), bytes, 0x5A, 64);
    EXPECT_NE(found.find(fmt::format("byte {} of {}", at, bytes)), std::string::npos)
        << at << ": " << found;
    buffer[at] = 0x5A;
  }
  buffer[page + 3] = 0x5B;  // page 1 is not in the sample; the full check finds it
  EXPECT_EQ(check_fill(buffer.data(), bytes, 0x5A, 64), "");
  EXPECT_NE(check_fill(buffer.data(), bytes, 0x5A), "");
  EXPECT_EQ(check_fill(buffer.data(), 0, 0x5A, 64), "");
}

// Fills that cut corners; each must fail the case's own verify step.
void no_fill(void*, std::uint64_t, std::uint8_t, int) {}
void fill_all_but_the_last_byte(void* data, std::uint64_t bytes, std::uint8_t value, int threads) {
  host_memset(data, bytes - 1, value, threads);
}
void fill_one_stale_value(void* data, std::uint64_t bytes, std::uint8_t, int threads) {
  host_memset(data, bytes, 1, threads);  // right for the first call only
}

TEST(MemsetSuite, CpuSetupVerifiesAndRejectsFillsThatSkipWork) {
  for (int threads : {1, query_host_info().omp_threads}) {
    const MemsetCase c{(1 << 20) + 5, threads == 1 ? MemsetView::cpu_1t : MemsetView::cpu_all, -1,
                       threads};
    SCOPED_TRACE(fmt::format("{} threads", threads));
    auto good = setup_memset_cpu(c);
    ASSERT_EQ(good.skip_reason, "");
    EXPECT_EQ(good.measurement.verify(), "");
    EXPECT_EQ(good.measurement.work.bytes, static_cast<double>(c.bytes));  // written once, not read
    good.measurement.call();  // the timed call after a verify still writes the next value
    EXPECT_EQ(good.measurement.verify(), "");

    EXPECT_NE(setup_memset_cpu(c, no_fill).measurement.verify(), "");
    const auto last = setup_memset_cpu(c, fill_all_but_the_last_byte).measurement.verify();
    EXPECT_NE(last.find(fmt::format("byte {} of {}", c.bytes - 1, c.bytes)), std::string::npos)
        << last;
    EXPECT_NE(setup_memset_cpu(c, fill_one_stale_value).measurement.verify(), "");
  }
}

TEST(MemsetSuite, CpuRowsValidateAndCountTheBytesWrittenOnce) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {};
  config.sizes = std::vector<std::uint64_t>{4096, 1 << 20};
  register_memset_suite(config);
  const auto rows = run_memset_cases("memset/");
  ASSERT_EQ(rows.size(), 2u * cpu_views());
  for (const auto& row : rows) {
    SCOPED_TRACE(row["name"].get<std::string>());
    EXPECT_EQ(row["skipped"], false) << row.value("skip_reason", "");
    EXPECT_EQ(row["validated"], true) << row.value("invalid_reason", "");
    EXPECT_EQ(row["device"], "cpu");
    const double seconds = row["real_time"].get<double>() * 1e-6;  // per iteration = per call
    EXPECT_NEAR(row["bytes_per_second"].get<double>() * seconds / row["bytes"].get<double>(), 1.0,
                0.02);
    EXPECT_FALSE(
        row.contains("ceiling_bytes_per_second"));  // no host DRAM peak is known to the harness
  }
  clear_registered_cases();
}

TEST(MemsetSuite, GpuRowsSkipWithTheReasonWhereNoGpuCanBeUsed) {
  if (gpu_unavailable_reason(0).empty())
    GTEST_SKIP() << "a GPU is usable here: the GPU rows run instead";
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  config.sizes = std::vector<std::uint64_t>{4096, 1 << 20};
  register_memset_suite(config);
  const auto rows = run_memset_cases("memset/gpu_kernel/");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    SCOPED_TRACE(row["name"].get<std::string>());
    EXPECT_EQ(row["skipped"], true);
    EXPECT_EQ(row["skip_reason"], gpu_unavailable_reason(0));
    EXPECT_FALSE(row["skip_reason"].get<std::string>().empty());
    EXPECT_EQ(row["view"], "gpu_kernel");
    EXPECT_EQ(row["device"], 0);
  }
  clear_registered_cases();
}

}  // namespace
}  // namespace offloadbench
