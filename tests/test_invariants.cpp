// The self-checks (harness/analysis/invariants.h and the families' own): each rule on a hand-made
// file that breaks it and one that keeps it; broken rows out of speedups, fits and headlines; and
// the committed H100 reference files, whose contradictions an independent audit listed (issue text
// in the note of the change that added these rules), flagged exactly.
#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "benchmarks/family_analyses.h"
#include "harness/analysis/analysis.h"
#include "harness/analysis/invariants.h"

namespace offloadbench {
namespace {

nlohmann::json row(const std::string& name, double seconds, nlohmann::json fields,
                   int repetition = 0) {
  nlohmann::json r = {{"name", name},
                      {"run_type", "iteration"},
                      {"repetition_index", repetition},
                      {"real_time", seconds * 1e3},
                      {"time_unit", "ms"},
                      {"iterations", 10},
                      {"skipped", false}};
  r.update(fields);
  return r;
}

// Three repetitions of a case, `seconds` each (times `spread` on the last).
void add_case(std::vector<nlohmann::json>& rows, const std::string& name, double seconds,
              const nlohmann::json& fields, double spread = 1.0) {
  for (int rep = 0; rep < 3; ++rep)
    rows.push_back(row(name, seconds * (rep == 2 ? spread : 1.0), fields, rep));
}

nlohmann::json document(const std::vector<nlohmann::json>& rows) {
  return {{"context", {{"offloadbench", {{"schema_version", 1}}}}}, {"benchmarks", rows}};
}

// rule id -> the case names it flagged (repetitions folded).
std::map<std::string, std::set<std::string>> flagged(const nlohmann::json& analysis) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& v : analysis["invariants"]["violations"])
    out[v["invariant"]].insert(v["name"].get<std::string>());
  return out;
}

std::map<std::string, std::set<std::string>> flagged(const std::vector<nlohmann::json>& rows) {
  return flagged(analyze(document(rows), family_analyses()));
}

TEST(Invariants, DeviceTimeLongerThanHostTimeIsFlaggedPerRepetition) {
  std::vector<nlohmann::json> rows;
  for (int rep = 0; rep < 3; ++rep) {
    const double device =
        rep == 1 ? 2.4e-3 : 1.0e-3;  // 2.4× the host's wall time in repetition 1 only
    rows.push_back(
        row("copy/256MiB", 1.0e-3, {{"device_time_s", device}, {"host_time_s", 1.0e-3}}, rep));
    rows.push_back(
        row("copy/1MiB", 1.05e-3, {{"device_time_s", 1.05e-3}, {"host_time_s", 1.0e-3}}, rep));
  }
  const auto a = analyze(document(rows), family_analyses());
  ASSERT_EQ(a["invariants"]["violations"].size(), 1u);
  const auto& v = a["invariants"]["violations"][0];
  EXPECT_EQ(v["invariant"], "device_within_host");
  EXPECT_EQ(v["name"], "copy/256MiB");
  EXPECT_EQ(v["repetition_index"], 1);
  EXPECT_NE(v["reason"].get<std::string>().find("2.40×"), std::string::npos) << v["reason"];
}

TEST(Invariants, EfficiencyAndRatesAboveTheirBound) {
  std::vector<nlohmann::json> rows;
  add_case(rows, "over/efficiency", 1, {{"overlap_efficiency", 2.1}});
  add_case(rows, "over/peak", 1, {{"percent_of_peak", 110.0}});
  add_case(rows, "over/ceiling", 1,
           {{"bytes_per_second", 60e9}, {"ceiling_bytes_per_second", 50e9}});
  add_case(rows, "within", 1,
           {{"shared_link_efficiency", 1.04},
            {"percent_of_peak", 99.0},
            {"bytes_per_second", 51e9},
            {"ceiling_bytes_per_second", 50e9}});
  EXPECT_EQ(flagged(rows)["within_bound"],
            (std::set<std::string>{"over/efficiency", "over/peak", "over/ceiling"}));
}

