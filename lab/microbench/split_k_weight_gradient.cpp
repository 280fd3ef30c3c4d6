// At two threads, is dW = dout^T · X faster as one dnnl_sgemm or split over the batch, one per
// thread? Built by lab/microbench/CMakeLists.txt.
#include <dnnl.h>
#include <omp.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char** argv) {
  int B = atoi(argv[1]), IC = atoi(argv[2]), OC = atoi(argv[3]);
  std::vector<float> X((size_t)B * IC), dout((size_t)B * OC), dW((size_t)OC * IC), tmp(dW.size()),
      ref(dW.size());
  for (auto& v : X) v = (rand() % 129 - 64) / 64.f;
  for (auto& v : dout) v = (rand() % 129 - 64) / 64.f;
  double flops = 2.0 * B * IC * OC;
  dnnl_sgemm('T', 'N', OC, IC, B, 1.f, dout.data(), OC, X.data(), IC, 0.f, ref.data(), IC);
  auto whole = [&] {
    dnnl_sgemm('T', 'N', OC, IC, B, 1.f, dout.data(), OC, X.data(), IC, 0.f, dW.data(), IC);
  };
  auto split = [&] {
#pragma omp parallel num_threads(2)
    {
      int t = omp_get_thread_num(), h = B / 2, k0 = t * h, k = t ? B - h : h;
      float* c = t ? tmp.data() : dW.data();
      dnnl_sgemm('T', 'N', OC, IC, k, 1.f, dout.data() + (size_t)k0 * OC, OC,
                 X.data() + (size_t)k0 * IC, IC, 0.f, c, IC);
#pragma omp barrier
      size_t n = dW.size(), lo = t * (n / 2), hi = t ? n : n / 2;
#pragma omp simd
      for (size_t i = lo; i < hi; ++i) dW[i] += tmp[i];
    }
  };
  for (int round = 0; round < 3; ++round)
    for (int which = 0; which < 2; ++which) {
      std::vector<double> t;
      for (int r = 0; r < 15; ++r) {
        auto s = std::chrono::steady_clock::now();
        if (which)
          split();
        else
          whole();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count());
      }
      std::sort(t.begin(), t.end());
      double err = 0;
      for (size_t i = 0; i < dW.size(); ++i) err = std::max(err, (double)std::abs(dW[i] - ref[i]));
      std::printf("%-34s %8.3f ms %7.1f GFLOP/s err %.1e\n",
                  which ? "split K over 2 threads, 1t sgemm" : "dnnl_sgemm 2 threads", t[7] * 1e3,
                  flops / t[7] / 1e9, err);
    }
}
