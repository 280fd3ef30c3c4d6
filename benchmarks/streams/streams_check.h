// How the streams suite knows a pipeline moved and computed every element: the input pattern it
// feeds every case, and the check of one pass's output against the FMA workload's CPU twin.
// CPU-only, so the check itself is tested on any machine.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "benchmarks/streams/streams_model.h"

namespace offloadbench {

// Values in [0, 2) from a hash of the index: a chunk that lands in the wrong place reads back
// wrong.
float streams_input_value(std::uint64_t i);

// "" when `out` (n floats, poisoned with NaN before the pass) has every element written and a
// sample — each chunk's first and last element and ~4096 spread over the buffer — equal to the CPU
// twin's result for `in`; else what is wrong.
std::string check_pipeline_output(const float* in, const float* out, std::uint64_t n,
                                  const std::vector<Chunk>& chunks, int fma_iterations);

}  // namespace offloadbench
