// The copy-idiom and pinning-at-scale cases without a GPU: the table of PyTorch idioms and pinning
// at scale registers with the fields a user reads (which idiom a row models, THP mode), every GPU
// row skips with the reason here, the pin thread's schedule keeps its order and overlaps, the host
// half runs on the CPU and says whether madvise took, and the analysis turns rows into the sections
// and headline lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "benchmarks/family_analyses.h"
#include "benchmarks/transfer/host_pages.h"
#include "benchmarks/transfer/transfer_cases.h"
#include "benchmarks/transfer/transfer_idioms_cases.h"
#include "harness/analysis/analysis.h"
#include "harness/gpu_info.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace {
const std::set<std::string> kIdiomOps = {"torch_idiom", "pin_at_scale", "first_touch_at_scale"};

std::map<std::string, std::vector<nlohmann::json>> idiom_fields_by_op(const RunConfig& config) {
  clear_registered_cases();
  register_transfer_suite(config);
  std::map<std::string, std::vector<nlohmann::json>> by_op;
  for (const auto& c : registered_cases()) {
    const auto op = c.fields["op"].get<std::string>();
    if (kIdiomOps.count(op)) by_op[op].push_back(c.fields);
  }
  return by_op;
}
}  // namespace

TEST(TransferIdioms, QuickRegistersEveryIdiomOnceAndEveryRowSaysWhatItModels) {
  RunConfig config;
  config.gpu_devices = {0};
  const auto by_op = idiom_fields_by_op(config);
  ASSERT_EQ(by_op.at("torch_idiom").size(), all_torch_idioms().size());
  std::set<std::string> methods;
  for (const auto& f : by_op.at("torch_idiom")) {
    methods.insert(f["method"].get<std::string>());
    EXPECT_FALSE(f["idiom"].get<std::string>().empty()) << f.dump();
    EXPECT_EQ(f["device"], 0);
    if (f["direction"] == "h2d") {
      EXPECT_EQ(f["bytes"], 64 * kImageBytes);
      EXPECT_EQ(f["batches_per_call"], kBatchesPerCall);
      EXPECT_EQ(f["gpu_step_s"], kIdiomGpuStepSeconds);
    }
  }
  EXPECT_EQ(methods.size(), all_torch_idioms().size()) << "one row per idiom, each named apart";
  EXPECT_EQ(torch_idiom_info(TorchIdiom::to_from_pageable).models,
            std::string("x.to(device) from pageable memory"));
  // 4 methods, huge pages only where we make the mmap (3 of them), at 1 GiB.
  ASSERT_EQ(by_op.at("pin_at_scale").size(), 1u + 3 * 2);
  for (const auto& f : by_op.at("pin_at_scale")) {
    EXPECT_EQ(f["bytes"], 1ull << 30);
    EXPECT_TRUE(f.contains("thp_enabled"));
    if (f["method"] == "register_chunks") { EXPECT_EQ(f["chunk_bytes"], kRegisterChunkBytes); }
  }
  ASSERT_EQ(by_op.at("first_touch_at_scale").size(), 2u);
  for (const auto& f : by_op.at("first_touch_at_scale")) {
    EXPECT_EQ(f["device"], "cpu");
    EXPECT_EQ(f["bytes"], 256ull << 20) << "quick keeps the host half small";
    EXPECT_EQ(f["thp_enabled"], transparent_huge_pages_enabled());
  }
}

TEST(TransferIdioms, FullGoesToSixteenGibAndCpuOnlyKeepsTheHostHalf) {
  RunConfig config;
  config.quick = false;
  config.gpu_devices = {};
  const auto by_op = idiom_fields_by_op(config);
  EXPECT_FALSE(by_op.count("torch_idiom"));
  EXPECT_FALSE(by_op.count("pin_at_scale"));
  ASSERT_EQ(by_op.at("first_touch_at_scale").size(), 2u * 5);
  EXPECT_EQ(first_touch_scale_sizes(false).back(), 16ull << 30);
  EXPECT_EQ(pin_scale_sizes(false).back(), 16ull << 30);
  EXPECT_EQ(idiom_batch_images(false), (std::vector<std::uint64_t>{8, 64, 256}));
}

TEST(TransferIdioms, EveryGpuCaseSkipsWithTheReasonWhenNoGpu) {
  if (gpu_unavailable_reason(0).empty())
    GTEST_SKIP() << "a GPU is present; tests/test_gpu_transfer_idioms.cpp covers it";
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  register_transfer_suite(config);
  const auto rows = iteration_rows(testing::run_registered("transfer/(torch_idiom|pin_at_scale)/"));
  ASSERT_EQ(rows.size(), all_torch_idioms().size() + 7);
  for (const auto& row : rows) {
    EXPECT_EQ(row["skipped"], true) << row["name"];
    EXPECT_EQ(row["skip_reason"], gpu_unavailable_reason(0)) << row["name"];
  }
}

