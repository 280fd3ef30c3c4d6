// The measurement layer (harness/measure.h) driven by a fake device timer and a fake wall clock
// that report known times, through Google Benchmark and the results reporter as a run does: the
// arithmetic the GPU runners rely on, proven on a machine without a GPU.
#include <map>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"
#include "harness/host_blocks.h"
#include "harness/injected_slowdown.h"
#include "harness/pcie.h"
#include "harness/measure.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace {

// What the fakes saw. Each call "takes" call_s on the device and wall_per_call_s on the host.
struct Ledger {
  double call_s = 1e-3;
  double wall_per_call_s = 1e-4;
  int timeout_on_batch = 0;  // > 0: that batch (counting every batch, warm-up included) times out
  long calls = 0;
  int batches = 0;
  bool in_window = false;
  int setups = 0, verifies = 0, verifies_in_window = 0, calls_outside_window = 0;
  int teardowns = 0, batches_at_teardown = -1;
  int before_batches = 0, before_batches_in_window = 0;
  double untimed_wall_s = 0;  // wall time the work before batches took (it must not be timed)
  int delays = 0, delays_outside_window = 0;  // the self-test's injected delays asked of the timer
  std::string let_go;  // "device" and "buffers" in the order the layer let go of them
};

// Stands for a case's buffers: records when the layer lets go of them.
struct Teardown {
  explicit Teardown(std::shared_ptr<Ledger> l) : ledger(std::move(l)) {}
  Teardown(const Teardown&) = delete;
  Teardown& operator=(const Teardown&) = delete;
  std::shared_ptr<Ledger> ledger;
  ~Teardown() {
    ledger->let_go += "buffers ";
    ++ledger->teardowns;
    ledger->batches_at_teardown = ledger->batches;
  }
};

class FakeWallClock : public WallClock {
 public:
  explicit FakeWallClock(std::shared_ptr<Ledger> ledger) : ledger_(std::move(ledger)) {}
  double now_seconds() override {
    return static_cast<double>(ledger_->calls) * ledger_->wall_per_call_s + ledger_->untimed_wall_s;
  }

 private:
  std::shared_ptr<Ledger> ledger_;
};

class FakeDeviceTimer : public DeviceTimer {
 public:
  explicit FakeDeviceTimer(std::shared_ptr<Ledger> ledger) : ledger_(std::move(ledger)) {}
  ~FakeDeviceTimer() override { ledger_->let_go += "device "; }
  void begin_batch() override {
    ledger_->in_window = true;
    calls_at_start_ = ledger_->calls;
  }
  void end_batch() override {}
  void delay_batch(double seconds) override {  // the device "waits" that long in this batch
    ++ledger_->delays;
    if (!ledger_->in_window) ++ledger_->delays_outside_window;
    delay_s_ = seconds;
  }
  DeviceBatch wait(const std::function<void()>&) override {
    ledger_->in_window = false;
    ++ledger_->batches;
    return {static_cast<double>(ledger_->calls - calls_at_start_) * ledger_->call_s +
                std::exchange(delay_s_, 0.0),
            ledger_->batches == ledger_->timeout_on_batch,
            {}};
  }

 private:
  std::shared_ptr<Ledger> ledger_;
  long calls_at_start_ = 0;
  double delay_s_ = 0;
};

struct FakeCase {
  int batch = 1;
  bool device = true;
  double bytes = 4096, flops = 1000, items = 8;
  double bytes_ceiling = 0;
  double latency_steps = 0;
  bool work_before_batches = false;  // each takes a second of wall time
  std::string verify_problem;
  bool verify_throws = false;
  bool verify_calls = false;  // verify runs the work once, as a call (and says so: verify_warms_up)
  bool verify_only_checks = false;
};

FakeCase batch_of(int calls) {
  FakeCase f;
  f.batch = calls;
  return f;
}

// A case whose setup counts itself and whose clock is the fakes.
CaseSetup fake_setup(std::shared_ptr<Ledger> ledger, FakeCase f) {
  return [ledger, f] {
    ++ledger->setups;
    auto wall = std::make_shared<FakeWallClock>(ledger);
    MeasuredCase made;
    Measurement& m = made.measurement;
    m.call = [ledger, device = f.device, buffers = std::make_shared<Teardown>(ledger)] {
      if (device && !ledger->in_window) ++ledger->calls_outside_window;
      ++ledger->calls;
    };
    m.work = {f.bytes, f.flops, f.items, "samples_per_second", f.latency_steps};
    if (f.work_before_batches)
      m.before_batch = [ledger] {
        ++ledger->before_batches;
        if (ledger->in_window) ++ledger->before_batches_in_window;
        ledger->untimed_wall_s += 1.0;
      };
    m.verify = [ledger, f] {
      ++ledger->verifies;
      if (ledger->in_window) ++ledger->verifies_in_window;
      if (f.verify_throws)
        throw std::runtime_error("CUDA error 700 (an illegal memory access) in verify");
      if (f.verify_calls) ++ledger->calls;
      return f.verify_problem;
    };
    m.verify_warms_up = f.verify_calls;
    m.verify_only_checks = f.verify_only_checks;
    m.calls_per_batch = f.batch;
    if (f.device) m.device = std::make_shared<FakeDeviceTimer>(ledger);
    m.bytes_ceiling = f.bytes_ceiling;
    m.wall = wall.get();
    m.report = [wall](benchmark::State&, const Totals&) {
    };  // keeps the fake clock alive with the case
    return made;
  };
}

