// Is any open library faster than OpenBLAS and oneDNN at square fp32 SGEMM (n = 256…2048, 1 and 2
// threads)? Built by lab/microbench/CMakeLists.txt.
#ifdef WITH_BLIS
#include <blis.h>
#else
#include <cblas.h>
#endif
#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  for (int n : {256, 512, 1024, 2048}) {
    const std::size_t elements = std::size_t(n) * n;
    std::vector<float> A(elements), B(elements), C(elements), reference(std::size_t(n) * 4);
    for (std::size_t i = 0; i < elements; ++i) {
      A[i] = float((i * 7919) % 1000) * 1e-3f - 0.5f;
      B[i] = float((i * 104729) % 1000) * 1e-3f - 0.5f;
    }
    // The check, outside every timed region: four columns of C against a double-precision product.
    const int columns[4] = {0, n / 3, n / 2, n - 1};
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < 4; ++c) {
        double s = 0;
        for (int k = 0; k < n; ++k)
          s += double(A[std::size_t(r) * n + k]) * B[std::size_t(k) * n + columns[c]];
        reference[std::size_t(r) * 4 + c] = float(s);
      }
    // Median of 11 batches, each ≥ 20 ms of calls, after a warm-up of the same length.
    const double flops = 2.0 * n * n * n;
    const int calls = std::max(1, int(0.02 / (flops / 100e9)));
    auto time_gflops = [&](auto call) {
      for (int i = 0; i < calls; ++i) call();
      std::vector<double> t;
      for (int b = 0; b < 11; ++b) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) call();
        t.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
            calls);
      }
      std::sort(t.begin(), t.end());
      double worst = 0;
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < 4; ++c)
          worst = std::max(worst, double(std::abs(C[std::size_t(r) * n + columns[c]] -
                                                  reference[std::size_t(r) * 4 + c])));
      std::fill(C.begin(), C.end(), NAN);
      return std::make_pair(flops / t[t.size() / 2] / 1e9, worst);
    };
    auto report = [&](const char* form, int threads, std::pair<double, double> r) {
      std::printf("%5d  %-22s %dt %7.1f GFLOP/s  max abs err %.1e\n", n, form, threads, r.first,
                  r.second);
    };
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
#ifdef WITH_BLIS
      bli_thread_set_num_threads(threads);
      const float one = 1, zero = 0;
      report("BLIS bli_sgemm", threads, time_gflops([&] {
               bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, const_cast<float*>(&one),
                         A.data(), n, 1, B.data(), n, 1, const_cast<float*>(&zero), C.data(), n, 1);
             }));
#else
      openblas_set_num_threads(threads);
      report("OpenBLAS cblas_sgemm", threads, time_gflops([&] {
               cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, A.data(), n,
                           B.data(), n, 0.f, C.data(), n);
             }));
#endif
      report("oneDNN dnnl_sgemm", threads, time_gflops([&] {
               dnnl_sgemm('N', 'N', n, n, n, 1.f, A.data(), n, B.data(), n, 0.f, C.data(), n);
             }));
    }
  }
}
