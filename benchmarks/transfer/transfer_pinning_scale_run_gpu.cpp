// GPU runner for pinning at scale (see transfer_idioms_cases.h): each call makes the method's
// memory afresh (cudaHostAlloc, or an mmap with or without huge pages, touched or not) and pins and
// unpins it, the pin and unpin timed apart by the wall clock (pin_time_s, unpin_time_s;
// touch_time_s for the pre-touch). The row's own clock counts the pinning alone, so its real_time
// and bytes_per_second are the pinning's, not the call's mmap, touch, unpin and munmap. Beside the
// calls, once per case: an H2D copy of the whole buffer from the same memory pinned (pinned_copy_s)
// and from the same kind of memory unpinned (pageable_copy_s), which the analysis turns into the
// copies after which pinning pays.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "benchmarks/transfer/host_pages.h"
#include "benchmarks/transfer/transfer_extra_cases.h"
#include "benchmarks/transfer/transfer_idioms_cases.h"
#include "harness/cuda/gpu_checks.h"
#include "harness/gpu_info.h"
#include "harness/system_info.h"
#include "kernels/cuda/cuda_raii.h"

namespace offloadbench {

namespace {

// The memory of one method, pinned; unpin() (or the destructor) undoes it.
class PinnedAtScale {
 public:
  explicit PinnedAtScale(const PinScaleCase& c) : c_(c) {
    const auto& info = pin_scale_method_info(c.method);
    if (!info.mmap) {
      pin_s_ =
          wall_seconds([&] { CUDA_CHECK(cudaHostAlloc(&data_, c.bytes, cudaHostAllocDefault)); });
      return;
    }
    pages_ = std::make_unique<MappedPages>(c.bytes, c.huge_pages == HugePages::madvise);
    data_ = pages_->data();
    if (info.pretouch) touch_s_ = wall_seconds([&] { pages_->touch(); });
    try {
      pin_s_ = wall_seconds([&] {
        for (const auto& [offset, length] : chunks()) {
          CUDA_CHECK(cudaHostRegister(pages_->data() + offset, length, cudaHostRegisterDefault));
          ++registered_;
        }
      });
    } catch (...) {
      unregister_nothrow();  // the chunks registered before the failure, before the pages go
      throw;
    }
  }
  ~PinnedAtScale() {
    if (unpinned_) return;
    if (!pages_)
      CUDA_CHECK_NOTHROW(cudaFreeHost(data_));
    else
      unregister_nothrow();
  }
  PinnedAtScale(const PinnedAtScale&) = delete;
  PinnedAtScale& operator=(const PinnedAtScale&) = delete;

  // Seconds to unpin (cudaFreeHost frees the memory too; an mmap is unmapped by the destructor).
  double unpin() {
    const double s = wall_seconds([&] {
      if (!pages_)
        CUDA_CHECK(cudaFreeHost(data_));
      else
        for (const auto& [offset, length] : chunks())
          CUDA_CHECK(cudaHostUnregister(pages_->data() + offset));
      registered_ = 0;
    });
    unpinned_ = true;
    return s;
  }
  unsigned char* data() const { return static_cast<unsigned char*>(data_); }
  double pin_seconds() const { return pin_s_; }
  double touch_seconds() const { return touch_s_; }

 private:
  void unregister_nothrow() {
    const auto pieces = chunks();
    for (std::size_t k = 0; k < registered_; ++k)
      CUDA_CHECK_NOTHROW(cudaHostUnregister(pages_->data() + pieces[k].first));
    registered_ = 0;
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> chunks() const {
    return chunk_ranges(c_.bytes,
                        pin_scale_method_info(c_.method).chunked ? kRegisterChunkBytes : c_.bytes);
  }
  PinScaleCase c_;
  std::unique_ptr<MappedPages> pages_;
  void* data_ = nullptr;
  std::size_t registered_ = 0;  // chunks registered so far
  bool unpinned_ = false;
  double pin_s_ = 0, touch_s_ = 0;
};

// The case's clock (Measurement::wall): it moves only while memory is being pinned.
class PinningClock : public WallClock {
 public:
  double now_seconds() override { return pinned_s_; }
  void add(double seconds) { pinned_s_ += seconds; }