std::shared_ptr<Ledger> register_fake(const std::string& name, const FakeCase& f) {
  auto ledger = std::make_shared<Ledger>();
  register_case(measured_case(name, "fake", {{"op", "fake"}},
                              f.device ? Clock::device_events : Clock::host_wall,
                              fake_setup(ledger, f)));
  return ledger;
}

// Equal but for the rounding of summing per-batch seconds.
void expect_close(const nlohmann::json& got, double want) {
  ASSERT_TRUE(got.is_number()) << got;
  EXPECT_NEAR(got.get<double>(), want, 1e-9 * std::abs(want));
}

void expect_close(double got, double want) { EXPECT_NEAR(got, want, 1e-9 * std::abs(want)); }

class MeasureTest : public ::testing::Test {
 protected:
  void SetUp() override { clear_registered_cases(); }
  void TearDown() override { clear_registered_cases(); }
};

}  // namespace

TEST_F(MeasureTest, DeviceRateIsBytesTimesCallsOverTimeForEveryBatchSize) {
  for (int batch : {1, 7, 64}) {
    clear_registered_cases();
    const FakeCase f = batch_of(batch);
    auto ledger = register_fake("fake/device", f);
    const auto doc = testing::run_registered("fake/", 3, 0.02);
    const auto rows = testing::rows_where(doc, "op", "fake");
    ASSERT_EQ(rows.size(), 3u) << "batch " << batch;
    for (const auto& row : rows) {
      const double calls = row["iterations"].get<double>();
      EXPECT_EQ(static_cast<long>(calls) % batch, 0) << "iterations count calls, in whole batches";
      const double seconds = calls * ledger->call_s;
      expect_close(row["bytes_per_second"], f.bytes * calls / seconds);
      expect_close(row["flop_per_second"], f.flops * calls / seconds);
      expect_close(row["samples_per_second"], f.items * calls / seconds);
      expect_close(row["device_time_s"], ledger->call_s);
      EXPECT_NEAR(row["real_time"].get<double>(), ledger->call_s * 1e6, 1e-6)
          << "real_time is per call, in us";
      expect_close(row["host_enqueue_time_s"], ledger->wall_per_call_s);
      EXPECT_EQ(row["enqueue_bound"], false);
      EXPECT_EQ(row["calls_per_batch"], batch);
      EXPECT_EQ(row["validated"], true);
      EXPECT_FALSE(row.contains("latency_ns")) << "a latency only where a case counts its steps";
    }
    EXPECT_EQ(ledger->calls_outside_window, 0)
        << "every call sits between the timer's start and end";
  }
}

TEST_F(MeasureTest, HostTimesComeFromTheWallClockForEveryBatchSize) {
  for (int batch : {1, 7, 64}) {
    clear_registered_cases();
    FakeCase f = batch_of(batch);
    f.device = false;
    auto ledger = register_fake("fake/host", f);
    const auto rows = testing::rows_where(testing::run_registered("fake/", 2, 0.001), "op", "fake");
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& row : rows) {
      const double calls = row["iterations"].get<double>();
      EXPECT_EQ(static_cast<long>(calls) % batch, 0);
      expect_close(row["host_time_s"], ledger->wall_per_call_s);
      // The rate is over the same seconds as real_time (Google Benchmark's own wall clock here).
      expect_close(row["bytes_per_second"].get<double>() * row["real_time"].get<double>() * 1e-6,
                   f.bytes);
      EXPECT_FALSE(row.contains("device_time_s"));
    }
  }
}

