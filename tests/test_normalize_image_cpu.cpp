// The CPU twin of the image-batch normalize against the formula written out here ((x/255 −
// mean)/std, HWC -> CHW, in double), on odd shapes, 1 to 4 channels and 1 and 2 threads, with the
// tolerance rule; the check the benchmarks run names a wrong or misplaced element; the 16-bit
// decoders.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/normalize_image.h"

namespace offloadbench {
namespace {

std::vector<std::uint8_t> random_pixels(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<std::uint8_t> v(n);
  for (auto& x : v) x = static_cast<std::uint8_t>(byte(rng));
  v[0] = 0;  // the extremes, where the output is largest in magnitude
  if (n > 1) v[n - 1] = 255;
  return v;
}

struct Shape {
  int batch, height, width, channels;
};

TEST(NormalizeImageCpu, MatchesTheFormulaOnOddShapesChannelsAndThreads) {
  for (const Shape s : {Shape{1, 1, 1, 3}, Shape{3, 7, 13, 3}, Shape{2, 5, 33, 1},
                        Shape{5, 224, 31, 3}, Shape{2, 3, 17, 2}, Shape{1, 9, 65, 4}})
    for (int threads : {1, 2}) {
      const std::size_t plane = static_cast<std::size_t>(s.height) * s.width,
                        n = s.batch * plane * s.channels;
      const auto in = random_pixels(n, 7 + s.width);
      const auto p = default_normalize_params(s.channels);
      std::vector<float> out(n, NAN);
      cpu::normalize_hwc_to_chw(out.data(), in.data(), s.batch, s.height, s.width, p, threads);
      const auto tol = normalize_tolerance(p, kRoundoffFp32);
      std::size_t wrong = 0;
      for (int b = 0; b < s.batch; ++b)
        for (int c = 0; c < s.channels; ++c)
          for (int y = 0; y < s.height; ++y)
            for (int x = 0; x < s.width; ++x) {
              const std::uint8_t v = in[((b * plane) + y * s.width + x) * s.channels + c];
              const double expected = (v / 255.0 - p.mean[c]) / p.std[c];
              const float got =
                  out[((static_cast<std::size_t>(b) * s.channels + c) * s.height + y) * s.width +
                      x];
              if (!within_tolerance(got, expected, tol) && wrong++ < 3)
                ADD_FAILURE() << s.batch << "x" << s.height << "x" << s.width << "x" << s.channels
                              << " threads " << threads << ": (" << b << "," << c << "," << y << ","
                              << x << ") got " << got << ", expected " << expected;
            }
      EXPECT_EQ(wrong, 0u);
      EXPECT_EQ(check_normalized(out.data(), NormalizedType::fp32, in.data(), s.batch, s.height,
                                 s.width, p),
                "");
    }
}

TEST(NormalizeImageCpu, ToleranceIsAFewFp32RoundingsOfTheTermsNotLooser) {
  const auto p = default_normalize_params(3);
  const auto tol = normalize_tolerance(p, kRoundoffFp32);
  // ImageNet's largest term is 255·scale + |bias| ≈ 4.37 + 2.12 (blue): about 1.6e-6 absolute.
  EXPECT_GT(tol.atol, 4 * kRoundoffFp32 * 6);
  EXPECT_LT(tol.atol, 4 * kRoundoffFp32 * 7);
  // bf16 output: its own rounding is relative; the cancellation bound stays fp32's.
  EXPECT_DOUBLE_EQ(normalize_tolerance(p, kRoundoffBf16).rtol, 4 * kRoundoffBf16);
  EXPECT_DOUBLE_EQ(normalize_tolerance(p, kRoundoffBf16).atol, tol.atol);
}

TEST(NormalizeImageCpu, TheCheckNamesAWrongValueAndASwappedChannel) {
  const Shape s{2, 4, 5, 3};
  const std::size_t n = s.batch * s.height * s.width * s.channels;
  const auto in = random_pixels(n, 3);
  const auto p = default_normalize_params(3);
  std::vector<float> out(n);
  cpu::normalize_hwc_to_chw(out.data(), in.data(), s.batch, s.height, s.width, p, 1);
  auto wrong = out;
  wrong[17] = std::nextafter(wrong[17], 100.0f) + 1e-4f;
  EXPECT_NE(
      check_normalized(wrong.data(), NormalizedType::fp32, in.data(), s.batch, s.height, s.width, p)
          .find("1 of 120 elements differ"),
      std::string::npos);
  // HWC left in place (no transpose) fails nearly everywhere.
  std::vector<float> untransposed(n);
  for (std::size_t i = 0; i < n; ++i)
    untransposed[i] = static_cast<float>(normalized_reference(in[i], i % 3, p));
  EXPECT_NE(check_normalized(untransposed.data(), NormalizedType::fp32, in.data(), s.batch,
                             s.height, s.width, p),
            "");
  out[5] = NAN;
  EXPECT_NE(
      check_normalized(out.data(), NormalizedType::fp32, in.data(), s.batch, s.height, s.width, p),
      "");
}

TEST(NormalizeImageCpu, SixteenBitDecodersAndTheirOutputsCheck) {
  EXPECT_EQ(bf16_bits_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bf16_bits_to_float(0xc020), -2.5f);
  EXPECT_EQ(fp16_bits_to_float(0x3c00), 1.0f);
  EXPECT_EQ(fp16_bits_to_float(0xc100), -2.5f);
  EXPECT_EQ(fp16_bits_to_float(0x0001), std::ldexp(1.0f, -24));  // the smallest subnormal
  EXPECT_TRUE(std::isinf(fp16_bits_to_float(0x7c00)));
  EXPECT_TRUE(std::isnan(fp16_bits_to_float(0xffff)));  // the benchmarks' poison
  // A bf16 output made by truncating the twin's fp32 output (at most 2 roundoffs off) passes the
  // bf16 check; the same bits read as fp16 are other numbers and fail.
  const Shape s{1, 3, 8, 3};
  const std::size_t n = s.height * s.width * s.channels;
  const auto in = random_pixels(n, 5);
  const auto p = default_normalize_params(3);
  std::vector<float> out(n);
  cpu::normalize_hwc_to_chw(out.data(), in.data(), 1, s.height, s.width, p, 1);
  std::vector<std::uint16_t> bf16(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t word;
    std::memcpy(&word, &out[i], 4);
    bf16[i] = static_cast<std::uint16_t>(word >> 16);
  }
  EXPECT_EQ(check_normalized(bf16.data(), NormalizedType::bf16, in.data(), 1, s.height, s.width, p),
            "");
  EXPECT_NE(check_normalized(bf16.data(), NormalizedType::fp16, in.data(), 1, s.height, s.width, p),
            "");
}

TEST(NormalizeImageCpu, ParametersAreValidated) {
  const double mean[] = {0.5, 0.5}, zero_std[] = {0.25, 0.0};
  EXPECT_THROW(normalize_params(mean, zero_std, 2), std::invalid_argument);
  EXPECT_THROW(default_normalize_params(5), std::invalid_argument);
  const auto p = default_normalize_params(3);
  EXPECT_FLOAT_EQ(p.scale[0], static_cast<float>(1 / (255 * 0.229)));
  EXPECT_FLOAT_EQ(p.bias[2], static_cast<float>(-0.406 / 0.225));
}

}  // namespace
}  // namespace offloadbench