TEST(Invariants, UnsteadyCasesAreFlaggedSteadyOnesAreNot) {
  std::vector<nlohmann::json> rows;
  add_case(rows, "bimodal", 0.25e-3, nlohmann::json::object(), 2.6);  // 243, 243, 652 µs: cv 0.64
  add_case(rows, "steady", 1e-3, nlohmann::json::object(), 1.1);
  EXPECT_EQ(flagged(rows)["steady"], std::set<std::string>{"bimodal"});
}

nlohmann::json view_fields(const std::string& view, double batch) {
  return {{"compare_group", "sgemm/784x128"},
          {"view", view},
          {"series", "tiled"},
          {"sweep", "batch"},
          {"batch", batch},
          {"device", view.rfind("gpu", 0) == 0 ? nlohmann::json(0) : nlohmann::json("cpu")}};
}

TEST(Invariants, ATransferInclusiveViewFasterThanTheKernelFlagsBoth) {
  std::vector<nlohmann::json> rows;
  add_case(rows, "kernel/256", 0.272e-3, view_fields("gpu_kernel", 256));
  add_case(rows, "pinned/256", 0.245e-3, view_fields("gpu_pinned", 256));  // warm L2 after the copy
  add_case(rows, "kernel/1024", 1.0e-3, view_fields("gpu_kernel", 1024));
  add_case(rows, "pinned/1024", 0.97e-3, view_fields("gpu_pinned", 1024));  // within the 5% slack
  add_case(rows, "cpu/256", 1e-3, view_fields("cpu_all", 256));
  add_case(rows, "cpu/1024", 4e-3, view_fields("cpu_all", 1024));
  const auto a = analyze(document(rows), family_analyses());
  EXPECT_EQ(flagged(a)["transfers_not_faster_than_kernel"],
            (std::set<std::string>{"kernel/256", "pinned/256"}));
  for (const auto& s : a["speedups"])
    EXPECT_NE(s["size"], 256) << "a broken row became a speedup: " << s;
  EXPECT_FALSE(a["speedups"].empty());
}

TEST(Invariants, CpuCopiesOfTheSameTrafficDisagreeing) {
  const double mib = 1 << 20;
  auto copy = [&](const std::string& op, double bytes_moved, double threads, double rate) {
    return nlohmann::json{{"op", op},
                          {"device", "cpu"},
                          {"cpu_threads", threads},
                          {"bytes_per_second", rate},
                          {"bytes", bytes_moved}};
  };
  std::vector<nlohmann::json> rows;
  // 512 MiB moved in each: 99 GB/s against 228 GB/s on 16 threads; 27 against 29 on one (within
  // 10%).
  add_case(rows, "memcpy/16t", 512 * mib / 99e9, copy("host_memcpy", 256 * mib, 16, 99e9));
  add_case(rows, "copy/16t", 512 * mib / 228e9, copy("copy", 512 * mib, 16, 228e9));
  add_case(rows, "memcpy/1t", 512 * mib / 27e9, copy("host_memcpy", 256 * mib, 1, 27e9));
  add_case(rows, "copy/1t", 512 * mib / 29e9, copy("copy", 512 * mib, 1, 29e9));
  // From a cache (8 KiB moved) two implementations may differ: not compared.
  add_case(rows, "memcpy/small", 8192 / 2.6e9, copy("host_memcpy", 4096, 16, 2.6e9));
  add_case(rows, "copy/small", 8192 / 224e9, copy("copy", 8192, 16, 224e9));
  // A first-touch copy also takes page faults: not the same traffic.
  auto first_touch = copy("host_memcpy", 256 * mib, 16, 3e9);
  first_touch["touch"] = "first_touch";
  add_case(rows, "memcpy/first_touch", 512 * mib / 3e9, first_touch);
  EXPECT_EQ(flagged(rows)["same_traffic"], (std::set<std::string>{"memcpy/16t", "copy/16t"}));
}

