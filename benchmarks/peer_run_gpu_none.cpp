// The peer family in a build without CUDA: every case says why it cannot run.
#include "benchmarks/peer_cases.h"
#include "harness/gpu_info.h"

namespace offloadbench {

MeasuredCase setup_peer(const PeerCase& c) {
  return MeasuredCase::skip(c.problem.empty() ? gpu_unavailable_reason(c.gpu) : c.problem);
}

}  // namespace offloadbench
