// CPU twin of the image-batch normalize (kernels/normalize_image.h): per image row, one pass that
// reads the row's interleaved bytes and writes each channel's plane with one FMA per element. The
// row loop is specialised for 1 and 3 channels so the compiler sees a fixed interleave and
// vectorizes it (checked with -fopt-info-vec: "loop vectorized using 64 byte vectors" for both on
// x86-64-v4); rows are split across OpenMP threads, each thread first touching what it writes.
#include <omp.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "kernels/cpu_vector.h"
#include "kernels/normalize_image.h"

namespace offloadbench {

NormalizeParams normalize_params(const double* mean, const double* std, int channels) {
  if (channels < 1 || channels > kMaxImageChannels)
    throw std::invalid_argument(
        fmt::format("{} channels: 1 to {} are supported", channels, kMaxImageChannels));
  NormalizeParams p;
  p.channels = channels;
  for (int c = 0; c < channels; ++c) {
    if (!(std[c] > 0))
      throw std::invalid_argument(fmt::format("std[{}] = {} is not positive", c, std[c]));
    p.mean[c] = mean[c];
    p.std[c] = std[c];
    p.scale[c] = static_cast<float>(1.0 / (255.0 * std[c]));
    p.bias[c] = static_cast<float>(-mean[c] / std[c]);
  }
  return p;
}

NormalizeParams default_normalize_params(int channels) {
  static const double imagenet_mean[] = {0.485, 0.456, 0.406, 0.5},
                      imagenet_std[] = {0.229, 0.224, 0.225, 0.25};
  static const double gray_mean[] = {0.5}, gray_std[] = {0.25};
  if (channels == 1) return normalize_params(gray_mean, gray_std, 1);
  return normalize_params(imagenet_mean, imagenet_std, channels);
}

double normalized_reference(std::uint8_t value, int channel, const NormalizeParams& p) {
  return (value / 255.0 - p.mean[channel]) / p.std[channel];
}

Tolerance normalize_tolerance(const NormalizeParams& p, double roundoff) {
  double terms = 0;
  for (int c = 0; c < p.channels; ++c)
    terms = std::fmax(terms, 255.0 * std::fabs(p.scale[c]) + std::fabs(p.bias[c]));
  // fp32 arithmetic (scale, bias, product, sum: 4 roundings of the terms), then the output's
  // rounding.
  return {4 * kRoundoffFp32 * terms, 4 * std::fmax(roundoff, kRoundoffFp32)};
}

const char* to_string(NormalizedType type) {
  switch (type) {
    case NormalizedType::fp32:
      return "fp32";
    case NormalizedType::bf16:
      return "bf16";
    case NormalizedType::fp16:
      return "fp16";
  }
  return "unknown";
}

int element_bytes(NormalizedType type) { return type == NormalizedType::fp32 ? 4 : 2; }

double unit_roundoff(NormalizedType type) {
  switch (type) {
    case NormalizedType::fp32:
      return kRoundoffFp32;
    case NormalizedType::bf16:
      return kRoundoffBf16;
    case NormalizedType::fp16:
      return kRoundoffFp16;
  }
  return kRoundoffFp32;
}

namespace cpu {

namespace {

// One image row: width pixels of C interleaved bytes -> C planes `plane` floats apart.
template <int C>
inline void normalize_row(float* __restrict out, const std::uint8_t* __restrict in, int width,
                          std::size_t plane, const float* scale, const float* bias) {
  if constexpr (C == 1) {
    const float s = scale[0], b = bias[0];
    for (int x = 0; x < width; ++x) out[x] = static_cast<float>(in[x]) * s + b;
  } else {
    float* __restrict r = out;
    float* __restrict g = out + plane;
    float* __restrict bl = out + 2 * plane;
    const float s0 = scale[0], s1 = scale[1], s2 = scale[2], b0 = bias[0], b1 = bias[1],
                b2 = bias[2];
    for (int x = 0; x < width; ++x) {
      r[x] = static_cast<float>(in[3 * x]) * s0 + b0;
      g[x] = static_cast<float>(in[3 * x + 1]) * s1 + b1;
      bl[x] = static_cast<float>(in[3 * x + 2]) * s2 + b2;
    }
  }
}

// Any channel count: the plain loop (not the benchmarks' shapes).
void normalize_row_any(float* out, const std::uint8_t* in, int width, std::size_t plane,
                       const NormalizeParams& p) {
  for (int c = 0; c < p.channels; ++c)
    for (int x = 0; x < width; ++x)
      out[c * plane + x] = static_cast<float>(in[p.channels * x + c]) * p.scale[c] + p.bias[c];
}

// Rows [first, last) of the batch (row r is image r / height, line r % height).
OFFLOADBENCH_VECTOR_CLONES
void normalize_rows(float* out, const std::uint8_t* in, std::int64_t first, std::int64_t last,
                    int height, int width, const NormalizeParams& p) {
  const std::size_t plane = static_cast<std::size_t>(height) * width;
  const std::size_t row_bytes = static_cast<std::size_t>(width) * p.channels;
  for (std::int64_t r = first; r < last; ++r) {
    const std::int64_t image = r / height, line = r % height;
    float* o = out + static_cast<std::size_t>(image) * p.channels * plane +
               static_cast<std::size_t>(line) * width;
    const std::uint8_t* i = in + static_cast<std::size_t>(r) * row_bytes;
    if (p.channels == 3)
      normalize_row<3>(o, i, width, plane, p.scale, p.bias);
    else if (p.channels == 1)
      normalize_row<1>(o, i, width, plane, p.scale, p.bias);
    else
      normalize_row_any(o, i, width, plane, p);
  }
}

}  // namespace

void normalize_hwc_to_chw(float* out, const std::uint8_t* in, int batch, int height, int width,
                          const NormalizeParams& p, int threads) {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * height;
  const std::int64_t elements = rows * width * p.channels;
  if (threads <= 1 || rows < 2 || elements <= kNormalizeParallelGrain)
    return normalize_rows(out, in, 0, rows, height, width, p);
#pragma omp parallel num_threads(threads)
  {
    const std::int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    normalize_rows(out, in, rows * t / team, rows * (t + 1) / team, height, width, p);
  }
}

const char* normalize_vector_level() { return vector_clone_level(); }

}  // namespace cpu

float bf16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t word = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, sizeof f);
  return f;
}