TEST(Invariants, ComparisonsSkipRowsThatBrokeARuleOfTheirOwn) {
  const double mib = 1 << 20;
  std::vector<nlohmann::json> rows;
  // The slow copy is unsteady: flagged for that, and not held against the steady one.
  add_case(
      rows, "memcpy", 512 * mib / 99e9,
      {{"op", "host_memcpy"}, {"device", "cpu"}, {"cpu_threads", 16}, {"bytes_per_second", 99e9}},
      3.0);
  add_case(rows, "copy", 512 * mib / 228e9,
           {{"op", "copy"}, {"device", "cpu"}, {"cpu_threads", 16}, {"bytes_per_second", 228e9}});
  auto f = flagged(rows);
  EXPECT_EQ(f["steady"], std::set<std::string>{"memcpy"});
  EXPECT_TRUE(f["same_traffic"].empty());
}

nlohmann::json mlp_fields(const std::string& view, const std::string& launch,
                          const std::string& precision, double loss) {
  return {{"family", "mlp"},        {"compare_group", "mlp/784-128-10/train_sgd"},
          {"sweep", "batch"},       {"batch", 64},
          {"view", view},           {"launch_mode", launch},
          {"precision", precision}, {"initial_loss", loss}};
}

TEST(Invariants, MlpRowsOfAGroupStartFromTheSameLoss) {
  std::vector<nlohmann::json> rows;
  add_case(rows, "cpu_1t", 1e-3, mlp_fields("cpu_1t", "", "", 2.305760));
  add_case(rows, "eager/fp32", 1e-4, mlp_fields("gpu_kernel", "eager", "fp32", 2.305760));
  add_case(rows, "eager/bf16", 1e-4,
           mlp_fields("gpu_kernel", "eager", "bf16", 2.305803));  // rounding: 2e-5
  add_case(rows, "graph/fp32", 1e-4,
           mlp_fields("gpu_kernel", "graph", "fp32", 2.239219));  // one step ahead
  add_case(rows, "graph/bf16", 1e-4,
           mlp_fields("gpu_kernel", "graph", "bf16", 2.31039 * 2.305760 / 2.316013));
  EXPECT_EQ(flagged(rows)["mlp_same_initial_loss"],
            (std::set<std::string>{"graph/fp32", "graph/bf16"}));
}

TEST(Invariants, MlpWithoutCpuRowsTheEagerRowsAreTheReference) {
  std::vector<nlohmann::json> rows;
  add_case(rows, "eager/fp32", 1e-4, mlp_fields("gpu_kernel", "eager", "fp32", 2.272266));
  add_case(rows, "graph/fp32", 1e-4, mlp_fields("gpu_kernel", "graph", "fp32", 0.429533));
  add_case(rows, "graph/resident", 1e-4, mlp_fields("gpu_kernel", "graph", "fp32", 0.429533));
  EXPECT_EQ(flagged(rows)["mlp_same_initial_loss"],
            (std::set<std::string>{"graph/fp32", "graph/resident"}));
}

nlohmann::json streams_fields(const std::string& op, double ratio, double h2d, double d2h,
                              double serial) {
  return {{"family", "streams"},
          {"op", op},
          {"device", 0},
          {"host_memory", "pinned"},
          {"workload_ratio", ratio},
          {"bytes", 64 << 20},
          {"h2d_time_s", h2d},
          {"d2h_time_s", d2h},
          {"kernel_time_s", ratio * h2d},
          {"serial_time_s", serial}};
}

