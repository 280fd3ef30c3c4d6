// Which form of the weight-gradient GEMM dW = dout^T · X, row-major, is fastest in OpenBLAS and
// oneDNN? Built by lab/microbench/CMakeLists.txt.
#include <cblas.h>
#include <dnnl.hpp>
#include <omp.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>
using clk = std::chrono::steady_clock;
double best_of(const std::function<void()>& f, int reps) {
  f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto s = clk::now();
    f();
    t.push_back(std::chrono::duration<double>(clk::now() - s).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
int main(int argc, char** argv) {
  int B = atoi(argv[1]), IC = atoi(argv[2]), OC = atoi(argv[3]),
      reps = argc > 4 ? atoi(argv[4]) : 7;
  std::vector<float> X((size_t)B * IC), dout((size_t)B * OC), dW((size_t)OC * IC),
      doutT((size_t)OC * B), XT;
  for (auto& v : X) v = (rand() % 129 - 64) / 64.f;
  for (auto& v : dout) v = (rand() % 129 - 64) / 64.f;
  double flops = 2.0 * B * IC * OC;
  auto rep = [&](const char* name, double s) {
    std::printf("%-44s %8.2f ms %7.1f GFLOP/s\n", name, s * 1e3, flops / s / 1e9);
  };
  rep("openblas sgemm T,N", best_of(
                                [&] {
                                  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, IC, B,
                                              1.f, dout.data(), OC, X.data(), IC, 0.f, dW.data(),
                                              IC);
                                },
                                reps));
  rep("dnnl_sgemm T,N", best_of(
                            [&] {
                              dnnl_sgemm('T', 'N', OC, IC, B, 1.f, dout.data(), OC, X.data(), IC,
                                         0.f, dW.data(), IC);
                            },
                            reps));
  // transpose dout first (small), then N,N
  rep("transpose dout + dnnl_sgemm N,N",
      best_of(
          [&] {
            for (int b = 0; b < B; ++b)
              for (int o = 0; o < OC; ++o) doutT[(size_t)o * B + b] = dout[(size_t)b * OC + o];
            dnnl_sgemm('N', 'N', OC, IC, B, 1.f, doutT.data(), B, X.data(), IC, 0.f, dW.data(), IC);
          },
          reps));
  rep("transpose dout + openblas N,N",
      best_of(
          [&] {
            for (int b = 0; b < B; ++b)
              for (int o = 0; o < OC; ++o) doutT[(size_t)o * B + b] = dout[(size_t)b * OC + o];
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, OC, IC, B, 1.f, doutT.data(), B,
                        X.data(), IC, 0.f, dW.data(), IC);
          },
          reps));
  // oneDNN matmul primitive: src = dout^T (OC x B, strides {1, OC}), weights = X (B x IC), dst dW
  using dnnl::memory;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream st(eng);
  for (int tsrc = 0; tsrc < 2; ++tsrc) {
    memory::desc a_md({OC, B}, memory::data_type::f32,
                      tsrc ? memory::dims{1, OC} : memory::dims{B, 1});
    memory::desc b_md({B, IC}, memory::data_type::f32, memory::dims{IC, 1});
    memory::desc c_md({OC, IC}, memory::data_type::f32, memory::dims{IC, 1});
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), eng);
    dnnl::matmul mm(pd);
    memory a(a_md, eng, tsrc ? dout.data() : doutT.data()), b(b_md, eng, X.data()),
        c(c_md, eng, dW.data());
    rep(tsrc ? "dnnl matmul, src = dout^T strided" : "dnnl matmul, src = transposed copy (excl.)",
        best_of(
            [&] {
              mm.execute(st, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
              st.wait();
            },
            reps));
    std::printf("   impl: %s\n", pd.impl_info_str());
  }
  {  // the same with dst as a dense (IC x OC) buffer, then transposed into dW
    std::vector<float> tmp((size_t)IC * OC);
    memory::desc a_md({IC, B}, memory::data_type::f32, memory::dims{1, IC});
    memory::desc b_md({B, OC}, memory::data_type::f32, memory::dims{OC, 1});
    memory::desc c_md({IC, OC}, memory::data_type::f32, memory::dims{OC, 1});
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), eng);
    dnnl::matmul mm(pd);
    memory a(a_md, eng, X.data()), b(b_md, eng, dout.data()), c(c_md, eng, tmp.data());
    rep("dnnl matmul, dense dW^T then transpose",
        best_of(
            [&] {
              mm.execute(st, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
              st.wait();
              for (int i = 0; i < IC; ++i)
                for (int o = 0; o < OC; ++o) dW[(size_t)o * IC + i] = tmp[(size_t)i * OC + o];
            },
            reps));
    std::printf("   impl: %s\n", pd.impl_info_str());
  }
  {  // dW^T (IC x OC) = X^T · dout with dnnl_sgemm / OpenBLAS T,N, so that the large IC is M and
     // the small OC is N (a kernel's M block, 48 rows for oneDNN's AVX-512 sgemm, does not divide
     // OC = 64), then dW^T transposed into dW in 32 x 32 tiles
    std::vector<float> tmp((size_t)IC * OC), expected = dW;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, IC, B, 1.f, dout.data(), OC, X.data(),
                IC, 0.f, expected.data(), IC);
    auto transpose_into_dW = [&] {
      for (int i0 = 0; i0 < IC; i0 += 32)
        for (int o0 = 0; o0 < OC; o0 += 32)
          for (int o = o0; o < std::min(o0 + 32, OC); ++o)
            for (int i = i0; i < std::min(i0 + 32, IC); ++i)
              dW[(size_t)o * IC + i] = tmp[(size_t)i * OC + o];
    };
    auto check = [&] {
      double worst = 0;
      for (size_t j = 0; j < dW.size(); ++j)
        worst = std::max(worst, (double)std::abs(dW[j] - expected[j]));
      std::printf("   max abs diff from OpenBLAS T,N: %.2e\n", worst);
      std::fill(dW.begin(), dW.end(), 0.f);
    };
    rep("dnnl_sgemm T,N as dW^T, then transpose", best_of(
                                                      [&] {
                                                        dnnl_sgemm('T', 'N', IC, OC, B, 1.f,
                                                                   X.data(), IC, dout.data(), OC,
                                                                   0.f, tmp.data(), OC);
                                                        transpose_into_dW();
                                                      },
                                                      reps));
    check();
    rep("  the dnnl_sgemm alone", best_of(
                                      [&] {
                                        dnnl_sgemm('T', 'N', IC, OC, B, 1.f, X.data(), IC,
                                                   dout.data(), OC, 0.f, tmp.data(), OC);
                                      },
                                      reps));
    rep("  the transpose alone", best_of(transpose_into_dW, reps));
    rep("openblas T,N as dW^T, then transpose",
        best_of(
            [&] {
              cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, IC, OC, B, 1.f, X.data(), IC,
                          dout.data(), OC, 0.f, tmp.data(), OC);
              transpose_into_dW();
            },
            reps));
    check();
  }
  // split K into chunks of kc rows, accumulating (beta 1): X's chunk stays in L2/L3 between ...
  // (dnnl_sgemm)
  for (int kc : {256, 1024}) {
    char name[64];
    std::snprintf(name, sizeof name, "dnnl_sgemm T,N in K chunks of %d", kc);
    rep(name, best_of(
                  [&] {
                    for (int k0 = 0; k0 < B; k0 += kc)
                      dnnl_sgemm('T', 'N', OC, IC, std::min(kc, B - k0), 1.f,
                                 dout.data() + (size_t)k0 * OC, OC, X.data() + (size_t)k0 * IC, IC,
                                 k0 ? 1.f : 0.f, dW.data(), IC);
                  },
                  reps));
  }
  // forward for reference: X(B x IC) · W^T (IC x OC) -> B x OC
  std::vector<float> W((size_t)OC * IC, 0.01f), out((size_t)B * OC);
  rep("forward dnnl_sgemm N,T (reference)", best_of(
                                                [&] {
                                                  dnnl_sgemm('N', 'T', B, OC, IC, 1.f, X.data(), IC,
                                                             W.data(), IC, 0.f, out.data(), OC);
                                                },
                                                reps));
}
