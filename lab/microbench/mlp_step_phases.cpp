// Where does a CPU training step's time go: each phase of 784-128-10's AdamW step, in the step and
// alone? Built by lab/microbench/CMakeLists.txt.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "kernels/cpu_gemm.h"
#include "kernels/mlp.h"

using namespace offloadbench;
using Clock = std::chrono::steady_clock;

static double median_us(std::vector<double> t) {
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

static double alone_us(const std::function<void()>& f) {
  std::vector<double> t;
  for (int i = 0; i < 20; ++i) f();
  for (int i = 0; i < 200; ++i) {
    const auto a = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  return median_us(t);
}

int main(int argc, char** argv) {
  const int B = argc > 1 ? std::atoi(argv[1]) : 1024, threads = argc > 2 ? std::atoi(argv[2]) : 2;
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  const MlpShape s{784, 128, 10};
  const int D = 784, H = 128, C = 10;
  MlpCpuModel model(s, B, 1);
  const CpuGemmLibrary lib = CpuGemmLibrary::onednn;
  model.gemm_library = lib;
  std::vector<float> x(static_cast<std::size_t>(B) * D);
  std::vector<int> y(B);
  make_synthetic_dataset(x.data(), y.data(), B, s, 2);
  const auto adamw = make_optimizer_config(Optimizer::adamw, 0);
  const auto a = model.activations();
  const auto l = mlp_param_layout(s);
  float *p = model.params.data(), *g = model.grads.data(), *m = model.m.data(), *v = model.v.data();
  TrainScalars sc;
  sc.step = 1;
  const CpuGemm dw1{true, false, H, D, B, 1.f, a.dact1, H, x.data(), D, 0.f, g + l.w1, D};
  // The step as mlp_forward_backward + mlp_optimizer_step run it, one phase per entry.
  const std::vector<std::pair<const char*, std::function<void()>>> phases = {
      {"forward (both layers)", [&] { mlp_forward(a, p, x.data(), s, B, lib); }},
      {"softmax", [&] { softmax_cross_entropy(&sc, a.dlogits, a.logits, y.data(), 1, B, C); }},
      {"dW2", [&] { matmul_backward_weight(g + l.w2, a.dlogits, a.act1, B, H, C, lib, 0.f); }},
      {"db2", [&] { bias_backward(g + l.b2, a.dlogits, B, C); }},
      {"dh", [&] { matmul_backward_input(a.dact1, a.dlogits, p + l.w2, B, H, C, lib); }},
      {"ReLU backward + db1",
       [&] {
         relu_backward(a.dact1, a.dact1, a.act1, std::int64_t{B} * H);
         bias_backward(g + l.b1, a.dact1, B, H);
       }},
      {"dW1 (split over the batch)", [&] { sgemm_split_k(lib, dw1); }},
      {"AdamW pass",
       [&] { adamw_update(p, m, v, g, &sc, adamw, static_cast<std::int64_t>(l.count)); }},
  };
  std::vector<std::vector<double>> in_step(phases.size());
  for (int step = 0; step < 320; ++step) {
    auto last = Clock::now();
    for (std::size_t i = 0; i < phases.size(); ++i) {
      phases[i].second();
      const auto now = Clock::now();
      if (step >= 20)
        in_step[i].push_back(std::chrono::duration<double, std::micro>(now - last).count());
      last = now;
    }
  }
  std::printf("784-128-10 AdamW, batch %d, %d threads, oneDNN: µs in the step, alone\n", B,
              threads);
  double total = 0;
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const double t = median_us(in_step[i]);
    total += t;
    std::printf("%-28s %8.1f %8.1f\n", phases[i].first, t, alone_us(phases[i].second));
  }
  std::printf("%-28s %8.1f\n", "sum of the phases", total);
  std::printf("%-28s %8.1f\n", "mlp_train_step_fast",
              alone_us([&] { mlp_train_step_fast(model, x.data(), y.data(), 1, adamw); }));
}