float fp16_bits_to_float(std::uint16_t bits) {
  const int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // subnormal
  else if (exponent == 31)
    magnitude = mantissa ? NAN : INFINITY;
  else
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  return sign ? -magnitude : magnitude;
}

float normalized_element(const void* out, NormalizedType type, std::size_t i) {
  if (type == NormalizedType::fp32) return static_cast<const float*>(out)[i];
  const std::uint16_t bits = static_cast<const std::uint16_t*>(out)[i];
  return type == NormalizedType::bf16 ? bf16_bits_to_float(bits) : fp16_bits_to_float(bits);
}

std::string check_normalized(const void* out, NormalizedType type, const std::uint8_t* in,
                             int batch, int height, int width, const NormalizeParams& p) {
  const std::size_t plane = static_cast<std::size_t>(height) * width, channels = p.channels;
  const std::size_t n = static_cast<std::size_t>(batch) * channels * plane;
  const Tolerance tol = normalize_tolerance(p, unit_roundoff(type));
  // The reference of every byte value per channel, made once: a 1 GB output is checked in seconds.
  std::vector<double> reference(channels * 256);
  for (std::size_t c = 0; c < channels; ++c)
    for (int v = 0; v < 256; ++v)
      reference[c * 256 + v] = normalized_reference(static_cast<std::uint8_t>(v), c, p);
  // Output ((b·C + c)·H·W + pixel) reads input (b·H·W + pixel)·C + c. The same rule and message as
  // mismatches() (tolerance.h), without a float copy of a 16-bit output.
  std::size_t count = 0, i = 0;
  std::string first;
  for (std::size_t image = 0; image < static_cast<std::size_t>(batch); ++image)
    for (std::size_t c = 0; c < channels; ++c) {
      const std::uint8_t* pixels = in + image * plane * channels + c;
      const double* ref_of = reference.data() + c * 256;
      for (std::size_t pixel = 0; pixel < plane; ++pixel, ++i) {
        const double ref = ref_of[pixels[pixel * channels]], got = normalized_element(out, type, i);
        if (within_tolerance(got, ref, tol)) continue;
        if (count++ < 5) first += fmt::format("; [{}] got {:.9g}, expected {:.9g}", i, got, ref);
      }
    }
  if (count == 0) return "";
  return fmt::format("{} of {} elements differ (atol {:.3g}, rtol {:.3g}){}", count, n, tol.atol,
                     tol.rtol, first);
}

}  // namespace offloadbench
