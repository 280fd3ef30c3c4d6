// OpenBLAS called directly, with nothing of offloadbench around it: the yardstick for the compute
// suite's CPU sgemm rows (lab/tools/compare-sgemm runs both). Same statistics as the suite's rows:
// each repetition is the mean over calls filling >= 0.5 s; the median and best repetition are
// printed. Usage: sgemm_direct [n] [repetitions]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1024;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 5;
  if (n <= 0 || repetitions <= 0) {
    std::fprintf(stderr, "usage: sgemm_direct [n > 0] [repetitions > 0]\n");
    return 2;
  }
  std::vector<float> a(std::size_t(n) * n), b(a.size()), c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i % 129) / 64.0f - 1.0f;
    b[i] = static_cast<float>(i % 127) / 64.0f - 1.0f;
  }
  const auto multiply = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
  };
  multiply();  // warm-up: thread pool, page faults
  std::vector<double> seconds_per_call;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    int calls = 0;
    for (; elapsed < 0.5; ++calls) {
      multiply();
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    seconds_per_call.push_back(elapsed / calls);
  }
  std::sort(seconds_per_call.begin(), seconds_per_call.end());
  const double flops = 2.0 * n * n * n;
  std::printf(
      "sgemm_direct n=%d threads=%d repetitions=%d median %.1f GFLOP/s, best %.1f GFLOP/s\n", n,
      openblas_get_num_threads(), repetitions,
      flops / seconds_per_call[seconds_per_call.size() / 2] / 1e9,
      flops / seconds_per_call[0] / 1e9);
  return 0;
}
