// GPU tests (label gpu) for the peer family's runner: on one GPU the host patterns (the measured
// GPU's copy alone) move the right bytes through the multi-GPU timer below their ceiling; with two
// GPUs and peer access, each pair pattern's copies arrive byte for byte.
#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include "benchmarks/peer/peer_cases.h"
#include "harness/gpu_info.h"

namespace offloadbench {

namespace {
PeerCase case_of(const std::string& nvbandwidth, int gpu, int peer, std::vector<int> gpus) {
  for (const auto& t : peer_testcases())
    if (t.nvbandwidth == nvbandwidth) return {t, gpu, peer, std::move(gpus), 64ull << 20, ""};
  throw std::logic_error(nvbandwidth);
}

// Verify, then one timed batch of one call: the rate must be positive and below the ceiling.
void expect_measures(const PeerCase& c) {
  auto made = setup_peer(c);
  ASSERT_EQ(made.skip_reason, "") << c.testcase.nvbandwidth;
  auto& m = made.measurement;
  ASSERT_EQ(m.verify(), "") << c.testcase.nvbandwidth;
  if (m.before_batch) m.before_batch();
  m.device->begin_batch();
  m.call();
  m.device->end_batch();
  const auto batch = m.device->wait({});
  ASSERT_FALSE(batch.gate_timed_out);
  ASSERT_GT(batch.seconds, 0);
  if (m.work.bytes > 0 && m.bytes_ceiling > 0) {
    EXPECT_LT(m.work.bytes / batch.seconds, m.bytes_ceiling) << c.testcase.nvbandwidth;
  }
}
}  // namespace

class GpuPeer : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = gpu_unavailable_reason(0); !reason.empty()) GTEST_SKIP() << reason;
  }
};

TEST_F(GpuPeer, HostPatternsOnOneGpuMoveTheirBytes) {
  for (const char* name : {"all_to_host_memcpy_ce", "host_to_all_memcpy_ce",
                           "all_to_host_memcpy_sm", "host_to_all_memcpy_sm"})
    expect_measures(case_of(name, 0, -1, {0}));
}

TEST_F(GpuPeer, PairPatternsMoveTheirBytesBetweenTwoGpus) {
  if (gpu_inventory().gpus.size() < 2) GTEST_SKIP() << "needs 2 GPUs";
  int can = 0;
  ASSERT_EQ(cudaDeviceCanAccessPeer(&can, 0, 1), cudaSuccess);
  if (!can) GTEST_SKIP() << peer_access_problem(0, 1, false, -1);
  for (const auto& t : peer_testcases()) {
    if (t.pattern == PeerPattern::latency) continue;
    const bool per_gpu =
        t.pattern != PeerPattern::one_way && t.pattern != PeerPattern::bidirectional;
    expect_measures(case_of(t.nvbandwidth, 0, per_gpu ? -1 : 1, {0, 1}));
  }
  auto latency = setup_peer(case_of("device_to_device_latency_sm", 0, 1, {0, 1}));
  ASSERT_EQ(latency.skip_reason, "");
  EXPECT_EQ(latency.measurement.verify(), "");
}

}  // namespace offloadbench
