// Every suite offloadbench knows, in the order `run --suite all` runs them.
#include "benchmarks/compute.h"
#include "benchmarks/transfer.h"
#include "harness/suite.h"

namespace offloadbench {

const std::vector<Suite>& all_suites() {
  static const std::vector<Suite> suites = {
      {"transfer", "host<->device copies by direction and host memory kind, pinning costs, host memcpy baseline",
       register_transfer_suite},
      {"compute", "elementwise ops and matmul: GPU kernel only, GPU with transfers (pinned, pageable), CPU 1 and all threads",
       register_compute_suite},
  };
  return suites;
}

}  // namespace offloadbench
