// The FLOP-peak table (see compute_peaks.h for its source). Checked against published totals:
// A100 19.5/156/312 TFLOPS (108 SMs, 1.41 GHz), L40S 91.6/183/362 (142 SMs, 2.52 GHz),
// H100 SXM 67/495/989 (132 SMs, 1.98 GHz FP32; tensor figures at 1.83 GHz).
#include "benchmarks/compute/compute_peaks.h"

#include <fmt/format.h>

namespace offloadbench {

namespace {

struct Rates {
  int cc_major, cc_minor;
  double fp32, tf32, fp16_bf16;  // FLOP per clock per SM; 0 = no such unit
};

constexpr Rates kRates[] = {
    {7, 0, 128, 0, 1024},     // V100 (fp16 tensor cores, no bf16/tf32: bf16 rows use 0 below)
    {8, 0, 128, 1024, 2048},  // A100
    {8, 6, 256, 512,
     1024},  // GA10x (A40/A6000 rates; GeForce parts halve fp32-accumulate tensor math)
    {8, 9, 256, 512, 1024},   // Ada (L4, L40S)
    {9, 0, 256, 2048, 4096},  // H100, H200
};

}  // namespace

double flops_per_clock_per_sm(GemmPrecision precision, int cc_major, int cc_minor) {
  for (const auto& r : kRates) {
    if (r.cc_major != cc_major || r.cc_minor != cc_minor) continue;
    switch (precision) {
      case GemmPrecision::fp32:
        return r.fp32;
      case GemmPrecision::tf32:
        return r.tf32;
      case GemmPrecision::fp16:
        return r.fp16_bf16;
      case GemmPrecision::bf16:
        return cc_major >= 8 ? r.fp16_bf16 : 0;
    }
  }
  return 0;
}

std::optional<PublishedClock> published_peak_clock(const std::string& gpu_name) {
  // Matched on the driver's name; the most specific first. Each clock is the datasheet's dense
  // tensor peak divided by (FLOP/clock/SM × SMs).
  struct Entry {
    const char* name;
    PublishedClock clock;
  };
  static const Entry kPublished[] = {
      {"H100 80GB HBM3",
       {1830,
        "NVIDIA H100 Tensor Core GPU datasheet (SXM5): 989 dense BF16 TFLOPS = 4096 x 132 SMs x "
        "1830 MHz"}},
      {"H100 SXM",
       {1830,
        "NVIDIA H100 Tensor Core GPU datasheet (SXM5): 989 dense BF16 TFLOPS = 4096 x 132 SMs x "
        "1830 MHz"}},
      {"H200",
       {1830,
        "NVIDIA H200 Tensor Core GPU datasheet (SXM): 989 dense BF16 TFLOPS = 4096 x 132 SMs x "
        "1830 MHz"}},
      {"A100",
       {1410,
        "NVIDIA A100 Tensor Core GPU datasheet: 312 dense BF16 TFLOPS = 2048 x 108 SMs x 1410 "
        "MHz"}},
  };
  for (const auto& e : kPublished)
    if (gpu_name.find(e.name) != std::string::npos) return e.clock;
  return std::nullopt;
}

bool tensor_precision(GemmPrecision precision) { return precision != GemmPrecision::fp32; }

std::string flop_peak_source(const std::string& gpu_name, GemmPrecision precision) {
  const auto clock = tensor_precision(precision) ? published_peak_clock(gpu_name) : std::nullopt;
  return fmt::format("{}; clock: {}", kFlopPeakSource,
                     clock ? fmt::format("{:.0f} MHz, {}", clock->mhz, clock->source)
                           : std::string("the highest SM clock the driver reports"));
}

double peak_clock_hz(const std::string& gpu_name, GemmPrecision precision,
                     double highest_clock_hz) {
  const auto clock = tensor_precision(precision) ? published_peak_clock(gpu_name) : std::nullopt;
  return clock ? clock->mhz * 1e6 : highest_clock_hz;
}

double flop_peak_per_second(GemmPrecision precision, int cc_major, int cc_minor, int sm_count,
                            double clock_hz) {
  return flops_per_clock_per_sm(precision, cc_major, cc_minor) * sm_count * clock_hz;
}

}  // namespace offloadbench