TEST(Invariants, StreamsCalibratedDuringASlowdown) {
  std::vector<nlohmann::json> rows;
  // ratio 0.25: the calibration's H2D took 3.3 ms (the copy takes 1.2) and its serial pass 6.5 ms,
  // while the serial case itself takes 3.3 ms.
  add_case(rows, "serial/0.25", 3.318e-3,
           streams_fields("serial", 0.25, 3.327e-3, 1.93e-3, 6.49e-3));
  add_case(rows, "async/0.25", 3.27e-3, streams_fields("async", 0.25, 3.327e-3, 1.93e-3, 6.49e-3));
  add_case(rows, "serial/1", 3.677e-3, streams_fields("serial", 1, 1.224e-3, 1.218e-3, 3.682e-3));
  add_case(rows, "pipelined/1", 1.62e-3,
           streams_fields("pipelined", 1, 1.224e-3, 1.218e-3, 3.682e-3));
  // ratio 4: serial agrees, but its D2H stage was calibrated at 2× the others'.
  add_case(rows, "serial/4", 7.37e-3, streams_fields("serial", 4, 1.225e-3, 2.5e-3, 7.38e-3));
  EXPECT_EQ(flagged(rows)["streams_calibration"],
            (std::set<std::string>{"serial/0.25", "async/0.25", "serial/4"}));
}

TEST(Invariants, StreamsBestPipelineSlowerThanAShapeItSearched) {
  std::vector<nlohmann::json> rows;
  add_case(rows, "serial", 3.677e-3, streams_fields("serial", 1, 1.224e-3, 1.218e-3, 3.682e-3));
  add_case(rows, "fixed", 1.62e-3, streams_fields("pipelined", 1, 1.224e-3, 1.218e-3, 3.682e-3));
  add_case(rows, "best", 2.23e-3,
           streams_fields("pipelined_best", 1, 1.224e-3, 1.218e-3, 3.682e-3));
  EXPECT_EQ(flagged(rows)["streams_best_not_slower"], std::set<std::string>{"best"});
  rows.clear();
  add_case(rows, "serial", 3.677e-3, streams_fields("serial", 1, 1.224e-3, 1.218e-3, 3.682e-3));
  add_case(rows, "fixed", 1.62e-3, streams_fields("pipelined", 1, 1.224e-3, 1.218e-3, 3.682e-3));
  add_case(rows, "best", 1.60e-3,
           streams_fields("pipelined_best", 1, 1.224e-3, 1.218e-3, 3.682e-3));
  EXPECT_TRUE(flagged(rows)["streams_best_not_slower"].empty());
}

nlohmann::json copy_fields(const std::string& memory, double bytes,
                           const std::string& series = "") {
  nlohmann::json f = {{"family", "transfer"}, {"op", "device_copy"},   {"device", 0},
                      {"direction", "h2d"},   {"host_memory", memory}, {"bytes", bytes}};
  if (!series.empty()) f["series"] = series;
  return f;
}

TEST(Invariants, AnchorRowsStayOutOfOurFitsAndFindings) {
  std::vector<nlohmann::json> rows;
  for (double bytes : {1e3, 1e5, 1e7, 1e9}) {
    const double seconds = 5e-6 + bytes / 50e9;
    auto ours = copy_fields("pinned", bytes);
    auto theirs = copy_fields("pinned", bytes, "pytorch");
    ours["bytes_per_second"] = bytes / seconds;
    theirs["bytes_per_second"] = bytes / (2 * seconds);
    add_case(rows, "ours/" + std::to_string(bytes), seconds, ours);
    add_case(rows, "pytorch/" + std::to_string(bytes), 2 * seconds, theirs);
  }
  const auto a = analyze(document(rows), family_analyses());
  ASSERT_EQ(a["transfer_model"].size(), 1u);
  EXPECT_EQ(a["transfer_model"][0]["points"], 12);  // ours only: 4 sizes × 3 repetitions
  EXPECT_NEAR(a["transfer_model"][0]["beta_bytes_per_second"].get<double>(), 50e9, 1e9);
  bool rate_line = false;
  for (const auto& line : a["headlines"])
    if (line.get<std::string>().find("H2D pinned 50.0 GB/s") != std::string::npos) rate_line = true;
  EXPECT_TRUE(rate_line) << a["headlines"].dump(1);
}