TEST_F(MeasureTest, SetupAndVerifyRunOncePerCaseAndVerifyNeverInsideATimedWindow) {
  auto ledger = register_fake("fake/once", batch_of(7));
  auto other = register_fake("fake/other", batch_of(1));
  const auto doc = testing::run_registered("fake/", 4, 0.02);
  EXPECT_EQ(testing::rows_where(doc, "op", "fake").size(), 8u);
  EXPECT_EQ(ledger->setups, 1) << "not once per repetition or per Google Benchmark call";
  EXPECT_EQ(ledger->verifies, 1);
  EXPECT_EQ(other->setups, 1);
  EXPECT_EQ(ledger->verifies_in_window + other->verifies_in_window, 0);
  EXPECT_GT(ledger->batches, 4)
      << "the fake must have timed several batches for this to mean anything";
  EXPECT_EQ(ledger->teardowns, 1) << "torn down once, when the case is done";
  EXPECT_EQ(ledger->batches_at_teardown, ledger->batches) << "not before its last repetition";
}

TEST_F(MeasureTest, AGateTimeoutOnAnyBatchMarksTheRow) {
  // Batch 1 is the warm-up, 2 the first call's only batch; 3 is the first of many in the next call.
  for (int timeout_on : {2, 3}) {
    clear_registered_cases();
    auto ledger = std::make_shared<Ledger>();
    ledger->timeout_on_batch = timeout_on;
    register_case(measured_case("fake/gate", "fake", {{"op", "fake"}}, Clock::device_events,
                                fake_setup(ledger, batch_of(1))));
    const auto rows = testing::rows_where(testing::run_registered("fake/", 1, 0.05), "op", "fake");
    ASSERT_EQ(rows.size(), 1u);
    // Batch 3 opens a call that wants many batches: a check of the last gate only would pass it.
    EXPECT_EQ(ledger->batches, timeout_on)
        << "the layer stops timing once a batch is known untimed";
    EXPECT_EQ(rows[0]["validated"], false) << "timeout on batch " << timeout_on;
    EXPECT_NE(rows[0]["invalid_reason"].get<std::string>().find("gate timed out"),
              std::string::npos);
    EXPECT_EQ(rows[0]["skipped"], false);
  }
}

TEST_F(MeasureTest, ThroughputAboveItsCeilingMarksTheRowInvalid) {
  const auto ledger = std::make_shared<Ledger>();
  const double rate = 4096 / ledger->call_s;
  FakeCase above = batch_of(7), below = batch_of(7);
  above.bytes_ceiling = 0.5 * rate;
  below.bytes_ceiling = 2 * rate;
  register_fake("fake/above", above);
  register_fake("fake/below", below);
  const auto doc = testing::run_registered("fake/", 1, 0.01);
  for (const auto& row : testing::rows_where(doc, "op", "fake")) {
    const bool is_above = row["run_name"].get<std::string>().find("above") != std::string::npos;
    EXPECT_EQ(row["validated"], !is_above) << row["name"];
    EXPECT_EQ(row.value("above_ceiling", false), is_above) << row["name"];
  }
}

TEST_F(MeasureTest, SkipsAndFailedChecksAreRowFieldsNotParsedText) {
  auto ledger = std::make_shared<Ledger>();
  register_case(measured_case("fake/skip", "fake", {{"op", "fake"}}, Clock::device_events,
                              [] { return MeasuredCase::skip("invalid: not really, a skip"); }));
  FakeCase wrong = batch_of(1);
  wrong.verify_problem = "skipped: not really, byte 7 differs";
  register_fake("fake/wrong", wrong);
  const auto doc = testing::run_registered("fake/", 2, 0.001);
  for (const auto& row : testing::rows_where(doc, "op", "fake")) {
    if (row["run_name"].get<std::string>().find("skip") != std::string::npos) {
      EXPECT_EQ(row["skipped"], true);
      EXPECT_EQ(row["skip_reason"], "invalid: not really, a skip");
      EXPECT_TRUE(row["validated"].is_null());
    } else {
      EXPECT_EQ(row["skipped"], false);
      EXPECT_EQ(row["validated"], false);
      EXPECT_EQ(row["invalid_reason"], "skipped: not really, byte 7 differs");
    }
  }
}

// A throw after the device timer exists (a gate may be closed on the case's stream): the timer goes
// first, while the buffers and stream the calls hold are still there to open and wait on.
TEST_F(MeasureTest, AThrowInSetUpSkipsAndLetsGoOfTheDeviceTimerBeforeTheBuffers) {
  FakeCase throws = batch_of(1);
  throws.verify_throws = true;
  auto ledger = register_fake("fake/throws", throws);
  const auto doc = testing::run_registered("fake/", 1, 0.001);
  const auto rows = testing::rows_where(doc, "op", "fake");
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0]["skipped"], true);
  EXPECT_EQ(rows[0]["skip_reason"], "CUDA error 700 (an illegal memory access) in verify");
  EXPECT_EQ(ledger->let_go, "device buffers ");
}