// ---- host pages ----

TEST(HostPages, SelectedModeIsTheBracketedWord) {
  EXPECT_EQ(selected_mode("always [madvise] never\n"), "madvise");
  EXPECT_EQ(selected_mode("[always] madvise never"), "always");
  EXPECT_EQ(selected_mode("always defer defer+madvise [madvise] never"), "madvise");
  EXPECT_EQ(selected_mode("nothing here"), "");
  EXPECT_EQ(selected_mode(""), "");
}

TEST(HostPages, AnonHugePagesAreSummedOverTheMappingsHoldingTheBuffer) {
  const std::string smaps =
      "7f0000000000-7f0000400000 rw-p 00000000 00:00 0 \n"
      "Size:               4096 kB\n"
      "AnonHugePages:      2048 kB\n"
      "7f0000400000-7f0000800000 rw-p 00000000 00:00 0 \n"
      "Size:               4096 kB\n"
      "AnonHugePages:      4096 kB\n"
      "VmFlags: rd wr mr mw me ac hg\n"
      "7f0000a00000-7f0000c00000 r--p 00000000 08:01 1234    /usr/lib/libc.so\n"
      "AnonHugePages:      2048 kB\n";
  const std::uint64_t base = 0x7f0000000000ull;
  EXPECT_EQ(anon_huge_bytes_in(smaps, base, 4ull << 20), 2ull << 20) << "the first mapping only";
  EXPECT_EQ(anon_huge_bytes_in(smaps, base + (4ull << 20), 4ull << 20), 4ull << 20)
      << "the second only";
  EXPECT_EQ(anon_huge_bytes_in(smaps, base + (2ull << 20), 4ull << 20), 6ull << 20)
      << "straddles both";
  EXPECT_EQ(anon_huge_bytes_in(smaps, base + (8ull << 20), 2ull << 20), 0u) << "a gap";
  EXPECT_EQ(anon_huge_bytes_in("garbage\n-\nAnonHugePages: x kB\n", base, 1), 0u);
}

TEST(HostPages, ChunkRangesCoverTheBufferOnce) {
  const auto pieces = chunk_ranges((1ull << 30) + 5, 256ull << 20);
  ASSERT_EQ(pieces.size(), 5u);
  std::uint64_t next = 0;
  for (const auto& [offset, length] : pieces) {
    EXPECT_EQ(offset, next);
    next += length;
  }
  EXPECT_EQ(next, (1ull << 30) + 5);
  EXPECT_EQ(pieces.back().second, 5u);
  EXPECT_TRUE(chunk_ranges(0, 4096).empty());
  EXPECT_EQ(chunk_ranges(100, 1000).size(), 1u);
  EXPECT_THROW(chunk_ranges(100, 0), std::invalid_argument);
}

TEST(HostPages, HugePageMappingsAreAlignedAndTouchWritesEveryPage) {
  for (bool huge : {false, true}) {
    MappedPages pages((6ull << 20) + 4096, huge);
    if (huge) { EXPECT_EQ(reinterpret_cast<std::uintptr_t>(pages.data()) % kHugePageBytes, 0u); }
    pages.touch();
    for (std::uint64_t at = 0; at < pages.bytes(); at += kBasePageBytes)
      ASSERT_EQ(pages.data()[at], static_cast<unsigned char>(at / kBasePageBytes)) << at;
    const auto huge_bytes = anon_huge_bytes(pages.data(), pages.bytes());
    EXPECT_EQ(huge_bytes % kHugePageBytes, 0u);
    if (transparent_huge_pages_enabled() == "never") { EXPECT_EQ(huge_bytes, 0u); }
  }
}

TEST(HostPages, TheHostHalfRunsHereAndSaysWhetherMadviseTook) {
  clear_registered_cases();
  for (auto huge_pages : {HugePages::none, HugePages::madvise})
    register_case(
        measured_case(std::string("test/first_touch_at_scale/") + to_string(huge_pages), "transfer",
                      {{"op", "first_touch_at_scale"},
                       {"huge_pages", to_string(huge_pages)},
                       {"bytes", 8ull << 20},
                       {"device", "cpu"}},
                      Clock::host_wall,
                      [huge_pages] { return setup_first_touch_at_scale(8ull << 20, huge_pages); }));
  const auto rows = iteration_rows(testing::run_registered("test/first_touch_at_scale/"));
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_EQ(row["skipped"], false) << row.dump();
    EXPECT_EQ(row["validated"], true) << row.dump();
    const double fraction = row["huge_page_fraction"].get<double>();
    EXPECT_GE(fraction, 0.0);
    EXPECT_LE(fraction, 1.0);
    EXPECT_GT(row["bytes_per_second"].get<double>(), 0.0);
    EXPECT_GT(row["ms_per_gib"].get<double>(), 0.0);
  }
  clear_registered_cases();
}