TEST(Invariants, BrokenRowsAreNotHeadlinesAndTheFileSaysWhy) {
  std::vector<nlohmann::json> rows;
  for (int rep = 0; rep < 3; ++rep) {
    auto f = copy_fields("pinned", 256.0 * (1 << 20));
    f["device_time_s"] = 10e-3;
    f["host_time_s"] = 5e-3;  // every repetition impossible
    f["bytes_per_second"] = 26.8e9;
    rows.push_back(row("registered/256MiB", 10e-3, f, rep));
  }
  const auto a = analyze(document(rows), family_analyses());
  ASSERT_FALSE(a["headlines"].empty());
  EXPECT_EQ(a["headlines"][0].get<std::string>().rfind("SELF-CHECK: 3 rows broke a rule", 0), 0u)
      << a["headlines"][0];
  for (const auto& line : a["headlines"])
    EXPECT_EQ(line.get<std::string>().find("26.8 GB/s"), std::string::npos) << line;
  EXPECT_TRUE(a["transfer_model"].empty());
}

TEST(Invariants, ACleanFileSaysEveryRuleHolds) {
  std::vector<nlohmann::json> rows;
  add_case(rows, "steady", 1e-3, {{"device_time_s", 1e-3}, {"host_time_s", 1.02e-3}});
  const auto a = analyze(document(rows), family_analyses());
  EXPECT_TRUE(a["invariants"]["violations"].empty());
  EXPECT_GE(a["invariants"]["rules"].size(), generic_invariants().size());
  EXPECT_EQ(a["headlines"][0].get<std::string>().rfind("self-checks: all", 0), 0u)
      << a["headlines"][0];
}

// ---- the committed H100 reference files ----

nlohmann::json load(const std::string& file) {
  std::ifstream in(std::string(OFFLOADBENCH_REFERENCE_DIR) + "/" + file);
  return nlohmann::json::parse(in);
}

TEST(InvariantsOnReference, H100QuickFlagsTheAuditedContradictions) {
  const auto a = analyze(load("nvidia-h100-80gb-hbm3-2026-11-26-quick.json"), family_analyses());
  auto f = flagged(a);
  // 1. Streams calibrated during a slowdown (ratio 0.25 at 64 and 256 MiB): the pipelines'
  // efficiency above the bound, the serial and async rows by their calibration.
  EXPECT_EQ(f["within_bound"],
            (std::set<std::string>{
                "streams/pipelined/pinned/ratio:0.25/K:4/C:16/depth_first/64MiB/manual_time",
                "streams/pipelined/pinned/ratio:0.25/K:4/C:16/depth_first/256MiB/manual_time"}));
  EXPECT_EQ(f["streams_calibration"],
            (std::set<std::string>{"streams/serial/pinned/ratio:0.25/64MiB/manual_time",
                                   "streams/async/pinned/ratio:0.25/64MiB/manual_time",
                                   "streams/serial/pinned/ratio:0.25/256MiB/manual_time"}));
  // (async ratio:0.25/256MiB is also unsteady, cv 0.25: flagged by `steady` first.)
  EXPECT_TRUE(f["steady"].count("streams/async/pinned/ratio:0.25/256MiB/manual_time"));
  // 2. Device time longer than host time: 13 repetitions of large copies, plus all three of the
  // 64 KiB pageable bidirectional copy (1.34–1.42×, the same every time).
  EXPECT_EQ(
      f["device_within_host"],
      (std::set<std::string>{
          "transfer/h2d/registered/256MiB/manual_time", "transfer/d2h/pageable/16MiB/manual_time",
          "transfer/d2h/pageable/256MiB/manual_time", "transfer/d2h/pinned/16MiB/manual_time",
          "transfer/bidirectional/pageable/64KiB/manual_time",
          "transfer/bidirectional/pageable/16MiB/manual_time",
          "transfer/bidirectional/pageable/256MiB/manual_time"}));
  int large = 0;
  for (const auto& v : a["invariants"]["violations"])
    if (v["invariant"] == "device_within_host" &&
        v["name"].get<std::string>().find("64KiB") == std::string::npos)
      ++large;
  EXPECT_EQ(large, 13);
  EXPECT_EQ(f["streams_best_not_slower"],
            std::set<std::string>{"streams/pipelined_best/pinned/ratio:1/64MiB/manual_time"});
  // 4. Every graph row of the training groups starts from other weights (29 cases).
  EXPECT_EQ(f["mlp_same_initial_loss"].size(), 29u);
  for (const auto& name : f["mlp_same_initial_loss"])
    EXPECT_NE(name.find("/graph/"), std::string::npos) << name;
  // 5. 39 cases above cv 0.2, among them the ones the headlines were printed from.
  EXPECT_EQ(f["steady"].size(), 39u);
  for (const char* name : {"streams/serial/pageable/ratio:1/256MiB/manual_time",
                           "compute/triad/fp32/gpu_pinned/64Mi/manual_time",
                           "compute/sgemm/square/openblas/cpu_1t/1024/real_time",
                           "mlp/784-128-10/train_adamw/b64/cpu_1t/real_time"})
    EXPECT_TRUE(f["steady"].count(name)) << name;
  // 6. The two CPU copy baselines.
  EXPECT_EQ(f["same_traffic"],
            (std::set<std::string>{"transfer/host_memcpy/pretouched/threads:16/256MiB/real_time",
                                   "compute/copy/fp32/cpu_all/64Mi/real_time"}));
  // The tiled SGEMM's pinned view faster than its kernel view (warm L2 against a flushed one).
  EXPECT_EQ(
      f["transfers_not_faster_than_kernel"],
      (std::set<std::string>{
          "compute/sgemm/mlp_784x128/tiled/gpu_pinned/batch:256/manual_time",
          "compute/sgemm/mlp_784x128/tiled/gpu_kernel/batch:256/min_time:0.002/manual_time"}));
  EXPECT_EQ(f.size(), 8u) << "a rule flagged rows the audit did not find";

  // None of them is a finding any more.
  const auto headlines = a["headlines"].dump();
  for (const char* gone :
       {"4.09×", "210%", "registered 33.5 GB/s", "after 1 copy", "pinned latency"})
    EXPECT_EQ(headlines.find(gone), std::string::npos) << gone;
  EXPECT_NE(headlines.find("registered 54.6 GB/s"), std::string::npos) << headlines;
  EXPECT_NE(headlines.find("1-byte round trip 5.65 µs (measured)"), std::string::npos) << headlines;
}

