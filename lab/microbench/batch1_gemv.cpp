// Is any library's GEMV faster than OpenBLAS's sgemv at 12288-64-10's batch-1 forward (64 x 12288
// W1 · x)? Built by lab/microbench/CMakeLists.txt.
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
  const int M = 64, K = 12288;
  std::vector<float> W(std::size_t(M) * K), x(K, 1.0f), reference(M), y(M);
  for (std::size_t i = 0; i < W.size(); ++i) W[i] = float((i * 7919) % 1000) * 1e-4f;
  for (int r = 0; r < M; ++r) {  // the check, outside every timed region
    double s = 0;
    for (int k = 0; k < K; ++k) s += W[std::size_t(r) * K + k] * x[k];
    reference[r] = float(s);
  }
  auto time_us = [&](auto call) {  // median of 15 batches of 200 calls, after 200 warm-up calls
    for (int i = 0; i < 200; ++i) call();
    std::vector<double> t;
    for (int b = 0; b < 15; ++b) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < 200; ++i) call();
      t.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count() /
          200);
    }
    std::sort(t.begin(), t.end());
    double worst = 0;
    for (int r = 0; r < M; ++r)
      worst = std::max(worst, double(std::abs(y[r] - reference[r]) / reference[r]));
    std::fill(y.begin(), y.end(), NAN);
    return std::make_pair(t[t.size() / 2], worst);
  };
  auto report = [&](const char* form, int threads, std::pair<double, double> t) {
    std::printf("%-40s %dt %7.2f us  %4.0f GB/s  max rel err %.1e\n", form, threads, t.first,
                4.0 * M * K / t.first / 1e3, t.second);
  };
  const float one = 1, zero = 0;
  for (int threads : {1, 2}) {  // form, threads, median µs, GB/s of W1 read, worst relative error
    omp_set_num_threads(threads);
#ifdef WITH_BLIS
    bli_thread_set_num_threads(threads);
    report("BLIS bli_sgemv", threads, time_us([&] {
             bli_sgemv(BLIS_NO_TRANSPOSE, BLIS_NO_CONJUGATE, M, K, const_cast<float*>(&one),
                       W.data(), K, 1, x.data(), 1, const_cast<float*>(&zero), y.data(), 1);
           }));
#else
    openblas_set_num_threads(threads);
    report("OpenBLAS cblas_sgemv", threads, time_us([&] {
             cblas_sgemv(CblasRowMajor, CblasNoTrans, M, K, 1.f, W.data(), K, x.data(), 1, 0.f,
                         y.data(), 1);
           }));
    if (threads >
        1)  // OpenBLAS runs one thread inside a parallel region: each thread takes its rows
      report("OpenBLAS cblas_sgemv, rows split by OpenMP", threads, time_us([&] {
#pragma omp parallel
               {
                 const int t = omp_get_thread_num(), n = omp_get_num_threads(), rows = M / n;
                 cblas_sgemv(CblasRowMajor, CblasNoTrans, rows, K, 1.f,
                             W.data() + std::size_t(t) * rows * K, K, x.data(), 1, 0.f,
                             y.data() + t * rows, 1);
               }
             }));
#endif
    report("oneDNN dnnl_sgemm, M = 1", threads, time_us([&] {
             dnnl_sgemm('N', 'T', 1, M, K, 1.f, x.data(), K, W.data(), K, 0.f, y.data(), M);
           }));
  }
}
