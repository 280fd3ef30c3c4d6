// history over a tree of machines (DIR/<machine>/*.json): each machine read on its own, and a step
// that appeared at one commit on several machines named once, with how many of those measured it.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/regression/history_tree.h"
#include "harness/results/results.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace {

constexpr int kNights = 12;
constexpr int kStepNight = 6;  // the commit "sha6" makes "stepped" 15% slower where it is injected

// One night of one machine: "steady" and "stepped" (5 repetitions each, 1% noise between nights),
// and "own" — which `own_step_night` steps up by 20% on this machine alone.
nlohmann::json night(const std::string& machine, int run, bool stepped, int own_step_night,
                     std::mt19937& rng) {
  std::normal_distribution<double> noise(0.0, 0.01);
  const double stepped_level = 100 * (stepped && run >= kStepNight ? 1.15 : 1.0) * (1 + noise(rng));
  const double own_level =
      30 * (own_step_night > 0 && run >= own_step_night ? 1.2 : 1.0) * (1 + noise(rng));
  const double steady_level = 50 * (1 + noise(rng));
  nlohmann::json rows = nlohmann::json::array();
  for (int i = 0; i < 5; ++i)
    for (const auto& [name, level] : {std::pair<const char*, double>{"steady", steady_level},
                                      {"stepped", stepped_level},
                                      {"own", own_level}})
      rows.push_back({{"name", name},
                      {"run_type", "iteration"},
                      {"real_time", level * (1 + 0.001 * i)},
                      {"time_unit", "ns"}});
  return {{"context",
           {{"host", {{"hostname", machine + "-host"}}},
            {"offloadbench",
             {{"schema_version", kResultsSchemaVersion},
              {"git_sha", fmt::format("sha{}", run)},
              {"start_time_utc", fmt::format("2026-11-{:02}T02:00:00Z", run + 1)},
              {"incomplete", false}}},
            {"machine_fingerprint",
             {{"cpu_model", "Test CPU"},
              {"driver", "580.00"},
              {"gpu_models", machine == "d" ? nlohmann::json::array()
                                            : nlohmann::json::array({"GPU " + machine})}}}}},
          {"benchmarks", rows}};
}

struct Tree {
  std::filesystem::path root = testing::temp_path("ob_history_tree");
  Tree() {
    std::filesystem::create_directories(root);
    // a, b, c get the step at sha6; d (no GPU) does not; b also steps on its own at sha8.
    for (const std::string machine : {"a", "b", "c", "d"}) {
      std::mt19937 rng(static_cast<unsigned>(machine[0]));
      std::filesystem::create_directories(root / machine);
      for (int run = 0; run < kNights; ++run)
        write_json_atomically((root / machine / fmt::format("{:02}.json", run)).string(),
                              night(machine, run, machine != "d", machine == "b" ? 8 : 0, rng));
    }
  }
  ~Tree() { std::filesystem::remove_all(root); }
};

const ChangePointOptions kDefaults{};

}  // namespace

TEST(HistoryTree, RecognisesATreeAndNotAFolderOfResults) {
  Tree tree;
  EXPECT_TRUE(is_history_tree(tree.root.string()));
  EXPECT_FALSE(is_history_tree((tree.root / "a").string()));
}

TEST(HistoryTree, NamesTheStepSeveralMachinesShowOnceAndKeepsTheOthersPerMachine) {
  Tree tree;
  const auto h = load_history_tree(tree.root.string(), "real_time", false, kDefaults);
  ASSERT_EQ(h.machines.size(), 4u);
  EXPECT_EQ(h.machines[0].machine, "a");
  EXPECT_EQ(h.machines[0].label, "a-host · GPU a · driver 580.00");
  EXPECT_EQ(h.machines[3].label, "d-host · Test CPU · no GPU");
  ASSERT_EQ(h.shared_steps.size(), 1u);
  const auto& shared = h.shared_steps[0];
  EXPECT_EQ(shared.benchmark, "stepped");
  EXPECT_EQ(shared.git_sha, "sha6");
  EXPECT_EQ(shared.previous_git_sha, "sha5");
  EXPECT_TRUE(shared.slower);
  EXPECT_EQ(shared.machines, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(shared.machines_measured, 4u);  // d measured it and did not step
  EXPECT_NEAR(shared.smallest_change, 0.15, 0.03);
  EXPECT_NEAR(shared.largest_change, 0.15, 0.03);
  // b's own step is b's alone: in its table, not among the shared ones.
  int own_steps = 0;
  for (const auto& m : h.machines)
    for (const auto& b : m.history.benchmarks)
      if (b.name == "own") {
        own_steps += static_cast<int>(b.change_points.size());
        if (m.machine == "b") {
          ASSERT_EQ(b.change_points.size(), 1u);
          EXPECT_EQ(b.change_points[0].git_sha, "sha8");
        }
      }
  EXPECT_EQ(own_steps, 1);

  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  print_history_tree(out, h, false);
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  EXPECT_NE(
      printed.find("SLOWER stepped appeared in sha6 (after sha5) on 3 of 4 machines (a, b, c)"),
      std::string::npos)
      << printed;
  EXPECT_NE(printed.find("in sha6, on 3 machines (above)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("own at 2026-11-09T02:00:00Z (git sha8, after sha7)"), std::string::npos)
      << printed;

  const auto json = to_json(h);
  ASSERT_EQ(json["machines"].size(), 4u);
  EXPECT_EQ(json["machines"][1]["machine"], "b");
  EXPECT_EQ(json["machines"][1]["runs"].size(),
            static_cast<std::size_t>(kNights));  // one machine's history, whole
  ASSERT_EQ(json["shared_change_points"].size(), 1u);
  EXPECT_EQ(json["shared_change_points"][0]["machines"].size(), 3u);
  EXPECT_EQ(json["shared_change_points"][0]["verdict"], "SLOWER");
}

TEST(HistoryTree, AMachineThatCannotBeReadIsLeftOutByNameAndTheRestIsRead) {
  Tree tree;
  std::ofstream(tree.root / "c" / "broken.json") << "{ not json";
  std::filesystem::create_directories(tree.root /
                                      "plots");  // a folder without results files is not a machine
  const auto h = load_history_tree(tree.root.string(), "real_time", false, kDefaults);
  ASSERT_EQ(h.machines.size(), 3u);
  ASSERT_EQ(h.ignored.size(), 1u);
  EXPECT_EQ(h.ignored[0].rfind("c: ", 0), 0u) << h.ignored[0];
  EXPECT_NE(h.ignored[0].find("broken.json"), std::string::npos) << h.ignored[0];
  ASSERT_EQ(h.shared_steps.size(), 1u);
  EXPECT_EQ(h.shared_steps[0].machines, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(h.shared_steps[0].machines_measured, 3u);
}

TEST(HistoryTree, NoReadableMachineIsOneLineNamingTheFolder) {
  const std::filesystem::path root = testing::temp_path("ob_history_tree_empty");
  std::filesystem::create_directories(root / "a");
  std::ofstream(root / "a" / "x.json") << "[]";
  try {
    load_history_tree(root.string(), "real_time", false, kDefaults);
    ADD_FAILURE() << "expected a ResultsError";
  } catch (const ResultsError& e) {
    EXPECT_NE(std::string(e.what()).find("no machine folder with finished results files"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(root);
}

}  // namespace offloadbench