// ---- the pin thread's schedule ----

TEST(StagedPipeline, EachBatchIsFilledBeforeItIsEnqueuedAndNoSlotIsRefilledEarly) {
  std::mutex m;
  std::vector<std::string> log;
  std::map<int, int> slot_holds;  // slot -> the batch filled into it
  StagedPipelineOps ops;
  ops.fill = [&](int slot, int batch) {
    std::lock_guard<std::mutex> lock(m);
    log.push_back("fill " + std::to_string(batch));
    slot_holds[slot] = batch;
  };
  ops.enqueue = [&](int slot, int batch) {
    std::lock_guard<std::mutex> lock(m);
    EXPECT_EQ(slot, batch % 2);
    EXPECT_EQ(slot_holds[slot], batch)
        << "the slot holds another batch than the one copied out of it";
    log.push_back("enqueue " + std::to_string(batch));
  };
  ops.drain = [&] { log.push_back("drain"); };
  run_staged_pipeline(7, ops);
  ASSERT_EQ(log.size(), 15u);
  auto at = [&](const std::string& entry) {
    return std::find(log.begin(), log.end(), entry) - log.begin();
  };
  for (int b = 0; b < 7; ++b) {
    EXPECT_LT(at("fill " + std::to_string(b)), at("enqueue " + std::to_string(b)));
    if (b >= 2) {
      EXPECT_GT(at("fill " + std::to_string(b)), at("enqueue " + std::to_string(b - 2)))
          << "slot refilled before the copy out of it was enqueued";
    }
  }
  EXPECT_EQ(log.back(), "drain");
}

// The point of the pin thread: batch b + 1 is filled while batch b is being enqueued. Each enqueue
// waits (up to 10 s) for the next fill to start; a serial schedule would never start it.
TEST(StagedPipeline, TheNextBatchIsFilledWhileThisOneIsEnqueued) {
  std::atomic<int> fills_started{0};
  std::atomic<int> overlapped{0};
  StagedPipelineOps ops;
  ops.fill = [&](int, int) { fills_started.fetch_add(1); };
  ops.enqueue = [&](int, int batch) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (batch + 1 < 5 && fills_started.load() < batch + 2 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    if (batch + 1 >= 5 || fills_started.load() >= batch + 2) overlapped.fetch_add(1);
  };
  ops.drain = [] {};
  run_staged_pipeline(5, ops);
  EXPECT_EQ(overlapped.load(), 5);
  EXPECT_EQ(fills_started.load(), 5);
}

TEST(StagedPipeline, AFailureOnEitherThreadReachesTheCallerAndTheThreadIsJoined) {
  StagedPipelineOps ops;
  ops.fill = [](int, int batch) {
    if (batch == 3) throw std::runtime_error("fill failed");
  };
  ops.enqueue = [](int, int) {};
  ops.drain = [] {};
  EXPECT_THROW(run_staged_pipeline(6, ops), std::runtime_error);
  ops.fill = [](int, int) {};
  ops.enqueue = [](int, int batch) {
    if (batch == 2) throw std::logic_error("enqueue failed");
  };
  EXPECT_THROW(run_staged_pipeline(6, ops), std::logic_error);
  int drains = 0;
  ops.enqueue = [](int, int) {};
  ops.drain = [&] { ++drains; };
  run_staged_pipeline(0, ops);
  EXPECT_EQ(drains, 0) << "no batch, nothing to drain";
}

// ---- analysis ----

