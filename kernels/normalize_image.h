// An image batch as a model's input layer wants it: uint8 HWC pixels in, (x/255 − mean[c]) / std[c]
// out, transposed to CHW (what torchvision's ToTensor + Normalize do, per image). Both twins
// compute x·scale[c] + bias[c] with scale = 1/(255·std) and bias = −mean/std: one FMA per element.
// The CPU twin (normalize_image_cpu.cpp, vectorized, OpenMP over images and rows) writes fp32; the
// CUDA kernel (normalize_image.cu) writes fp32, bf16 or fp16, one thread per pixel, one grid row
// per image.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/tolerance.h"

struct CUstream_st;  // cudaStream_t without the CUDA headers, so CPU-only code can include this

namespace offloadbench {

inline constexpr int kMaxImageChannels = 4;

// Per channel: out = in·scale + bias.
struct NormalizeParams {
  int channels = 0;
  float scale[kMaxImageChannels] = {};
  float bias[kMaxImageChannels] = {};
  double mean[kMaxImageChannels] = {};  // what they were made from, for the double reference
  double std[kMaxImageChannels] = {};
};

// From per-channel mean and std in [0, 1] units (ImageNet's, say); throws std::invalid_argument for
// channels outside 1..kMaxImageChannels or a std that is not positive.
NormalizeParams normalize_params(const double* mean, const double* std, int channels);
// ImageNet's mean and std for 3 channels; mean 0.5, std 0.25 for 1 (grayscale).
NormalizeParams default_normalize_params(int channels);

// The exact value of output element (c, y, x) for input byte `value`, in double: (value/255 −
// mean)/std.
double normalized_reference(std::uint8_t value, int channel, const NormalizeParams& p);

// A normalized element rounded to a type of unit roundoff `roundoff` (fp32's, bf16's, fp16's): the
// fp32 FMA form x·scale + bias cancels where the output is near 0, so its error is bounded by the
// terms' size (255·|scale| + |bias|), not the output's: a few fp32 roundings of that as atol; the
// output's own rounding is relative to it: a few of its roundoff as rtol.
Tolerance normalize_tolerance(const NormalizeParams& p, double roundoff);

enum class NormalizedType { fp32, bf16, fp16 };
const char* to_string(NormalizedType type);
int element_bytes(NormalizedType type);
double unit_roundoff(NormalizedType type);

namespace cpu {
// Up to this many elements the normalize runs on one thread whatever `threads` says: waking a team
// costs more than the work (64x64x3, batch 1: 12,288 elements). PyTorch's parallel_for grain.
inline constexpr std::int64_t kNormalizeParallelGrain = 32768;
// out: [batch][channels][height][width] fp32; in: [batch][height][width][channels] uint8.
// Overwrites out. `threads` OpenMP threads over the batch's rows (one thread, or a batch of at most
// kNormalizeParallelGrain elements: no OpenMP runtime).
void normalize_hwc_to_chw(float* out, const std::uint8_t* in, int batch, int height, int width,
                          const NormalizeParams& p, int threads);
// Which vector clone the CPU twin runs on this CPU (kernels/cpu_vector.h), for the results file.
const char* normalize_vector_level();
}  // namespace cpu

namespace gpu {
// The twin of cpu::normalize_hwc_to_chw, on device pointers, enqueued on `stream`; out holds
// elements of `type` (float, __nv_bfloat16 or __half), rounded to nearest from the fp32 FMA.
void normalize_hwc_to_chw(void* out, NormalizedType type, const std::uint8_t* in, int batch,
                          int height, int width, const NormalizeParams& p, CUstream_st* stream);
}  // namespace gpu

// Decoders for checking GPU output on the host (round to nearest even is what the kernel did).
float bf16_bits_to_float(std::uint16_t bits);
float fp16_bits_to_float(std::uint16_t bits);
// Output element i of a buffer of `type` as float.
float normalized_element(const void* out, NormalizedType type, std::size_t i);

// "" when out (an output of `type`, [batch][c][h][w]) matches the double reference of `in`
// within normalize_tolerance, else what differs.
std::string check_normalized(const void* out, NormalizedType type, const std::uint8_t* in,
                             int batch, int height, int width, const NormalizeParams& p);

}  // namespace offloadbench