 private:
  double pinned_s_ = 0;
};

struct PinScaleTimes {
  double pin_s = 0, unpin_s = 0, touch_s = 0;
  std::int64_t calls = 0;
  int untimed_left = 0;  // the measurement layer's warm-up calls: first-pin costs, not counted
  std::uint64_t anon_huge_bytes = 0;
};

constexpr std::uint64_t kPinScaleSeed = 35;

// Through the pinned memory both ways: seeded bytes up, the memory poisoned, the bytes back down.
std::string verify_pinned(const PinScaleCase& c, const DeviceBuffer& device, PinScaleTimes& times) {
  PinnedAtScale memory(c);
  fill_seeded_bytes(memory.data(), c.bytes, kPinScaleSeed);
  CUDA_CHECK(cudaMemcpy(device.data(), memory.data(), c.bytes, cudaMemcpyHostToDevice));
  std::memset(memory.data(), 0, c.bytes);
  CUDA_CHECK(cudaMemcpy(memory.data(), device.data(), c.bytes, cudaMemcpyDeviceToHost));
  if (pin_scale_method_info(c.method).mmap)
    times.anon_huge_bytes = anon_huge_bytes(memory.data(), c.bytes);
  const auto at = first_unseeded_byte(memory.data(), c.bytes, kPinScaleSeed);
  return at == c.bytes ? ""
                       : fmt::format("byte {} of {} did not survive the round trip", at, c.bytes);
}

}  // namespace

MeasuredCase setup_pin_at_scale(const PinScaleCase& c) {
  if (auto reason = gpu_unavailable_reason(c.device); !reason.empty())
    return MeasuredCase::skip(reason);
  if (auto problem = gpu_problem(c.device, c.bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  // The call's fresh memory and, beside it, the copies' pinned or pageable buffer.
  if (auto problem = host_fit_problem(2 * c.bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  auto device = std::make_shared<DeviceBuffer>(c.bytes);
  auto times = std::make_shared<PinScaleTimes>();
  auto clock = std::make_shared<PinningClock>();
  MeasuredCase made;
  Measurement& m = made.measurement;
  times->untimed_left = std::max(m.warmup_calls, 1);
  m.wall = clock.get();  // kept alive by the call, which holds it too
  m.call = [c, times, clock] {
    PinnedAtScale memory(c);
    clock->add(memory.pin_seconds());
    const double unpin_s = memory.unpin();
    if (times->untimed_left > 0) {
      --times->untimed_left;
      return;
    }
    times->pin_s += memory.pin_seconds();
    times->touch_s += memory.touch_seconds();
    times->unpin_s += unpin_s;
    ++times->calls;
  };
  m.verify = [c, device, times] { return verify_pinned(c, *device, *times); };
  m.calls_per_batch = 1;  // a call pins gigabytes: 0.1-10 s
  m.work.bytes = static_cast<double>(c.bytes);
  SideRate pinned;
  pinned.rate_counter = "pinned_copy_bytes_per_second";
  pinned.time_counter = "pinned_copy_s";
  pinned.bytes = static_cast<double>(c.bytes);
  pinned.time = [c, device] {
    PinnedAtScale memory(c);
    return median_wall_seconds(3, [&] {
      CUDA_CHECK(cudaMemcpy(device->data(), memory.data(), c.bytes, cudaMemcpyHostToDevice));
    });
  };
  SideRate pageable = pinned;
  pageable.rate_counter = "pageable_copy_bytes_per_second";
  pageable.time_counter = "pageable_copy_s";
  pageable.time = [c, device] {
    MappedPages memory(c.bytes, c.huge_pages == HugePages::madvise);
    memory.touch();
    return median_wall_seconds(3, [&] {
      CUDA_CHECK(cudaMemcpy(device->data(), memory.data(), c.bytes, cudaMemcpyHostToDevice));
    });
  };
  m.side_rates = {pinned, pageable};
  m.report = [c, times](benchmark::State& state, const Totals&) {
    const auto calls = static_cast<double>(std::max<std::int64_t>(times->calls, 1));
    state.counters["pin_time_s"] = times->pin_s / calls;
    state.counters["unpin_time_s"] = times->unpin_s / calls;
    state.counters["touch_time_s"] = times->touch_s / calls;
    state.counters["anon_huge_pages_bytes"] = static_cast<double>(times->anon_huge_bytes);
    state.counters["huge_page_fraction"] =
        static_cast<double>(times->anon_huge_bytes) / static_cast<double>(c.bytes);
    times->pin_s = times->unpin_s = times->touch_s =
        0;  // the next Google Benchmark call starts afresh
    times->calls = 0;
  };
  return made;
}

}  // namespace offloadbench
