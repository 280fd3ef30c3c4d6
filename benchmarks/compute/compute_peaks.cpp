// The FLOP-peak table (see compute_peaks.h for its source). Checked against published totals:
// A100 19.5/156/312 TFLOPS (108 SMs, 1.41 GHz), L40S 91.6/183/362 (142 SMs, 2.52 GHz),
// H100 SXM 67/495/989 (132 SMs, 1.98 GHz FP32; tensor figures at 1.83 GHz).
#include "benchmarks/compute/compute_peaks.h"

namespace offloadbench {

namespace {

struct Rates {
  int cc_major, cc_minor;
  double fp32, tf32, fp16_bf16;  // FLOP per clock per SM; 0 = no such unit
};

constexpr Rates kRates[] = {
    {7, 0, 128, 0, 1024},     // V100 (fp16 tensor cores, no bf16/tf32: bf16 rows use 0 below)
    {8, 0, 128, 1024, 2048},  // A100
    {8, 6, 256, 512, 1024},   // GA10x (A40/A6000 rates; GeForce parts halve fp32-accumulate tensor math)
    {8, 9, 256, 512, 1024},   // Ada (L4, L40S)
    {9, 0, 256, 2048, 4096},  // H100, H200
};

}  // namespace

double flops_per_clock_per_sm(GemmPrecision precision, int cc_major, int cc_minor) {
  for (const auto& r : kRates) {
    if (r.cc_major != cc_major || r.cc_minor != cc_minor) continue;
    switch (precision) {
      case GemmPrecision::fp32: return r.fp32;
      case GemmPrecision::tf32: return r.tf32;
      case GemmPrecision::fp16: return r.fp16_bf16;
      case GemmPrecision::bf16: return cc_major >= 8 ? r.fp16_bf16 : 0;
    }
  }
  return 0;
}

double flop_peak_per_second(GemmPrecision precision, int cc_major, int cc_minor, int sm_count, double clock_hz) {
  return flops_per_clock_per_sm(precision, cc_major, cc_minor) * sm_count * clock_hz;
}

}  // namespace offloadbench
