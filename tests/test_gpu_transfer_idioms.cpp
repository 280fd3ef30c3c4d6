// GPU tests for the copy-idiom and pinning-at-scale cases: every PyTorch idiom moves the right
// bytes to the GPU step (the device sum of each batch equals its CPU twin's) or back to the host,
// again after timed calls; every pinning-at-scale method pins, verifies through the pinned memory
// and measures its copies.
#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include "benchmarks/transfer/transfer_idioms_cases.h"
#include "harness/gpu_info.h"
#include "kernels/cuda/cuda_check.h"

namespace offloadbench {

class GpuTransferIdioms : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = gpu_unavailable_reason(0); !reason.empty()) GTEST_SKIP() << reason;
    CUDA_CHECK(cudaSetDevice(0));
  }
};

TEST_F(GpuTransferIdioms, EveryIdiomDeliversEveryBatchToTheStep) {
  for (auto idiom : all_torch_idioms()) {
    TorchIdiomCase c;
    c.idiom = idiom;
    c.bytes =
        torch_idiom_info(idiom).batch ? 4 * kImageBytes : (idiom == TorchIdiom::item ? 4 : 256000);
    c.gpu_step_s = torch_idiom_info(idiom).batch ? 2e-4 : 0;
    auto made = setup_torch_idiom(c);
    ASSERT_EQ(made.skip_reason, "") << torch_idiom_info(idiom).name;
    auto& m = made.measurement;
    EXPECT_EQ(m.verify(), "") << torch_idiom_info(idiom).name;
    for (int k = 0; k < 3; ++k) m.call();
    EXPECT_EQ(m.verify(), "") << torch_idiom_info(idiom).name << ", after timed calls";
  }
}

TEST_F(GpuTransferIdioms, EveryPinningMethodPinsVerifiesAndTimesItsCopies) {
  for (auto method : {PinScaleMethod::host_alloc, PinScaleMethod::register_fresh,
                      PinScaleMethod::register_touched, PinScaleMethod::register_chunks})
    for (auto huge_pages : {HugePages::none, HugePages::madvise}) {
      PinScaleCase c{method, huge_pages, 600ull << 20,
                     0};  // 600 MiB: three chunks, the last one short
      auto made = setup_pin_at_scale(c);
      ASSERT_EQ(made.skip_reason, "");
      auto& m = made.measurement;
      EXPECT_EQ(m.verify(), "") << pin_scale_method_info(method).name << " "
                                << to_string(huge_pages);
      m.call();
      m.call();
      for (auto& side : m.side_rates) EXPECT_GT(side.time(), 0.0) << side.rate_counter;
    }
}

}  // namespace offloadbench
