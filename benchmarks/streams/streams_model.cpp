// See streams_model.h. Nothing here calls CUDA.
#include "benchmarks/streams/streams_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace offloadbench {

const char* to_string(OverlapBound bound) {
  switch (bound) {
    case OverlapBound::no_overlap:
      return "no_overlap";
    case OverlapBound::one_copy_engine:
      return "one_copy_engine";
    case OverlapBound::two_copy_engines:
      return "two_copy_engines";
  }
  return "unknown";
}

OverlapBound overlap_bound_for(int async_engine_count) {
  if (async_engine_count <= 0) return OverlapBound::no_overlap;
  if (async_engine_count == 1) return OverlapBound::one_copy_engine;
  return OverlapBound::two_copy_engines;
}

bool calibration_consistent(const StageTimes& s, double serial_s, double tolerance) {
  const double sum = s.h2d_s + s.kernel_s + s.d2h_s;
  if (!(sum > 0) || !(serial_s > 0)) return false;
  return std::max(sum, serial_s) <= (1 + tolerance) * std::min(sum, serial_s);
}

double bound_seconds(const StageTimes& s, OverlapBound bound) {
  switch (bound) {
    case OverlapBound::no_overlap:
      return s.h2d_s + s.kernel_s + s.d2h_s;
    case OverlapBound::one_copy_engine:
      return std::max(s.h2d_s + s.d2h_s, s.kernel_s);
    case OverlapBound::two_copy_engines:
      return std::max({s.h2d_s, s.kernel_s, s.d2h_s});
  }
  return s.h2d_s + s.kernel_s + s.d2h_s;
}

double shared_link_bound_seconds(const StageTimes& s, OverlapBound bound,
                                 double both_directions_s) {
  const double alone = bound_seconds(s, bound);
  if (bound != OverlapBound::two_copy_engines || !(both_directions_s > 0)) return alone;
  return std::max(alone, both_directions_s);
}

double overlap_efficiency(double bound_s, double achieved_s) {
  if (bound_s <= 0 || achieved_s <= 0) return 0;
  return bound_s / achieved_s;
}

double overlap_realized(double serial_s, double bound_s, double achieved_s) {
  const double possible = serial_s - bound_s;
  if (possible <= 0) return 0;
  return (serial_s - achieved_s) / possible;
}

std::string pipeline_problem(std::uint64_t elements, int streams, int chunks) {
  if (chunks < 1) return fmt::format("chunks must be at least 1 (got {})", chunks);
  if (streams < 1) return fmt::format("streams must be at least 1 (got {})", streams);
  if (streams > chunks)
    return fmt::format("{} streams for {} chunks: {} stream(s) would get no work", streams, chunks,
                       streams - chunks);
  if (static_cast<std::uint64_t>(chunks) > elements)
    return fmt::format("{} chunks for {} elements: a chunk would be empty", chunks, elements);
  const std::uint64_t per_chunk = (elements + chunks - 1) / chunks;
  if (per_chunk * (chunks - 1) >= elements)
    return fmt::format("{} elements in chunks of {} fill only {} chunks, not {}", elements,
                       per_chunk, (elements + per_chunk - 1) / per_chunk, chunks);
  return "";
}

std::vector<Chunk> split_into_chunks(std::uint64_t elements, int chunks) {
  if (auto problem = pipeline_problem(elements, 1, chunks); !problem.empty())
    throw std::invalid_argument(problem);
  const std::uint64_t per_chunk = (elements + chunks - 1) / chunks;
  std::vector<Chunk> pieces;
  pieces.reserve(chunks);
  for (std::uint64_t offset = 0; offset < elements; offset += per_chunk)
    pieces.push_back({offset, std::min(per_chunk, elements - offset)});
  return pieces;
}

int fma_iterations_for(double target_s, int probe_a, double seconds_a, int probe_b,
                       double seconds_b) {
  if (probe_b == probe_a || !(seconds_a > 0) || !(seconds_b > 0))
    throw std::invalid_argument(
        "FMA calibration needs two different probe sizes with positive times");
  const double slope = (seconds_b - seconds_a) / (probe_b - probe_a);
  if (!(slope > 0))
    throw std::invalid_argument(
        fmt::format("FMA calibration: {} iterations took {:.3g} s and {} took {:.3g} s; the kernel "
                    "does not get slower",
                    probe_a, seconds_a, probe_b, seconds_b));
  const double fixed = seconds_a - probe_a * slope;  // launch and memory time
  const double iterations = std::round((target_s - fixed) / slope);
  const double most = static_cast<double>(std::numeric_limits<int>::max());
  return static_cast<int>(std::clamp(iterations, 1.0, most));
}

double host_work_unit(double seed) {
  double x = seed;
  for (int i = 0; i < 256; ++i) x = x * 0.999999 + 1e-6;  // a dependent chain: ~4 cycles a step
  return x;
}

}  // namespace offloadbench
