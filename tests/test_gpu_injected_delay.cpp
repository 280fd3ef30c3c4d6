// GPU tests of the regression self-test's device slowdown: the delay kernel waits on its stream as
// long as asked (harness/cuda/injected_delay.h), and +20% asked of a device-timed case through
// OFFLOADBENCH_INJECT_SLOWDOWN lengthens its device time by 15-25%, measured interleaved with the
// same case unslowed in the same process.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "benchmarks/transfer/transfer_cases.h"
#include "harness/analysis/stats.h"
#include "harness/cuda/event_timer.h"
#include "harness/cuda/injected_delay.h"
#include "harness/gpu_info.h"
#include "harness/injected_slowdown.h"
#include "tests/test_support.h"

namespace offloadbench {

namespace {

class GpuInjectedDelay : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = gpu_unavailable_reason(0); !reason.empty()) GTEST_SKIP() << reason;
    CUDA_CHECK(cudaSetDevice(0));
  }
};

// The median device seconds per call of `name` over 3 repetitions, with the variable as given.
double median_device_seconds(const std::string& name, const std::optional<std::string>& inject) {
  const testing::ScopedSlowdown rules(inject);
  const auto doc = testing::run_registered("^" + name + "/", 3, 0.05);
  std::vector<double> seconds;
  for (const auto& row : testing::rows_where(doc, "name", name + "/manual_time")) {
    EXPECT_EQ(row["validated"], true) << row.value("invalid_reason", "");
    seconds.push_back(row["device_time_s"].get<double>());
  }
  EXPECT_EQ(seconds.size(), 3u) << name;
  return seconds.empty() ? 0 : median(seconds);
}

}  // namespace

TEST_F(GpuInjectedDelay, TheDelayKernelWaitsAsLongAsAsked) {
  CudaStream stream;
  EventTimerOptions timing;
  timing.stream = stream.get();
  timing.gated = true;  // the start event waits for the gate, not for the host to launch the delay
  EventTimer timer(timing);
  for (double asked : {50e-6, 1e-3}) {
    // Through the timer as the layer does it: asked before end_batch, timed between its events.
    const double took = median_of(7, [&] {
      timer.delay_batch(asked);
      return time_once(timer, [] {});
    });
    EXPECT_GE(took, asked - 2e-6) << "asked " << asked
                                  << " s; %globaltimer may tick once late at the start";
    EXPECT_LT(took, asked + 10e-6) << "asked " << asked << " s: more than one launch gap over";
  }
  EXPECT_THROW(enqueue_injected_delay(0, stream.get()), std::invalid_argument);
}

TEST_F(GpuInjectedDelay, TwentyPercentAskedLengthensADeviceTimedCaseByFifteenToTwentyFivePercent) {
  clear_registered_cases();
  RunConfig config;
  config.gpu_devices = {0};
  config.sizes = std::vector<std::uint64_t>{64 << 20};
  register_transfer_suite(config);
  // A gated pinned copy of 64 MiB: one copy a batch, about 1-3 ms, so the delay kernel's launch gap
  // is a few tenths of a percent of it. Interleaved rounds, each order in turn: a drifting clock
  // moves both sides of a round.
  const std::string name = "transfer/h2d/pinned/64MiB";
  std::vector<double> ratios;
  for (int round = 0; round < 6; ++round) {
    double plain = 0, slowed = 0;
    if (round % 2 == 0) plain = median_device_seconds(name, std::nullopt);
    slowed = median_device_seconds(name, name + "=20");
    if (round % 2 == 1) plain = median_device_seconds(name, std::nullopt);
    if (plain > 0) ratios.push_back(slowed / plain);
  }
  ASSERT_EQ(ratios.size(), 6u);
  const double grown = median(ratios) - 1;
  EXPECT_GE(grown, 0.15) << "asked +20%";
  EXPECT_LE(grown, 0.25) << "asked +20%";
  clear_registered_cases();
}

}  // namespace offloadbench