TEST_F(MeasureTest, HostEnqueueSlowerThanTheDeviceIsFlagged) {
  auto ledger = register_fake("fake/enqueue", batch_of(7));
  ledger->wall_per_call_s = 2 * ledger->call_s;
  const auto rows = testing::rows_where(testing::run_registered("fake/", 1, 0.01), "op", "fake");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["enqueue_bound"], true);
}

TEST_F(MeasureTest, LatencyIsSecondsPerCallOverItsStepsOnEitherClock) {
  for (bool device : {true, false})
    for (int batch : {1, 7, 64}) {
      clear_registered_cases();
      FakeCase f = batch_of(batch);
      f.device = device;
      f.latency_steps = 1000;  // a pointer chase's dependent loads per call
      auto ledger = register_fake("fake/latency", f);
      const auto rows =
          testing::rows_where(testing::run_registered("fake/", 2, 0.005), "op", "fake");
      ASSERT_EQ(rows.size(), 2u);
      const double call_s = device ? ledger->call_s : ledger->wall_per_call_s;
      for (const auto& row : rows) expect_close(row["latency_ns"], call_s / 1000 * 1e9);
    }
}

TEST_F(MeasureTest, WorkBeforeEachBatchRunsOutsideTheTimedWindowOnEitherClock) {
  for (bool device : {true, false}) {
    clear_registered_cases();
    FakeCase f = batch_of(7);
    f.device = device;
    f.work_before_batches = true;
    auto ledger = register_fake("fake/before", f);
    const auto rows = testing::rows_where(testing::run_registered("fake/", 2, 0.005), "op", "fake");
    ASSERT_EQ(rows.size(), 2u);
    // One warm-up call, then batches of 7: the work ran before each of them.
    EXPECT_EQ((ledger->calls - 1) % 7, 0);
    EXPECT_EQ(ledger->before_batches, 1 + (ledger->calls - 1) / 7);
    EXPECT_GT(ledger->before_batches, 2);
    EXPECT_EQ(ledger->before_batches_in_window, 0);
    for (const auto& row : rows) {
      // Each run of the work took a (fake) second of wall time; none of it is in a per-call time.
      expect_close(row["host_time_s"], ledger->wall_per_call_s);
      if (device) expect_close(row["device_time_s"], ledger->call_s);
      if (device) expect_close(row["host_enqueue_time_s"], ledger->wall_per_call_s);
    }
  }
}

TEST_F(MeasureTest, AnInjectedSlowdownDelaysTheDeviceBatchesOfTheNamedCaseOnly) {
  const testing::ScopedSlowdown inject("fake/slowed=20");
  // 1 ms: Google Benchmark reports each call's first and only batch (as for a cold GPU case); 20
  // ms: several calls of several batches each.
  for (double min_time : {0.001, 0.02}) {
    clear_registered_cases();
    const std::string slowed_name =
        min_time < 0.01 ? "fake/slowed/one_batch" : "fake/slowed/many_batches";
    auto slowed = register_fake(slowed_name, batch_of(7));
    auto control = register_fake("fake/control", batch_of(7));
    const auto doc = testing::run_registered("fake/", 3, min_time);
    for (const auto& row : testing::rows_where(doc, "op", "fake")) {
      const bool is_slowed = row["run_name"].get<std::string>().find("slowed") != std::string::npos;
      // The device time grows by the share asked of the case's own time; the rates follow it.
      const double call_s = slowed->call_s * (is_slowed ? 1.2 : 1.0);
      expect_close(row["device_time_s"], call_s);
      expect_close(row["bytes_per_second"], 4096 / call_s);
      expect_close(row["host_enqueue_time_s"],
                   slowed->wall_per_call_s);  // the host does no extra work
    }
    EXPECT_EQ(slowed->delays, slowed->batches - 2)
        << "every timed batch; not the warm-up nor the calibration";
    EXPECT_EQ(slowed->delays_outside_window, 0) << "the delay is inside the timed window";
    EXPECT_EQ(control->delays, 0);
  }
}

