// The arithmetic of the streams suite, kept apart from any GPU call so it is unit-tested on any
// machine: how data is cut into chunks, which pipeline configurations make sense, the best time
// overlap could reach (simpleMultiCopy's bounds), how close a run came to it, and how many FMA
// iterations make the kernel last a chosen multiple of the copy time.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace offloadbench {

// Device times of the three stages of one pass over the whole buffer, measured alone.
struct StageTimes {
  double h2d_s = 0;
  double kernel_s = 0;
  double d2h_s = 0;
};

// What the copy engines allow (cudaDeviceProp::asyncEngineCount): 0 engines = copies cannot
// overlap the kernel; 1 = copies overlap the kernel but not each other; 2+ = everything overlaps.
enum class OverlapBound { no_overlap, one_copy_engine, two_copy_engines };
const char* to_string(OverlapBound bound);
OverlapBound overlap_bound_for(int async_engine_count);

// no overlap: H2D + K + D2H; one engine: max(H2D + D2H, K); two or more: max(H2D, K, D2H).
double bound_seconds(const StageTimes& stages, OverlapBound bound);

// A calibration is trusted when the serial pass, timed after its stages, takes their sum within
// `tolerance`: a stage timed during a slowdown (the link waking, clocks ramping up) breaks that,
// and would size the kernel and the bound from an inflated copy.
bool calibration_consistent(const StageTimes& stages, double serial_s, double tolerance = 0.10);

// The bound once both directions share one link. With two or more copy engines H2D and D2H overlap,
// but a PCIe link carries less both ways at once than twice one way (about 98 of 110 GB/s on a Gen5
// x16 H100), so no pipeline moves its copies faster than `both_directions_s`, the measured time of
// the whole buffer's H2D and D2H at once: max(bound_seconds, both_directions_s). Other bounds
// serialize the copies already and are returned as they are; a non-positive time is ignored.
double shared_link_bound_seconds(const StageTimes& stages, OverlapBound bound,
                                 double both_directions_s);

// Achieved gain ÷ bound gain, both over the same serial time: (serial/achieved)/(serial/bound)
// = bound/achieved. 1 means the pipeline reached the bound; 0 when a time is not positive.
double overlap_efficiency(double bound_s, double achieved_s);

// Share of the time that overlap could save that it did save: (serial − achieved)/(serial − bound).
// 0 when nothing could be saved. Can be negative (the pipeline was slower than serial).
double overlap_realized(double serial_s, double bound_s, double achieved_s);

// A contiguous piece of the buffer, in elements.
struct Chunk {
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
};

// `chunks` pieces of ceil(elements/chunks) elements each, the last one shorter when the size does
// not divide. Throws std::invalid_argument with pipeline_problem's reason for an invalid request.
std::vector<Chunk> split_into_chunks(std::uint64_t elements, int chunks);

// "" when `chunks` pieces over `streams` streams is a sensible pipeline for `elements`, else why
// not: no chunks or streams, more streams than chunks (streams would idle), more chunks than
// elements, or a split that leaves a chunk empty.
std::string pipeline_problem(std::uint64_t elements, int streams, int chunks);

// FMA iterations that make the kernel last `target_s`, from two probe runs (iterations, seconds)
// and a linear model t(i) = t0 + i·slope. At least 1; throws std::invalid_argument when the probes
// do not describe a kernel that gets slower with more iterations.
int fma_iterations_for(double target_s, int probe_a, double seconds_a, int probe_b,
                       double seconds_b);

// One unit of host work for the host-overlap case (about a microsecond of dependent arithmetic);
// returns its result so it cannot be optimized away.
double host_work_unit(double seed);

}  // namespace offloadbench