namespace {
nlohmann::json idiom_row(const std::string& method, const std::string& direction, double bytes,
                         double seconds, int repetition) {
  nlohmann::json r = {{"name", "transfer/torch_idiom/" + method + "/" + std::to_string(bytes)},
                      {"run_type", "iteration"},
                      {"repetition_index", repetition},
                      {"real_time", seconds * 1e3},
                      {"time_unit", "ms"},
                      {"iterations", 1},
                      {"skipped", false},
                      {"validated", true},
                      {"family", "transfer"},
                      {"op", "torch_idiom"},
                      {"method", method},
                      {"idiom", "models " + method},
                      {"direction", direction},
                      {"bytes", bytes},
                      {"device", 0}};
  if (direction == "h2d")
    r.update({{"batches_per_call", 8}, {"gpu_step_s", 0.002}, {"batch_images", 64}});
  return r;
}
nlohmann::json scale_row(const std::string& op, nlohmann::json fields, double seconds,
                         int repetition) {
  nlohmann::json r = {{"name", "transfer/" + op + "/" + fields.dump()},
                      {"run_type", "iteration"},
                      {"repetition_index", repetition},
                      {"real_time", seconds},
                      {"time_unit", "s"},
                      {"iterations", 1},
                      {"skipped", false},
                      {"validated", true},
                      {"family", "transfer"},
                      {"op", op}};
  r.update(fields);
  return r;
}
nlohmann::json doc_of(const std::vector<nlohmann::json>& rows) {
  return {{"context", {{"offloadbench", {{"schema_version", 1}}}}}, {"benchmarks", rows}};
}
}  // namespace

TEST(TransferIdiomsAnalysis, FastestIdiomPerBatchWithItsMarginAndRange) {
  std::vector<nlohmann::json> rows;
  const double batch = 64 * kImageBytes;
  // Seconds per call of 8 batches; three repetitions at ±1 %.
  const std::map<std::string, double> per_call = {
      {"to_from_pageable", 0.080}, {"pin_memory_cached", 0.050}, {"pin_thread_pipeline", 0.040}};
  for (const auto& [method, seconds] : per_call)
    for (int rep = 0; rep < 3; ++rep)
      rows.push_back(idiom_row(method, "h2d", batch, seconds * (0.99 + 0.01 * rep), rep));
  for (int rep = 0; rep < 3; ++rep) {
    rows.push_back(idiom_row("result_to_pageable", "d2h", 256000, 40e-6, rep));
    rows.push_back(idiom_row("result_to_pinned", "d2h", 256000, 20e-6, rep));
    rows.push_back(idiom_row("item", "d2h", 4, 12e-6, rep));
  }
  const auto a = analyze(doc_of(rows), family_analyses());
  ASSERT_EQ(a["torch_idioms"].size(), 3u);  // the batch, the result, the item
  const nlohmann::json* h2d = nullptr;
  for (const auto& g : a["torch_idioms"])
    if (g["direction"] == "h2d") h2d = &g;
  ASSERT_TRUE(h2d);
  EXPECT_EQ((*h2d)["fastest"], "pin_thread_pipeline");
  EXPECT_EQ((*h2d)["runner_up"], "pin_memory_cached");
  EXPECT_NEAR((*h2d)["idioms"][0]["seconds"].get<double>(), 0.040 / 8, 1e-12)
      << "per batch, not per call";
  EXPECT_NEAR((*h2d)["margin"].get<double>(), 1.25, 1e-9);
  EXPECT_NEAR((*h2d)["margin_low"].get<double>(), 0.050 * 0.99 / (0.040 * 1.01), 1e-9);
  EXPECT_NEAR((*h2d)["margin_high"].get<double>(), 0.050 * 1.01 / (0.040 * 0.99), 1e-9);
  EXPECT_NEAR((*h2d)["speedup_over_pageable"].get<double>(), 2.0, 1e-9);
  std::vector<std::string> lines;
  for (const auto& line : a["headlines"]) lines.push_back(line.get<std::string>());
  auto has = [&](const std::string& part) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const auto& l) { return l.find(part) != std::string::npos; });
  };
  EXPECT_TRUE(
      has("torch idioms, batch of 64 (36.8 MiB), 2.00 ms GPU step: a DataLoader pin thread "
          "fastest, 5.00 ms "
          "per batch, 1.25× ahead of pin_memory() (cached) + non_blocking copy (range 1.23–1.28×), "
          "2.00× over "
          "x.to(device) from pageable"))
      << a["headlines"].dump(1);
  EXPECT_TRUE(
      has("result D2H of 250 KiB: into pinned memory fastest, 20.0 µs per copy, 2.00× faster than "
          "into pageable"))
      << a["headlines"].dump(1);
  EXPECT_TRUE(has("loss.item(): 12.0 µs per call")) << a["headlines"].dump(1);
}

