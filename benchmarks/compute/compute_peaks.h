// Theoretical dense FLOP rates by compute capability, for the compute family's percent-of-peak and
// FLOP ceilings. peak = FLOPs per clock per SM (this table) × SM count × peak SM clock.
#pragma once
#include <optional>
#include <string>

#include "kernels/matmul.h"

namespace offloadbench {

// Where the table's numbers come from (recorded in every row that uses them).
inline constexpr const char* kFlopPeakSource =
    "FP32: CUDA C++ Programming Guide, arithmetic instruction throughput per SM per clock (FMA = 2 "
    "FLOP); "
    "tensor TF32/FP16/BF16 (dense, fp32 accumulate): NVIDIA V100/A100/GA102/Ada/H100 whitepapers, "
    "peak TFLOPS / (SMs x boost clock)";

// FLOPs per clock per SM for `precision` with an fp32 own kernel (tiled uses fp32 CUDA cores, as
// strict cuBLAS does); 0 when the capability or the precision is not in the table.
double flops_per_clock_per_sm(GemmPrecision precision, int cc_major, int cc_minor);

// The SM clock NVIDIA's datasheet tensor-core peaks assume for a GPU (its name as the driver
// reports it), and the document. A datasheet's dense tensor TFLOPS are FLOP/clock/SM × SMs × this
// clock, which can be below the clock its FP32 figure uses (H100 SXM: 989 BF16 TFLOPS at 1830 MHz,
// 67 FP32 TFLOPS at its 1980 MHz boost). percent_of_peak of a tensor-core precision is against this
// peak; FP32 and the ceiling a rate must not pass use the highest clock the driver reports.
struct PublishedClock {
  double mhz = 0;
  const char* source = "";
};
std::optional<PublishedClock> published_peak_clock(const std::string& gpu_name);

// The peak_source text of a GPU row: the table's source and which clock the peak uses.
std::string flop_peak_source(const std::string& gpu_name, GemmPrecision precision);

// The clock percent_of_peak uses for `precision` on `gpu_name`: the published tensor clock for a
// tensor-core precision where known, else `highest_clock_hz`.
double peak_clock_hz(const std::string& gpu_name, GemmPrecision precision, double highest_clock_hz);

// 0 when unknown.
double flop_peak_per_second(GemmPrecision precision, int cc_major, int cc_minor, int sm_count,
                            double clock_hz);

}  // namespace offloadbench