// Two side rates on a fake case: a synchronous copy of 1 MB that takes a (fake) quarter second of
// wall time, reported in place of the calls' host_time_s, and one direction of 3 MB in 0.5 s.
TEST_F(MeasureTest, SideRatesAreTheirBytesOverTheSecondsTheLayerMeasuredOncePerCase) {
  for (bool device : {true, false}) {
    clear_registered_cases();
    FakeCase f = batch_of(7);
    f.device = device;
    auto ledger = std::make_shared<Ledger>();
    auto timings = std::make_shared<int>(0);
    auto seen_in_report = std::make_shared<double>(0);
    const CaseSetup fake = fake_setup(ledger, f);
    register_case(
        measured_case("fake/side", "fake", {{"op", "fake"}},
                      device ? Clock::device_events : Clock::host_wall, [=] {
                        MeasuredCase made = fake();
                        Measurement& m = made.measurement;
                        auto timed_run = [ledger, timings, wall = m.wall](double seconds) {
                          return [=] {
                            ++*timings;
                            return wall_seconds([&] { ledger->untimed_wall_s += seconds; }, *wall);
                          };
                        };
                        SideRate synchronous, one_way;
                        synchronous.rate_counter = "host_bytes_per_second";
                        synchronous.time_counter = "host_time_s";
                        synchronous.bytes = 1e6;
                        synchronous.time = timed_run(0.25);
                        one_way.rate_counter = "h2d_bytes_per_second";
                        one_way.bytes = 3e6;
                        one_way.time = timed_run(0.5);
                        m.side_rates = {synchronous, one_way};
                        m.report = [keep = m.report, seen_in_report](benchmark::State& state,
                                                                     const Totals& totals) {
                          keep(state, totals);
                          *seen_in_report = totals.side_bytes_per_second("h2d_bytes_per_second");
                        };
                        return made;
                      }));
    const auto rows = testing::rows_where(testing::run_registered("fake/", 3, 0.002), "op", "fake");
    ASSERT_EQ(rows.size(), 3u);
    for (const auto& row : rows) {
      expect_close(row["host_bytes_per_second"], 4e6);
      expect_close(row["host_time_s"], 0.25);  // the side figure, not the calls' wall time per call
      expect_close(row["h2d_bytes_per_second"], 6e6);
      EXPECT_FALSE(row.contains("h2d_time_s")) << "no time counter was named";
      if (device)
        expect_close(row["bytes_per_second"],
                     f.bytes / ledger->call_s);  // the calls' rate untouched
    }
    EXPECT_EQ(*timings, 2) << "each side rate timed once per case, not per repetition";
    expect_close(*seen_in_report, 6e6);
  }
}

TEST(CallsPerBatch, AboutSixtyFourMebibytesWithinTheLimits) {
  EXPECT_EQ(calls_per_batch_moving(4096), 64);
  EXPECT_EQ(calls_per_batch_moving(4 << 20), 16);
  EXPECT_EQ(calls_per_batch_moving(64 << 20), 1);
  EXPECT_EQ(calls_per_batch_moving(1 << 30), 1);
  EXPECT_EQ(calls_per_batch_moving(1 << 30, 4), 4);
  EXPECT_EQ(calls_per_batch_moving(0), 64);
}

TEST(LinkCeiling, IsTheMaximumGenerationAndWidthNotTheIdleState) {
  PcieLink idle{1, 5, 16, 16, "nvml"};  // an idle Gen5 x16 GPU down-clocked to Gen1
  EXPECT_DOUBLE_EQ(idle.ceiling_bytes_per_second(), pcie_link_bytes_per_second(5, 16));
  EXPECT_LT(idle.theoretical_bytes_per_second(), idle.ceiling_bytes_per_second());
  PcieLink max_unknown{4, 0, 8, 0, "sysfs"};
  EXPECT_DOUBLE_EQ(max_unknown.ceiling_bytes_per_second(), pcie_link_bytes_per_second(4, 8));
  // A VM's emulated root port can make NVML's "maximum" read Gen1 while the GPU runs Gen5 x16: the
  // ceiling must not fall below the link's current rate (every copy row would read above it).
  PcieLink virtual_root{5, 1, 16, 1, "nvml"};
  EXPECT_DOUBLE_EQ(virtual_root.ceiling_bytes_per_second(), pcie_link_bytes_per_second(5, 16));
  EXPECT_FALSE(virtual_root.degraded());
}

