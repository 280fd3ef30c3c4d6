// Theoretical dense FLOP rates by compute capability, for the compute family's percent-of-peak and
// FLOP ceilings. peak = FLOPs per clock per SM (this table) × SM count × peak SM clock.
#pragma once
#include "kernels/matmul.h"

namespace offloadbench {

// Where the table's numbers come from (recorded in every row that uses them).
inline constexpr const char* kFlopPeakSource =
    "FP32: CUDA C++ Programming Guide, arithmetic instruction throughput per SM per clock (FMA = 2 FLOP); "
    "tensor TF32/FP16/BF16 (dense, fp32 accumulate): NVIDIA V100/A100/GA102/Ada/H100 whitepapers, "
    "peak TFLOPS / (SMs x boost clock)";

// FLOPs per clock per SM for `precision` with an fp32 own kernel (tiled uses fp32 CUDA cores, as
// strict cuBLAS does); 0 when the capability or the precision is not in the table.
double flops_per_clock_per_sm(GemmPrecision precision, int cc_major, int cc_minor);

// 0 when unknown.
double flop_peak_per_second(GemmPrecision precision, int cc_major, int cc_minor, int sm_count, double clock_hz);

}  // namespace offloadbench
