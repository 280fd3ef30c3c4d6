// The table of the copy-idiom and pinning-at-scale transfer cases. Byte counting, per op:
//   torch_idiom (batch)   bytes = batch bytes × kBatchesPerCall per call: the rate is batches moved
//   and
//                         stepped per second, not a link rate (the GPU step is inside the time);
//                         the row's batch_time_s = seconds per call / kBatchesPerCall
//   torch_idiom (result)  bytes = the result's bytes per call (a D2H copy and its synchronize)
//   pin_at_scale          bytes pinned per call; pin_time_s, unpin_time_s and the copy times the
//   break-even
//                         needs (pageable_copy_s, pinned_copy_s) as counters
//   first_touch_at_scale  bytes touched per call (mmap, one write per 4 KiB page, munmap):
//   first-touch GB/s
#include "benchmarks/transfer/transfer_idioms_cases.h"

#include <thread>

#include <fmt/format.h>

#include "benchmarks/property_table.h"
#include "benchmarks/transfer/host_pages.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_runner.h"
#include "harness/results/sizes.h"

namespace offloadbench {

namespace {
constexpr TorchIdiomInfo kTorchIdioms[] = {
    //                                  name                      models (the row's `idiom`) batch
    {TorchIdiom::to_from_pageable, "to_from_pageable", "x.to(device) from pageable memory", true},
    {TorchIdiom::pin_memory_fresh, "pin_memory_fresh",
     "x.pin_memory().to(device, non_blocking=True), pinned afresh each batch", true},
    {TorchIdiom::pin_memory_cached, "pin_memory_cached",
     "x.pin_memory().to(device, non_blocking=True), caching host allocator", true},
    {TorchIdiom::pin_memory_cached_item, "pin_memory_cached_item",
     "the same plus loss.item() after every step", true},
    {TorchIdiom::pin_thread_pipeline, "pin_thread_pipeline",
     "DataLoader(pin_memory=True): a pin thread fills pinned staging ahead", true},
    {TorchIdiom::already_pinned, "already_pinned",
     "x already pinned, x.to(device, non_blocking=True)", true},
    {TorchIdiom::result_to_pageable, "result_to_pageable", "y.cpu() into pageable memory", false},
    {TorchIdiom::result_to_pinned, "result_to_pinned",
     "y.to('cpu', non_blocking=True) into pinned memory + synchronize", false},
    {TorchIdiom::item, "item", "loss.item(): 4-byte D2H + the stream synchronize it forces", false},
};

constexpr PinScaleMethodInfo kPinScaleMethods[] = {
    //                                 name                api_calls mmap   pretouch chunked
    {PinScaleMethod::host_alloc, "host_alloc", "cudaHostAlloc+cudaFreeHost", false, false, false},
    {PinScaleMethod::register_fresh, "register_fresh", "cudaHostRegister+cudaHostUnregister", true,
     false, false},
    {PinScaleMethod::register_touched, "register_touched", "cudaHostRegister+cudaHostUnregister",
     true, true, false},
    {PinScaleMethod::register_chunks, "register_chunks",
     "cudaHostRegister+cudaHostUnregister per 256 MiB chunk", true, true, true},
};
}  // namespace

const TorchIdiomInfo& torch_idiom_info(TorchIdiom idiom) {
  return row_for(kTorchIdioms, &TorchIdiomInfo::idiom, idiom, "kTorchIdioms");
}

const std::vector<TorchIdiom>& all_torch_idioms() {
  static const std::vector<TorchIdiom> idioms = [] {
    std::vector<TorchIdiom> out;
    for (const auto& row : kTorchIdioms) out.push_back(row.idiom);
    return out;
  }();
  return idioms;
}

const PinScaleMethodInfo& pin_scale_method_info(PinScaleMethod method) {
  return row_for(kPinScaleMethods, &PinScaleMethodInfo::method, method, "kPinScaleMethods");
}

const char* to_string(HugePages huge_pages) {
  return huge_pages == HugePages::madvise ? "madvise" : "none";
}

std::vector<std::uint64_t> idiom_batch_images(bool quick) {
  if (quick) return {64};
  return {8, 64, 256};
}

std::vector<std::uint64_t> idiom_result_bytes(bool quick) {
  if (quick) return {64 * 1000 * 4};         // the logits of a batch of 64 over 1000 classes, fp32
  return {64 * 1000 * 4, 64 * kImageBytes};  // ... and a whole batch of images back
}

std::vector<std::uint64_t> pin_scale_sizes(bool quick) {
  if (quick) return {1ull << 30};
  return {1ull << 30, 2ull << 30, 4ull << 30, 8ull << 30, 16ull << 30};
}

std::vector<std::uint64_t> first_touch_scale_sizes(bool quick) {
  if (quick) return {256ull << 20};
  return {1ull << 30, 2ull << 30, 4ull << 30, 8ull << 30, 16ull << 30};
}

namespace {

void register_idioms(const RunConfig& config, int device) {
  auto add = [&](const TorchIdiomInfo& info, TorchIdiomCase c, nlohmann::json fields,
                 const std::string& size) {
    c.idiom = info.idiom;
    c.device = device;
    fields.update({{"op", "torch_idiom"},
                   {"method", info.name},
                   {"idiom", info.models},
                   {"bytes", c.bytes},
                   {"direction", info.batch ? "h2d" : "d2h"},
                   {"device", device}});
    register_case(measured_case(
        fmt::format("transfer/torch_idiom/{}/{}{}", info.name, size, config.gpu_suffix(device)),
        "transfer", std::move(fields), Clock::host_wall,
        [c] { return OFFLOADBENCH_GPU_RUNNER(setup_torch_idiom)(c); }));
  };
  for (const auto& info : kTorchIdioms) {
    if (info.batch) {
      for (auto images : idiom_batch_images(config.quick)) {
        TorchIdiomCase c;
        c.bytes = images * kImageBytes;
        c.gpu_step_s = kIdiomGpuStepSeconds;
        add(info, c,
            {{"batch_images", images},
             {"image_shape", "224x224x3 float32"},
             {"gpu_step_s", c.gpu_step_s},
             {"batches_per_call", kBatchesPerCall},
             {"bytes_counted", "batch bytes × batches per call"}},
            fmt::format("batch:{}", images));
      }
    } else if (info.idiom == TorchIdiom::item) {
      TorchIdiomCase c;
      c.bytes = 4;
      add(info, c, {}, "4B");
    } else {
      for (auto bytes : idiom_result_bytes(config.quick)) {
        TorchIdiomCase c;
        c.bytes = bytes;
        add(info, c, {}, format_size(bytes));
      }
    }
  }
}

void register_pin_at_scale(const RunConfig& config, int device) {
  for (const auto& info : kPinScaleMethods)
    for (auto huge_pages : {HugePages::none, HugePages::madvise}) {
      if (!info.mmap && huge_pages == HugePages::madvise)
        continue;  // cudaHostAlloc's pages are the driver's
      for (auto bytes : pin_scale_sizes(config.quick)) {
        PinScaleCase c{info.method, huge_pages, bytes, device};
        nlohmann::json fields = {{"op", "pin_at_scale"},
                                 {"method", info.name},
                                 {"pin_operation", info.api_calls},
                                 {"huge_pages", to_string(huge_pages)},
                                 {"pretouch", info.pretouch},
                                 {"bytes", bytes},
                                 {"device", device},
                                 {"thp_enabled", transparent_huge_pages_enabled()},
                                 {"thp_defrag", transparent_huge_pages_defrag()}};
        if (info.chunked) fields["chunk_bytes"] = kRegisterChunkBytes;
        fields["timed"] = "the pinning call(s) alone";
        // Timed by the case's own clock: the pinning alone. A repetition is one call (pinning 1 GiB
        // takes 0.03-0.5 s), as in the quick and the full sweep; the call's touch and unmap stay
        // out of it.
        auto spec = measured_case(
            fmt::format("transfer/pin_at_scale/{}/{}/{}{}", info.name, to_string(huge_pages),
                        format_size(bytes), config.gpu_suffix(device)),
            "transfer", std::move(fields), Clock::case_clock,
            [c] { return OFFLOADBENCH_GPU_RUNNER(setup_pin_at_scale)(c); });
        spec.min_time_s = 0.01;
        register_case(std::move(spec));
      }
    }
}

void register_first_touch_at_scale(const RunConfig& config) {
  for (auto huge_pages : {HugePages::none, HugePages::madvise})
    for (auto bytes : first_touch_scale_sizes(config.quick))
      register_case(measured_case(fmt::format("transfer/first_touch_at_scale/{}/{}",
                                              to_string(huge_pages), format_size(bytes)),
                                  "transfer",
                                  {{"op", "first_touch_at_scale"},
                                   {"huge_pages", to_string(huge_pages)},
                                   {"bytes", bytes},
                                   {"touch", "one write per 4 KiB page"},
                                   {"device", "cpu"},
                                   {"thp_enabled", transparent_huge_pages_enabled()},
                                   {"thp_defrag", transparent_huge_pages_defrag()}},
                                  Clock::host_wall, [bytes, huge_pages] {
                                    return setup_first_touch_at_scale(bytes, huge_pages);
                                  }));
}

}  // namespace

void register_transfer_idioms_cases(const RunConfig& config) {
  for (int device : config.gpu_devices) {
    register_idioms(config, device);
    register_pin_at_scale(config, device);
  }
  register_first_touch_at_scale(config);
}

}  // namespace offloadbench