// With random interleaving (what `ab` runs) a case is set up again for each repetition; here each
// set-up's calls take a different time, so a batch chosen anew would differ and Google Benchmark,
// which needs one iteration count across a case's repetitions, would abort. The layer keeps the
// batch it chose first for the case, and every repetition reports it.
TEST_F(MeasureTest, RepetitionsSetUpAgainKeepTheBatchTheLayerChoseFirst) {
  auto setups = std::make_shared<int>(0);
  const auto spinning_case = [setups](const std::string& name) {
    return measured_case(name, "fake", {{"op", "fake"}}, Clock::host_wall, [setups, name] {
      const auto spin = std::chrono::microseconds(++*setups % 2 ? 1 : 20);
      MeasuredCase made;
      made.measurement.call = [spin] {
        const auto until = std::chrono::steady_clock::now() + spin;
        while (std::chrono::steady_clock::now() < until) {}
      };
      made.measurement.work.bytes = 1;
      return made;  // calls_per_batch left to the layer
    });
  };
  // Three cases of five repetitions: a random order that leaves each case's repetitions together
  // (no set-up again, so nothing tested) has probability 3!·(5!)³/15! ≈ 1e-5; two of four had 1
  // in 35.
  register_case(spinning_case("fake/interleaved/a"));
  register_case(spinning_case("fake/interleaved/b"));
  register_case(spinning_case("fake/interleaved/c"));
  const auto doc = testing::run_registered("fake/interleaved/", 5, 0.001,
                                           {"--benchmark_enable_random_interleaving=true"});
  for (const char* name : {"fake/interleaved/a", "fake/interleaved/b", "fake/interleaved/c"}) {
    std::set<int> batches, iterations;
    for (const auto& row : testing::rows_where(doc, "op", "fake"))
      if (row["run_name"].get<std::string>().rfind(name, 0) == 0) {
        batches.insert(row["calls_per_batch"].get<int>());
        iterations.insert(row["iterations"].get<int>());
      }
    EXPECT_EQ(batches.size(), 1u) << name;
    EXPECT_EQ(iterations.size(), 1u) << name;
  }
  EXPECT_GT(*setups, 3) << "the cases were set up again between repetitions";
}

TEST_F(MeasureTest, ALinkBelowItsMaximumUnderLoadIsFlagged) {
  for (int generation : {3, 5}) {
    clear_registered_cases();
    register_case({"fake/link",
                   "fake",
                   {{"op", "fake"}},
                   Clock::host_wall,
                   [generation](benchmark::State& state) {
                     for (auto _ : state) {}
                     state.counters["link_max_generation"] = 5;
                     state.counters["link_max_width"] = 16;
                     state.counters["link_generation_under_load"] = generation;
                     state.counters["link_width_under_load"] = 16;
                   }});
    const auto rows = testing::rows_where(testing::run_registered("fake/", 1), "op", "fake");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0]["link_below_max_under_load"], generation < 5);
  }
}

}  // namespace offloadbench

namespace offloadbench {
namespace {
// A clock that moves only when told: what a case_clock case hands the layer (pinning at scale's
// clock moves only while memory is pinned).
class PartOfTheCallClock : public WallClock {
 public:
  double now_seconds() override { return seconds_; }
  void add(double s) { seconds_ += s; }

 private:
  double seconds_ = 0;
};
}  // namespace

// Clock::case_clock: the row's real_time and rate are what the case's own clock counted per call
// (here 2 ms of a call that also sleeps 1 ms it does not count), not the call's wall time.
TEST_F(MeasureTest, ACaseClockTimesOnlyThePartOfTheCallItCounts) {
  register_case(measured_case("fake/part", "fake", {{"op", "fake"}}, Clock::case_clock, [] {
    auto clock = std::make_shared<PartOfTheCallClock>();
    MeasuredCase made;
    made.measurement.wall = clock.get();
    made.measurement.calls_per_batch = 1;
    made.measurement.work.bytes = 1e6;
    made.measurement.call = [clock] {
      std::this_thread::sleep_for(
          std::chrono::milliseconds(1));  // the part the clock does not count
      clock->add(2e-3);
    };
    return made;
  }));
  const auto rows = testing::rows_where(testing::run_registered("fake/", 2, 0.01), "op", "fake");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_EQ(row["time_unit"], "us");
    EXPECT_NEAR(row["real_time"].get<double>(), 2000.0, 1e-6) << row["name"];
    EXPECT_NEAR(row["bytes_per_second"].get<double>(), 1e6 / 2e-3, 1.0) << row["name"];
    EXPECT_NE(row["run_name"].get<std::string>().find("manual_time"), std::string::npos);
  }
}

}  // namespace offloadbench

namespace offloadbench {
namespace {
// A device timer with two streams: every batch 3 ms by the joined events, 1 ms and 3 ms per lane.
class TwoLaneTimer : public DeviceTimer {
 public:
  void begin_batch() override {}
  void end_batch() override {}
  void delay_batch(double) override {}
  DeviceBatch wait(const std::function<void()>&) override {
    DeviceBatch batch;
    batch.seconds = 3e-3;
    batch.lane_seconds = {1e-3, 3e-3};
    return batch;
  }
};
}  // namespace

// Each stream's own time reaches the case's report summed over its batches, beside the joined time.
TEST_F(MeasureTest, LaneTimesOfSideStreamsAreSummedOverTheBatches) {
  auto seen = std::make_shared<Totals>();
  register_case(measured_case("fake/lanes", "fake", {{"op", "fake"}}, Clock::device_events, [seen] {
    MeasuredCase made;
    made.measurement.device = std::make_shared<TwoLaneTimer>();
    made.measurement.calls_per_batch = 2;
    made.measurement.call = [] {};
    made.measurement.report = [seen](benchmark::State&, const Totals& t) { *seen = t; };
    return made;
  }));
  testing::run_registered("fake/", 1, 0.01);
  ASSERT_GT(seen->batches, 0);
  ASSERT_EQ(seen->lane_seconds.size(), 2u);
  EXPECT_NEAR(seen->lane_seconds[0], 1e-3 * seen->batches, 1e-12);
  EXPECT_NEAR(seen->lane_seconds[1], 3e-3 * seen->batches, 1e-12);
  EXPECT_NEAR(seen->device_seconds, 3e-3 * seen->batches, 1e-12);
}
}  // namespace offloadbench

