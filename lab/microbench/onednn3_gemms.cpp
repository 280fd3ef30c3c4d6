// Would oneDNN 3.x run the weight gradient dW = dout^T · X and square SGEMMs faster than
// Debian's 2.6? Built by lab/microbench/CMakeLists.txt.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

using memory = dnnl::memory;

static double median_seconds(const std::function<void()>& f, int reps) {
  f();  // warm-up (and the primitive's first-call set-up)
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto s = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// C (M x N) = A (M x K, strides a) · B (K x N, strides b), dense row-major C, as a matmul
// primitive.
struct Matmul {
  dnnl::matmul primitive;
  memory a, b, c;
  Matmul(dnnl::engine& engine, int M, int N, int K, memory::dims a_strides, memory::dims b_strides,
         const float* A, const float* B, float* C) {
    const memory::desc a_md({M, K}, memory::data_type::f32, a_strides);
    const memory::desc b_md({K, N}, memory::data_type::f32, b_strides);
    const memory::desc c_md({M, N}, memory::data_type::f32, memory::dims{N, 1});
    const dnnl::matmul::primitive_desc pd(engine, a_md, b_md, c_md);
    std::printf("   (%s)\n", pd.impl_info_str());
    primitive = dnnl::matmul(pd);
    a = memory(a_md, engine, const_cast<float*>(A));
    b = memory(b_md, engine, const_cast<float*>(B));
    c = memory(c_md, engine, C);
  }
  void run(dnnl::stream& stream) {
    primitive.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    stream.wait();
  }
};

int main() {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const dnnl_version_t* v = dnnl_version();
  std::printf("oneDNN %d.%d.%d\n", v->major, v->minor, v->patch);
  auto report = [](const char* what, double flops, double s, double err) {
    std::printf("%-52s %9.2f ms %7.1f GFLOP/s  max abs diff %.1e\n", what, s * 1e3, flops / s / 1e9,
                err);
  };
  for (auto [B, IC, OC] :
       {std::array<int, 3>{4096, 12288, 64}, std::array<int, 3>{4096, 784, 128}}) {
    std::printf("dW (%d x %d) = dout^T · X, batch %d\n", OC, IC, B);
    std::vector<float> X(std::size_t(B) * IC), dout(std::size_t(B) * OC), dW(std::size_t(OC) * IC),
        expected(dW.size()), dWT(dW.size());
    for (auto& x : X) x = float(std::rand() % 129 - 64) / 64.f;
    for (auto& x : dout) x = float(std::rand() % 129 - 64) / 64.f;
    const double flops = 2.0 * B * IC * OC;
    // The reference: dnnl_sgemm, as the suite runs it today (exact here: small integers over 64).
    dnnl_sgemm('T', 'N', OC, IC, B, 1.f, dout.data(), OC, X.data(), IC, 0.f, expected.data(), IC);
    auto diff = [&] {
      double worst = 0;
      for (std::size_t i = 0; i < dW.size(); ++i)
        worst = std::max(worst, double(std::abs(dW[i] - expected[i])));
      std::fill(dW.begin(), dW.end(), NAN);
      return worst;
    };
    double s = median_seconds(
        [&] {
          dnnl_sgemm('T', 'N', OC, IC, B, 1.f, dout.data(), OC, X.data(), IC, 0.f, dW.data(), IC);
        },
        5);
    report("dnnl_sgemm T,N", flops, s, diff());
    Matmul strided(engine, OC, IC, B, {1, OC}, {IC, 1}, dout.data(), X.data(), dW.data());
    s = median_seconds([&] { strided.run(stream); }, 5);
    report("matmul, src = dout^T through strides", flops, s, diff());
    Matmul transposed(engine, IC, OC, B, {1, IC}, {OC, 1}, X.data(), dout.data(), dWT.data());
    s = median_seconds(
        [&] {
          transposed.run(stream);
          for (int i0 = 0; i0 < IC; i0 += 32)
            for (int o = 0; o < OC; ++o)
              for (int i = i0; i < std::min(i0 + 32, IC); ++i)
                dW[std::size_t(o) * IC + i] = dWT[std::size_t(i) * OC + o];
        },
        5);
    report("matmul, dW^T = X^T · dout, then transposed", flops, s, diff());
  }
  for (int n : {256, 512, 1024, 4096}) {
    std::vector<float> A(std::size_t(n) * n), Bm(A.size()), C(A.size()), expected(A.size());
    for (auto& x : A) x = float(std::rand() % 129 - 64) / 64.f;
    for (auto& x : Bm) x = float(std::rand() % 129 - 64) / 64.f;
    const double flops = 2.0 * n * n * n;
    const int reps = n >= 4096 ? 5 : n >= 1024 ? 21 : 101;
    dnnl_sgemm('N', 'N', n, n, n, 1.f, A.data(), n, Bm.data(), n, 0.f, expected.data(), n);
    auto diff = [&] {
      double worst = 0;
      for (std::size_t i = 0; i < C.size(); ++i)
        worst = std::max(worst, double(std::abs(C[i] - expected[i])));
      return worst;
    };
    std::printf("square %d\n", n);
    double s = median_seconds(
        [&] { dnnl_sgemm('N', 'N', n, n, n, 1.f, A.data(), n, Bm.data(), n, 0.f, C.data(), n); },
        reps);
    report("dnnl_sgemm N,N", flops, s, diff());
    Matmul plain(engine, n, n, n, {n, 1}, {n, 1}, A.data(), Bm.data(), C.data());
    s = median_seconds([&] { plain.run(stream); }, reps);
    report("matmul", flops, s, diff());
  }
}
