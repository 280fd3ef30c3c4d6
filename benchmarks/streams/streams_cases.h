// The streams family: synchronous vs asynchronous copies, copy/compute overlap over K streams and
// C chunks, and what it buys against the bound the copy engines allow. Every case moves `bytes`
// host→device, runs the FMA workload on it, and moves `bytes` back (bidirectional: copies only).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/measure.h"
#include "harness/suite.h"
#include "kernels/cuda/host_memory.h"

namespace offloadbench {

enum class StreamsOp {
  serial,          // cudaMemcpy H2D → kernel → cudaMemcpy D2H on the legacy default stream
  async,           // the same with cudaMemcpyAsync on one stream
  pipelined,       // C chunks over K streams, in an issue order
  pipelined_best,  // the fastest (K, C, order) of a search, timed again: the headline
  bidirectional,   // H2D and D2H at once on two streams, against each alone (no kernel)
  host_overlap,    // host time inside the API calls and host work done while the GPU works
};
const char* to_string(StreamsOp op);

enum class IssueOrder {
  depth_first,    // per chunk: H2D, kernel, D2H
  breadth_first,  // all H2D, then all kernels, then all D2H
};
const char* to_string(IssueOrder order);

struct PipelineShape {
  int streams = 1;  // K
  int chunks = 1;   // C
  IssueOrder order = IssueOrder::depth_first;
};

struct StreamsCase {
  StreamsOp op = StreamsOp::serial;
  HostMemoryKind host_memory = HostMemoryKind::pinned;
  std::uint64_t bytes = 0;    // per direction
  double workload_ratio = 1;  // kernel time ÷ H2D time the FMA iterations are calibrated to
  int streams = 1;            // K
  int chunks = 1;             // C
  IssueOrder order = IssueOrder::depth_first;
  bool synchronous_api = false;  // host_overlap: cudaMemcpy (true) or cudaMemcpyAsync (false)
  int device = 0;
  std::vector<PipelineShape> search;  // pipelined_best: the shapes it tries
  bool release_after = false;  // the suite's last case: free the shared workspace when torn down

  // Builders that name what they set (C++17 has no designated initialisers), each on a copy:
  //   StreamsCase{}.on(device, bytes).at_ratio(1).pipelined({4, 16, IssueOrder::depth_first},
  //   pinned)
  StreamsCase on(int gpu, std::uint64_t bytes_per_direction) const;
  StreamsCase at_ratio(double kernel_over_h2d) const;
  StreamsCase as(StreamsOp kind, HostMemoryKind memory) const;                     // serial, async
  StreamsCase pipelined(const PipelineShape& shape, HostMemoryKind memory) const;  // one K×C shape
  StreamsCase best_of(std::vector<PipelineShape> shapes) const;                    // pinned
  StreamsCase bidirectional() const;  // pinned, both directions at once on two streams, no kernel
  // Balanced workload; cudaMemcpy from pageable memory (naive code) or cudaMemcpyAsync from pinned.
  StreamsCase host_overlap(bool synchronous) const;
};

// Host and device buffers, and per workload ratio the calibration and the measured parts (stage
// times, serial time, bound), that consecutive cases of one size share: Google Benchmark calls a
// case once per repetition and more to size the first, and pinning 2×256 MiB and calibrating for
// every case would cost more than the measurement. A case of another size or device frees it; so
// does the case marked release_after, when the measurement layer tears it down after its last
// repetition. Defined by the GPU runner's file, which makes it at the first case that needs it: the
// table holds only the slot, so it builds without CUDA.
class StreamsWorkspace;
struct StreamsWorkspaceSlot {
  std::shared_ptr<StreamsWorkspace> workspace;
};

// "" when the case can be set up at all (before asking for a GPU), else why not: bytes not a
// whole number of floats, or a chunk/stream combination pipeline_problem rejects.
std::string streams_case_problem(const StreamsCase& c);

// Skips with streams_case_problem's reason, else sets up the GPU case; without a slot the case sets
// up (and frees) its own workspace.
MeasuredCase setup_streams_case(const StreamsCase& c,
                                std::shared_ptr<StreamsWorkspaceSlot> slot = nullptr);

// GPU setup (streams_run_gpu.cpp, built with CUDA only: harness/gpu_runner.h).
MeasuredCase setup_streams_gpu(const StreamsCase& c, std::shared_ptr<StreamsWorkspaceSlot> slot);

// "streams/pipelined/pinned/ratio:1/K:4/C:16/depth_first/256MiB" + device suffix.
std::string streams_case_name(const StreamsCase& c, const std::string& device_suffix);

void register_streams_suite(const RunConfig& config);
// The suite: its name, what it measures, and the function above (benchmarks/suites.h lists it).
Suite streams_suite();

}  // namespace offloadbench
