// Every suite offloadbench knows, in the order `run --suite all` runs them.
#include "benchmarks/suites.h"

#include "benchmarks/batches_cases.h"
#include "benchmarks/compute_cases.h"
#include "benchmarks/mlp_cases.h"
#include "benchmarks/peer_cases.h"
#include "benchmarks/streams_cases.h"
#include "benchmarks/transfer_cases.h"

namespace offloadbench {

const std::vector<Suite>& all_suites() {
  static const std::vector<Suite> suites = {
      {"transfer", "host<->device copies by direction and host memory kind, pinning costs, host memcpy baseline",
       register_transfer_suite},
      {"streams", "sync vs async copies, copy/compute overlap over K streams x C chunks vs the copy-engine bound",
       register_streams_suite},
      {"compute", "elementwise ops and matmul: GPU kernel only, GPU with transfers (pinned, pageable), CPU 1 and all threads",
       register_compute_suite},
      {"mlp", "Linear-ReLU-Linear training steps and inference: CPU threads vs GPU precisions, launch modes, data paths",
       register_mlp_suite},
      {"batches", "what to send over the bus: CPU normalize + fp32 copy vs uint8 copy + GPU normalize, by image size and batch",
       register_batches_suite},
      {"peer", "GPU<->GPU copies (CE and SM, read and write, one-way, bidirectional, all-to-one, one-to-all), "
               "host-link contention and peer latency, under nvbandwidth's testcase names",
       register_peer_suite},
  };
  return suites;
}

}  // namespace offloadbench
