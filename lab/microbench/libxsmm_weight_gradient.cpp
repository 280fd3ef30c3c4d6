// Does libxsmm run the weight-gradient GEMM dW = dout^T · X faster than the step's dnnl_sgemm T,N?
// Built by lab/microbench/CMakeLists.txt.
#include <libxsmm.h>
#include <dnnl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

static double median_seconds(const std::function<void()>& f, int reps) {
  f();  // warm-up (and the JIT's first dispatch)
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto s = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  if (argc < 4) return std::fprintf(stderr, "usage: %s B IC OC [repetitions]\n", argv[0]), 2;
  const int B = std::atoi(argv[1]), IC = std::atoi(argv[2]), OC = std::atoi(argv[3]);
  const int reps = argc > 4 ? std::atoi(argv[4]) : 7;
  libxsmm_init();
  std::vector<float> X(std::size_t(B) * IC), dout(std::size_t(B) * OC), dW(std::size_t(OC) * IC),
      expected(dW.size()), doutT(dout.size());
  for (auto& v : X)
    v = float(std::rand() % 129 - 64) / 64.f;  // small integers over 64: every sum exact
  for (auto& v : dout) v = float(std::rand() % 129 - 64) / 64.f;
  const double flops = 2.0 * B * IC * OC;
  dnnl_sgemm('T', 'N', OC, IC, B, 1.f, dout.data(), OC, X.data(), IC, 0.f, expected.data(), IC);
  auto report = [&](const char* what, double s) {
    double worst = 0;
    for (std::size_t i = 0; i < dW.size(); ++i)
      worst = std::max(worst, double(std::abs(dW[i] - expected[i])));
    std::fill(dW.begin(), dW.end(), NAN);
    std::printf("%-44s %9.2f ms %7.1f GFLOP/s  max abs diff %.1e\n", what, s * 1e3, flops / s / 1e9,
                worst);
  };
  const float one = 1.f, zero = 0.f;
  const libxsmm_blasint m = IC, n = OC, k = B, lda = IC, ldb = OC, ldc = IC;
  report("dnnl_sgemm T,N (what the step runs)", median_seconds(
                                                    [&] {
                                                      dnnl_sgemm('T', 'N', OC, IC, B, 1.f,
                                                                 dout.data(), OC, X.data(), IC, 0.f,
                                                                 dW.data(), IC);
                                                    },
                                                    reps));
  report("libxsmm_sgemm N,T", median_seconds(
                                  [&] {
                                    libxsmm_sgemm("N", "T", &m, &n, &k, &one, X.data(), &lda,
                                                  dout.data(), &ldb, &zero, dW.data(), &ldc);
                                  },
                                  reps));
  report("libxsmm_sgemm_omp N,T", median_seconds(
                                      [&] {
                                        libxsmm_sgemm_omp("N", "T", &m, &n, &k, &one, X.data(),
                                                          &lda, dout.data(), &ldb, &zero, dW.data(),
                                                          &ldc);
                                      },
                                      reps));
  char name[96];
  for (int mb : {32, 64, 128})
    for (int kb : {64, 256, 1024}) {
      if (B % kb || IC % mb) continue;
      const libxsmm_blasint ldb_t = B;  // dout^T (OC x B row-major) is column-major B x OC
      const auto kernel = libxsmm_smmdispatch_reducebatch_strd(
          mb, OC, kb, libxsmm_blasint(kb) * IC * 4, libxsmm_blasint(kb) * 4, &lda, &ldb_t, &ldc,
          &one, &zero, nullptr, nullptr);
      if (!kernel) continue;
      std::snprintf(name, sizeof name, "libxsmm batch-reduce, tile %d rows, k %d", mb, kb);
      report(name, median_seconds(
                       [&] {
                         for (int b = 0; b < B; ++b)
                           for (int o = 0; o < OC; ++o)
                             doutT[std::size_t(o) * B + b] = dout[std::size_t(b) * OC + o];
                         const unsigned long long blocks = B / kb;
#pragma omp parallel for schedule(static)
                         for (int i0 = 0; i0 < IC; i0 += mb)
                           kernel(X.data() + i0, doutT.data(), dW.data() + i0, &blocks);
                       },
                       reps));
    }
}
