// See streams_check.h.
#include "benchmarks/streams/streams_check.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kernels/fma_workload.h"
#include "kernels/tolerance.h"

namespace offloadbench {

float streams_input_value(std::uint64_t i) {
  std::uint64_t h = i * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  return static_cast<float>(h & 0xFFFF) / 32768.0f;
}

std::string check_pipeline_output(const float* in, const float* out, std::uint64_t n,
                                  const std::vector<Chunk>& chunks, int fma_iterations) {
  for (std::uint64_t i = 0; i < n; ++i)
    if (!std::isfinite(out[i])) return fmt::format("element {} of {} was never written back", i, n);
  std::vector<std::uint64_t> sample;
  for (const auto& chunk : chunks)
    sample.insert(sample.end(), {chunk.offset, chunk.offset + chunk.count - 1});
  for (std::uint64_t i = 0; i < n; i += std::max<std::uint64_t>(1, n / 4096)) sample.push_back(i);
  std::vector<float> sample_in, got, want(sample.size());
  for (auto i : sample) {
    sample_in.push_back(in[i]);
    got.push_back(out[i]);
  }
  // Bit for bit: both sides run the same correctly rounded fused multiply-adds. Any tolerance
  // would hide an iteration too many or too few, which moves an element by only a few ulps.
  fma_workload(want.data(), sample_in.data(), sample.size(), fma_iterations);
  return mismatches(got.data(), want.data(), sample.size(), Tolerance{0, 0});
}

}  // namespace offloadbench