TEST(TransferIdiomsAnalysis, PinningAtScaleBreakEvenAndTheHostHalf) {
  std::vector<nlohmann::json> rows;
  const double gib = 1ull << 30;
  for (int rep = 0; rep < 3; ++rep) {
    // 1 GiB: pin 0.33 s; a pageable copy 0.10 s, a pinned one 0.04 s: saves 0.06 s a copy, pays
    // after 6.
    rows.push_back(scale_row("pin_at_scale",
                             {{"method", "register_touched"},
                              {"huge_pages", "none"},
                              {"bytes", gib},
                              {"device", 0},
                              {"pin_time_s", 0.33},
                              {"pageable_copy_s", 0.10},
                              {"pinned_copy_s", 0.04},
                              {"huge_page_fraction", 0.0},
                              {"thp_enabled", "madvise"}},
                             0.5, rep));
    rows.push_back(scale_row("pin_at_scale",
                             {{"method", "register_touched"},
                              {"huge_pages", "madvise"},
                              {"bytes", gib},
                              {"device", 0},
                              {"pin_time_s", 0.07},
                              {"pageable_copy_s", 0.09},
                              {"pinned_copy_s", 0.04},
                              {"huge_page_fraction", 1.0},
                              {"thp_enabled", "madvise"}},
                             0.2, rep));
    rows.push_back(scale_row("pin_at_scale",
                             {{"method", "host_alloc"},
                              {"huge_pages", "none"},
                              {"bytes", gib},
                              {"device", 0},
                              {"pin_time_s", 0.4},
                              {"pageable_copy_s", 0.04},
                              {"pinned_copy_s", 0.04}},
                             0.5, rep));
    rows.push_back(scale_row("first_touch_at_scale",
                             {{"huge_pages", "none"},
                              {"bytes", gib},
                              {"device", "cpu"},
                              {"huge_page_fraction", 0.0},
                              {"thp_enabled", "madvise"}},
                             0.4, rep));
    rows.push_back(scale_row("first_touch_at_scale",
                             {{"huge_pages", "madvise"},
                              {"bytes", gib},
                              {"device", "cpu"},
                              {"huge_page_fraction", 0.1},
                              {"thp_enabled", "madvise"}},
                             0.1, rep));
  }
  const auto a = analyze(doc_of(rows), family_analyses());
  ASSERT_EQ(a["pinning_at_scale"].size(), 3u);
  std::map<std::string, nlohmann::json> by;
  for (const auto& e : a["pinning_at_scale"])
    by[e["method"].get<std::string>() + "/" + e["huge_pages"].get<std::string>()] = e;
  EXPECT_EQ(by["register_touched/none"]["break_even_copies"], 6);
  EXPECT_EQ(by["register_touched/madvise"]["break_even_copies"],
            2);  // 0.07 / 0.05 = 1.4 → the 2nd copy pays
  EXPECT_TRUE(by["host_alloc/none"]["break_even_copies"].is_null())
      << "pinned no faster: never pays";
  ASSERT_EQ(a["first_touch_at_scale"].size(), 2u);
  for (const auto& e : a["first_touch_at_scale"]) {
    const double expected = e["huge_pages"] == "none" ? 400.0 : 100.0;
    EXPECT_NEAR(e["ms_per_gib"].get<double>(), expected, 1e-9);
  }
  std::string all;
  for (const auto& line : a["headlines"]) all += line.get<std::string>() + "\n";
  EXPECT_NE(all.find("pinning 1 GiB on GPU 0 pays after: cudaHostAlloc never (pin 400.00 ms); "
                     "register 6 copies "
                     "(pin 330.00 ms); register+THP 2 copies (pin 70.00 ms)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("first touch of 1 GiB: 4 KiB pages 400 ms/GiB (2.7 GB/s, 0% in huge pages) · "
                     "madvise(MADV_HUGEPAGE) "
                     "100 ms/GiB (10.7 GB/s, 10% in huge pages): 4.00× with huge pages (madvise "
                     "mostly did not take; "
                     "THP enabled: madvise)"),
            std::string::npos)
      << all;
}

TEST(TransferIdiomsAnalysis, FilesWithoutTheseRowsGiveEmptySections) {
  const auto a = analyze(doc_of({}), family_analyses());
  for (const char* key : {"torch_idioms", "pinning_at_scale", "first_touch_at_scale"})
    EXPECT_TRUE(a[key].empty()) << key;
  // A row with fields missing is left out, never fatal.
  const auto b = analyze(doc_of({scale_row("pin_at_scale", {{"bytes", 1.0}, {"device", 0}}, 0.1, 0),
                                 idiom_row("item", "d2h", 4, 1e-5, 0)}),
                         family_analyses());
  ASSERT_EQ(b["pinning_at_scale"].size(), 1u);
  EXPECT_TRUE(b["pinning_at_scale"][0]["break_even_copies"].is_null());
}

}  // namespace offloadbench