namespace offloadbench {

TEST_F(MeasureTest, ALaterProcessRunsTheFirstOnesIterationsAndBatchUnderTheSameName) {
  FakeCase f = batch_of(0);  // the layer chooses the batch, from the warm-up
  f.device = false;
  nlohmann::json earlier = {
      {"name", "fake/calibrated/real_time"}, {"iterations", 96}, {"calls_per_batch", 3}};
  set_calibration_rows({{"fake/calibrated/real_time", earlier}});
  auto ledger = register_fake("fake/calibrated", f);
  register_fake("fake/not_calibrated", f);
  const auto doc = testing::run_registered("fake/", 2, 0.001);
  set_calibration_rows({});
  int seen = 0;
  for (const auto& row : testing::rows_where(doc, "op", "fake")) {
    if (row.value("run_type", "") != "iteration") continue;
    const auto name = row["name"].get<std::string>();
    EXPECT_EQ(name.find("iterations:"), std::string::npos) << name;
    EXPECT_EQ(row["run_name"].get<std::string>().find("iterations:"), std::string::npos);
    if (name == "fake/calibrated/real_time") {
      ++seen;
      EXPECT_EQ(row["iterations"], 96);
      EXPECT_EQ(row["calls_per_batch"], 3);
    } else {
      EXPECT_EQ(name, "fake/not_calibrated/real_time");
    }
  }
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(ledger->calls, 1 + 2 * 96) << "the warm-up's call, then 96 a repetition";
}

TEST_F(MeasureTest, AHostCaseWhoseVerifyRanTheWorkAndWhoseBatchIsKnownMakesNoWarmUpCall) {
  nlohmann::json earlier = {{"iterations", 96}, {"calls_per_batch", 3}};
  std::map<std::string, nlohmann::json> calibration;
  for (const char* name : {"fake/warmed", "fake/unsaid", "fake/chosen"})
    calibration[std::string(name) + "/real_time"] = earlier;
  calibration.erase("fake/chosen/real_time");  // its batch is chosen from a timed warm-up
  set_calibration_rows(calibration);
  FakeCase host = batch_of(0);
  host.device = false;
  host.verify_calls = true;
  auto warmed = register_fake("fake/warmed", host);
  auto chosen = register_fake("fake/chosen", host);
  FakeCase unsaid = host;
  unsaid.verify_calls = false;
  auto not_said = register_fake("fake/unsaid", unsaid);
  FakeCase device = batch_of(3);
  device.verify_calls = true;
  auto on_device = register_fake("fake/device", device);
  chosen->wall_per_call_s = 1e-5;  // a batch of 5 calls lasts the host's 50 µs
  const auto doc = testing::run_registered("fake/", 2, 0.001);
  set_calibration_rows({});
  EXPECT_EQ(warmed->calls, 1 + 2 * 96) << "verify's call, then 96 a repetition";
  EXPECT_EQ(not_said->calls, 1 + 2 * 96)
      << "the warm-up's call: verify did not say it runs the work";
  EXPECT_EQ((on_device->calls - 2) % 3, 0)
      << "a device case keeps its warm-up (clocks ramping), then batches of 3";
  for (const auto& row : testing::rows_where(doc, "op", "fake"))
    if (row["name"] == "fake/chosen/real_time") { EXPECT_EQ(row["calls_per_batch"], 5); }
  EXPECT_EQ((chosen->calls - 2) % 5, 0)
      << "verify's call and the warm-up's, which chose the batch, then batches";
  EXPECT_EQ(chosen->verifies, 1);
}

TEST_F(MeasureTest, ALaterProcessLeavesALongCasesCheckToTheFirstProcessAndMakesNoWarmUpCall) {
  const auto first_row = [](double host_time_s, bool validated) {
    return nlohmann::json{{"iterations", 4},
                          {"calls_per_batch", 1},
                          {"host_time_s", host_time_s},
                          {"validated", validated}};
  };
  set_calibration_rows({{"fake/long/real_time", first_row(0.02, true)},
                        {"fake/short/real_time", first_row(0.002, true)},
                        {"fake/wrong_first/real_time", first_row(0.02, false)},
                        {"fake/keeps_state/real_time", first_row(0.02, true)},
                        {"fake/no_time/real_time",
                         {{"iterations", 4}, {"host_time_s", nullptr}, {"validated", true}}}});
  FakeCase host = batch_of(0);
  host.device = false;
  host.verify_calls = true;
  host.verify_only_checks = true;
  auto long_call = register_fake("fake/long", host);
  auto short_call = register_fake("fake/short", host);
  auto wrong_first = register_fake("fake/wrong_first", host);
  auto alone = register_fake("fake/one_process", host);  // no row of a first process: checked here
  auto no_time = register_fake("fake/no_time", host);
  FakeCase stateful = host;
  stateful.verify_only_checks = false;
  auto keeps_state = register_fake("fake/keeps_state", stateful);
  const auto doc = testing::run_registered("fake/", 2, 0.001);
  set_calibration_rows({});
  EXPECT_EQ(long_call->verifies, 0);
  EXPECT_EQ(long_call->calls, 2 * 4) << "no untimed call: 4 a repetition";
  for (const auto& ledger : {short_call, wrong_first, alone, keeps_state, no_time})
    EXPECT_EQ(ledger->verifies, 1);
  EXPECT_EQ(short_call->calls, 1 + 2 * 4) << "verify's call is its warm-up";
  int rows = 0;
  for (const auto& row : testing::rows_where(doc, "op", "fake")) {
    if (row.value("run_type", "") != "iteration") continue;
    ++rows;
    EXPECT_EQ(row["validated"], true) << row["name"];
    EXPECT_EQ(row.value("checked_by_first_process", false), row["name"] == "fake/long/real_time")
        << row["name"];
  }
  EXPECT_EQ(rows, 2 * 6);
}

TEST(HostBlocks, AGivenBackBlockServesTheNextFitAndALargerRequestGrowsTheLargestWithItsPages) {
  release_kept_host_blocks();
  void* first = nullptr;
  {
    HostBlock a(3 * kHostBlockAlignment);
    first = a.data();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first) % kHostBlockAlignment, 0u);
    EXPECT_EQ(a.bytes(), 3 * kHostBlockAlignment);
    static_cast<unsigned char*>(a.data())[3 * kHostBlockAlignment - 1] =
        0xAB;  // written by "a case"
  }
  if (!host_blocks_are_kept()) GTEST_SKIP() << "several NUMA nodes here: blocks are not kept";
  EXPECT_EQ(kept_host_block_bytes(), 3 * kHostBlockAlignment);
  {
    HostBlock smaller(kHostBlockAlignment + 1);
    EXPECT_EQ(smaller.data(), first);  // its pages are the ones touched before
    EXPECT_EQ(smaller.bytes(), 3 * kHostBlockAlignment);
    EXPECT_EQ(kept_host_block_bytes(), 0u);
  }
  {
    HostBlock larger(5 * kHostBlockAlignment);  // nothing kept fits: the largest kept grows
    EXPECT_EQ(larger.bytes(), 5 * kHostBlockAlignment);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(larger.data()) % kHostBlockAlignment, 0u);
    const auto* bytes = static_cast<const unsigned char*>(larger.data());
    EXPECT_EQ(bytes[3 * kHostBlockAlignment - 1], 0xAB) << "the grown block keeps the pages it had";
    EXPECT_EQ(bytes[5 * kHostBlockAlignment - 1], 0) << "and its new part is fresh";
    EXPECT_EQ(kept_host_block_bytes(), 0u);
  }
  EXPECT_EQ(kept_host_block_bytes(), 5 * kHostBlockAlignment);
  release_kept_host_blocks();
  EXPECT_EQ(kept_host_block_bytes(), 0u);
}

TEST(HostBlocks, ASmallArrayComesFromTheHeapAtItsAlignmentAndALargeOneIsAKeptBlock) {
  release_kept_host_blocks();
  const HostArray small(100, 4096);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.data()) % 4096, 0u);
  EXPECT_EQ(kept_host_block_bytes(), 0u);
  void* first = nullptr;
  {
    const HostArray large(kHostBlockAlignment + 1, 64);
    first = large.data();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first) % kHostBlockAlignment, 0u);
  }
  if (!host_blocks_are_kept()) GTEST_SKIP() << "several NUMA nodes here: blocks are not kept";
  EXPECT_EQ(kept_host_block_bytes(), 2 * kHostBlockAlignment);
  const HostArray again(2 * kHostBlockAlignment, 64);
  EXPECT_EQ(again.data(), first) << "the next case's array of that size has the same pages";
  release_kept_host_blocks();
}

}  // namespace offloadbench
