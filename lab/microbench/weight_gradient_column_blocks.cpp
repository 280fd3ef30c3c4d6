// Is 12288-64-10's dW1 faster in column blocks, each updated by AdamW while in cache, than in one
// dnnl_sgemm? Built by lab/microbench/CMakeLists.txt.
#include "kernels/mlp.h"
#include "kernels/cpu_gemm.h"
#include <dnnl.h>
#include <omp.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>
using namespace offloadbench;
static double med_ms(const std::function<void()>& f, int reps) {
  std::vector<double> t;
  f();
  for (int i = 0; i < reps; ++i) {
    auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
  return t[reps / 2];
}
int main(int argc, char** argv) {
  int B = atoi(argv[1]), D = 12288, H = 64, reps = atoi(argv[2]);
  int threads = omp_get_max_threads();
  std::vector<float> x((size_t)B * D), da((size_t)B * H), g((size_t)H * D), ref((size_t)H * D),
      p(g.size(), 0.01f), m(g.size()), v(g.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(i * 0.001f);
  for (size_t i = 0; i < da.size(); ++i) da[i] = std::cos(i * 0.01f) * 0.01f;
  auto cfg = make_optimizer_config(Optimizer::adamw, 0);
  TrainScalars sc;
  sc.step = 1;
  double flops = 2.0 * H * D * B;
  auto whole = [&] {
    dnnl_sgemm('T', 'N', H, D, B, 1.f, da.data(), H, x.data(), D, 0.f, g.data(), D);
  };
  whole();
  ref = g;
  std::printf("B %d threads %d\n", B, threads);
  double t = med_ms(whole, reps);
  std::printf("whole dnnl_sgemm            %8.2f ms %6.1f GFLOP/s\n", t, flops / t / 1e6);
  t = med_ms(
      [&] {
        whole();
        adamw_update(p.data(), m.data(), v.data(), g.data(), &sc, cfg, (int64_t)g.size());
      },
      reps);
  std::printf("whole + adamw pass          %8.2f ms\n", t);
  for (int nb : {256, 512, 1024, 2048, 3072}) {
    int blocks = (D + nb - 1) / nb;
    auto blocked = [&](bool adam) {
#pragma omp parallel for schedule(static)
      for (int j = 0; j < blocks; ++j) {
        int n0 = j * nb, n = std::min(nb, D - n0);
        dnnl_sgemm('T', 'N', H, n, B, 1.f, da.data(), H, x.data() + n0, D, 0.f, g.data() + n0, D);
        if (adam)
          for (int h = 0; h < H; ++h) {
            size_t o = (size_t)h * D + n0;
            adamw_update(p.data() + o, m.data() + o, v.data() + o, g.data() + o, &sc, cfg, n);
          }
      }
    };
    blocked(false);
    double md = 0;
    for (size_t i = 0; i < g.size(); ++i) md = std::max(md, (double)std::fabs(g[i] - ref[i]));
    t = med_ms([&] { blocked(false); }, reps);
    double t2 = med_ms([&] { blocked(true); }, reps);
    std::printf("blocks of %5d: %8.2f ms %6.1f GFLOP/s  (+adamw %8.2f ms)  maxdiff %.1e\n", nb, t,
                flops / t / 1e6, t2, md);
  }
}