TEST(InvariantsOnReference, H100FirstLightKeepsPyTorchOutOfOurFindings) {
  const auto a =
      analyze(load("nvidia-h100-80gb-hbm3-2026-11-26-first-light.json"), family_analyses());
  const auto headlines = a["headlines"].dump();
  // Ours alone: 55.26 and 8.88 GB/s (pooled with PyTorch's rows they read 55.1 and 8.0).
  EXPECT_NE(headlines.find("H2D pinned 55.3 GB/s"), std::string::npos) << headlines;
  EXPECT_NE(headlines.find("pageable 8.9 GB/s"), std::string::npos) << headlines;
  EXPECT_EQ(headlines.find("pytorch"), std::string::npos) << headlines;
  // Pooled, the H2D fits had 9 points where the others have 6: ours alone, every fit has the same
  // count.
  std::map<std::pair<std::string, std::string>, int> points;
  for (const auto& fit : a["transfer_model"])
    points[{fit["direction"], fit["host_memory"]}] = fit["points"];
  const auto count = [&](const char* direction, const char* memory) {
    const auto it = points.find({direction, memory});
    return it == points.end() ? -1 : it->second;
  };
  EXPECT_EQ(count("h2d", "pinned"), 6);  // 2 sizes × 3 repetitions
  EXPECT_EQ(count("d2h", "pinned"), 6);
  for (const auto& [key, n] : points) EXPECT_LE(n, 6) << key.first << " " << key.second;
  auto f = flagged(a);
  EXPECT_EQ(f["mlp_same_initial_loss"].size(), 10u);
  for (const auto& name : f["mlp_same_initial_loss"])
    EXPECT_NE(name.find("/graph/"), std::string::npos) << name;
}

}  // namespace
}  // namespace offloadbench
