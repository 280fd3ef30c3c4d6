// The batches family without a GPU: the table registers every placement × host memory × image ×
// batch with the fields the analysis and charts read and the bytes each placement sends; the CPU
// rows run and pass their check; every GPU row skips with the reason here.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "benchmarks/batches/batches_cases.h"
#include "harness/gpu_info.h"
#include "harness/system_info.h"
#include "tests/test_support.h"

namespace offloadbench {
namespace {

std::vector<nlohmann::json> registered_fields(const RunConfig& config) {
  clear_registered_cases();
  register_batches_suite(config);
  std::vector<nlohmann::json> fields;
  for (const auto& c : registered_cases()) fields.push_back(c.fields);
  return fields;
}

TEST(BatchesSuite, EveryPlacementAndMemoryKindAtEveryImageAndBatch) {
  RunConfig config;
  config.gpu_devices = {0};
  config.quick = false;
  std::map<std::string, int> gpu_rows_per_image;
  std::set<std::string> placements;
  for (const auto& f : registered_fields(config)) {
    EXPECT_EQ(f["family"], "batches");
    EXPECT_EQ(f["sweep"], "batch");
    if (f["op"] != "batch_to_gpu") continue;
    ++gpu_rows_per_image[f["image"].get<std::string>()];
    placements.insert(f["placement"].get<std::string>() + "/" +
                      f["host_memory"].get<std::string>());
    const std::uint64_t elements = f["elements"];
    EXPECT_EQ(elements, f["height"].get<std::uint64_t>() * f["width"].get<std::uint64_t>() *
                            f["channels"].get<std::uint64_t>() * f["batch"].get<std::uint64_t>());
    // uint8 crosses the bus when the GPU normalizes, fp32 (4×) when the CPU does.
    EXPECT_EQ(f["bytes"].get<std::uint64_t>(), f["normalize_on"] == "gpu" ? elements : 4 * elements)
        << f["placement"];
    EXPECT_EQ(f["output_bytes"].get<std::uint64_t>(),
              elements * (f["output_type"] == "fp32" ? 4 : 2));
  }
  const std::size_t per_image =
      4 * 2 * batch_sizes(false).size();  // placements × memory kinds × batches
  EXPECT_EQ(gpu_rows_per_image,
            (std::map<std::string, int>{
                {"64x64x3", per_image}, {"224x224x3", per_image}, {"1024x1280x1", per_image}}));
  EXPECT_EQ(placements.size(), 8u);
  EXPECT_EQ(batch_sizes(false).front(), 1);
  EXPECT_EQ(batch_sizes(false).back(), 256);
}

TEST(BatchesSuite, QuickKeepsCpuRowsSmallAndTheTargetCase) {
  RunConfig config;
  config.gpu_devices = {};
  const auto fields = registered_fields(config);
  const int threads = query_host_info().omp_threads > 1 ? 2 : 1;
  std::uint64_t elements = 0;
  bool target = false;
  for (const auto& f : fields) {
    ASSERT_EQ(f["op"], "cpu_normalize") << "--device cpu registers no GPU rows";
    elements += f["elements"].get<std::uint64_t>();
    EXPECT_LE(f["elements"].get<std::uint64_t>(), kQuickCpuBatchBytes);
    target |= f["image"] == "224x224x3" && f["batch"] == 64;
  }
  EXPECT_TRUE(target) << "224x224x3 × 64, the PyTorch comparison, is in the quick suite";
  EXPECT_EQ(fields.size() % threads, 0u) << "every CPU row at 1 and at all threads";
  EXPECT_LT(elements / threads, 30u << 20)
      << "about 24 Mi elements per thread count keeps the quick suite's CPU rows short";
}

TEST(BatchesSuite, CpuRowsRunAndGpuRowsSkipWithTheReason) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  register_batches_suite(config);
  const auto doc =
      testing::run_registered("batches/(64x64x3/.*/batch:4(/|$)|224x224x3/.*/batch:1(/|$))");
  const auto rows = iteration_rows(doc);
  const int cpu_views = query_host_info().omp_threads > 1 ? 2 : 1;
  ASSERT_EQ(rows.size(), 2u * (8 + cpu_views));
  const auto no_gpu = gpu_unavailable_reason(0);
  for (const auto& row : rows) {
    if (row["op"] == "cpu_normalize") {
      EXPECT_FALSE(row.value("skipped", false)) << row["name"];
      EXPECT_EQ(row["validated"], true) << row["name"];
      EXPECT_GT(row["images_per_second"].get<double>(), 0) << row["name"];
      EXPECT_GT(row["bytes_per_second"].get<double>(), 0) << row["name"];
    } else if (!no_gpu.empty()) {
      EXPECT_EQ(row["skipped"], true) << row["name"];
      EXPECT_EQ(row["skip_reason"], no_gpu) << row["name"];
    }
  }
}

}  // namespace
}  // namespace offloadbench
