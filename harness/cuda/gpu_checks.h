// What the GPU runners ask of a GPU before they set a case up: is it there, does the case
// fit, can it do what the case needs. Timing and rates are the measurement layer's
// (harness/measure.h).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include <benchmark/benchmark.h>

namespace offloadbench {

// "" when GPU `device` is usable (it is made current) and `device_bytes` fit in it, else why not.
std::string gpu_problem(int device, std::uint64_t device_bytes);
int device_attribute(cudaDeviceAttr attribute, int device);
// The ceiling of every host<->device case: the link at its maximum generation and width.
double link_ceiling(int device);
// After a host<->device case ran: reads the link again, under load, records that reading in the row
// (link_{generation,width}_under_load, link_ceiling_{generation,width}) and raises the row's
// ceiling_bytes_per_second (`directions` links' worth) where the link now reads higher than at
// start.
void report_link_under_load(benchmark::State& state, int device, int directions);

}  // namespace offloadbench
