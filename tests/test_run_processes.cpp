// run --processes: how the repetitions are shared out, and how the processes' files become one.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

#include "cli/run_processes.h"

namespace offloadbench::cli {

namespace {

nlohmann::json iteration(const std::string& name, int index, double time) {
  return {{"name", name},     {"run_type", "iteration"}, {"repetition_index", index},
          {"repetitions", 2}, {"real_time", time},       {"time_unit", "ns"}};
}

nlohmann::json process_file(double time, bool incomplete = false) {
  return {{"context",
           {{"offloadbench",
             {{"repetitions", 2}, {"incomplete", incomplete}, {"command_line", {"child"}}}},
            {"machine_fingerprint", {{"cpu_model", "Test CPU"}}}}},
          {"benchmarks",
           {iteration("a", 0, time),
            iteration("a", 1, time + 1),
            {{"name", "a_mean"},
             {"run_type", "aggregate"},
             {"aggregate_name", "mean"},
             {"real_time", time}},
            iteration("b", 0, 2 * time),
            iteration("b", 1, 2 * time + 1),
            {{"name", "gpu"},
             {"run_type", "iteration"},
             {"skipped", true},
             {"skip_reason", "no GPU"}}}},
          {"analysis", {{"stale", true}}}};
}

}  // namespace

TEST(RunProcesses, RepetitionsAreSharedAsEquallyAsCanBeLargerSharesFirst) {
  EXPECT_EQ(repetition_shares(5, 5), (std::vector<int>{1, 1, 1, 1, 1}));
  EXPECT_EQ(repetition_shares(5, 3), (std::vector<int>{2, 2, 1}));
  EXPECT_EQ(repetition_shares(7, 2), (std::vector<int>{4, 3}));
  EXPECT_EQ(repetition_shares(3, 1), (std::vector<int>{3}));
  EXPECT_THROW(repetition_shares(3, 4), std::invalid_argument);
  EXPECT_THROW(repetition_shares(3, 0), std::invalid_argument);
}

TEST(RunProcesses, MergedRowsAreNumberedAcrossProcessesWithTheirProcess) {
  const auto merged = merge_process_results({process_file(10), process_file(20), process_file(30)},
                                            3, 6, {"offloadbench", "run", "--processes", "3"});
  std::map<std::string, std::vector<std::pair<int, int>>>
      seen;  // name -> (process, repetition_index)
  int skipped = 0;
  for (const auto& row : merged["benchmarks"]) {
    EXPECT_NE(row["run_type"], "aggregate")
        << "a process's aggregate of its own share means nothing for the whole";
    if (row.value("skipped", false)) {
      ++skipped;
      continue;
    }
    EXPECT_EQ(row["repetitions"], 6);
    seen[row["name"]].push_back({row["process"].get<int>(), row["repetition_index"].get<int>()});
  }
  EXPECT_EQ(skipped, 1) << "a skipped benchmark is recorded once, not once per process";
  const std::vector<std::pair<int, int>> expected = {{0, 0}, {0, 1}, {1, 2},
                                                     {1, 3}, {2, 4}, {2, 5}};
  EXPECT_EQ(seen["a"], expected);
  EXPECT_EQ(seen["b"], expected);
  const auto& ob = merged["context"]["offloadbench"];
  EXPECT_EQ(ob["repetitions"], 6);
  EXPECT_EQ(ob["processes"], 3);
  EXPECT_EQ(ob["processes_finished"], 3);
  EXPECT_EQ(ob["incomplete"], false);
  EXPECT_EQ(ob["command_line"][2], "--processes");
  EXPECT_FALSE(merged.contains("analysis")) << "the processes' analyses are of their share only";
}

TEST(RunProcesses, FewerProcessesThanPlannedOrAnIncompleteOneMakeTheFileIncomplete) {
  EXPECT_EQ(
      merge_process_results({process_file(10)}, 2, 4, {})["context"]["offloadbench"]["incomplete"],
      true);
  const auto cut = merge_process_results({process_file(10), process_file(20, true)}, 2, 4, {});
  EXPECT_EQ(cut["context"]["offloadbench"]["incomplete"], true);
  EXPECT_EQ(cut["context"]["offloadbench"]["processes_finished"], 2);
  EXPECT_THROW(merge_process_results({}, 2, 4, {}), std::invalid_argument);
}

}  // namespace offloadbench::cli
