// Is 12288-64-10's batch-1 AdamW pass bound by its sqrt and division or by streaming p, m, v from
// L3? Built by lab/microbench/CMakeLists.txt.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>
#include <algorithm>
int main() {
  const size_t n = 12288 * 64 + 64 + 64 * 10 + 10;
  std::vector<float> p(n, 0.01f), m(n, 1e-3f), v(n, 1e-6f), g(n, 1e-3f);
  const float b1 = 0.9f, b2 = 0.999f, lr = 1e-3f, eps = 1e-8f, ic1 = 10.f, ic2 = 1000.f,
              decay = 1 - 1e-5f;
  for (int mode = 0; mode < 3; ++mode) {
    std::vector<double> t;
    for (int rep = 0; rep < 200; ++rep) {
      auto s = std::chrono::steady_clock::now();
      float* __restrict P = p.data();
      float* __restrict M = m.data();
      float* __restrict V = v.data();
      const float* __restrict G = g.data();
      if (mode == 0) {
#pragma omp simd
        for (size_t i = 0; i < n; ++i) {
          float mn = b1 * M[i] + (1 - b1) * G[i], vn = b2 * V[i] + (1 - b2) * G[i] * G[i];
          M[i] = mn;
          V[i] = vn;
          P[i] = P[i] * decay - lr * (mn * ic1) / (std::sqrt(vn * ic2) + eps);
        }
      } else if (mode == 1) {
#pragma omp simd
        for (size_t i = 0; i < n; ++i) {
          float mn = b1 * M[i] + (1 - b1) * G[i], vn = b2 * V[i] + (1 - b2) * G[i] * G[i];
          M[i] = mn;
          V[i] = vn;
          P[i] = P[i] * decay - lr * (mn * ic1) * (vn * ic2 + eps);
        }
      } else {
#pragma omp simd
        for (size_t i = 0; i < n; ++i) {
          float mn = b1 * M[i] + (1 - b1) * G[i], vn = b2 * V[i] + (1 - b2) * G[i] * G[i];
          M[i] = mn;
          V[i] = vn;
          P[i] = P[i] * decay - lr * (mn * ic1) / (vn * ic2 + eps);
        }
      }
      t.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s).count());
      std::fill(v.begin(), v.end(), 1e-6f);
      std::fill(m.begin(), m.end(), 1e-3f);
      std::fill(p.begin(), p.end(), 0.01f);
    }
    std::sort(t.begin(), t.end());
    std::printf("%s: median %.1f us, min %.1f us (%zu params)\n",
                mode == 0   ? "sqrt+div"
                : mode == 1 ? "no sqrt, no div"
                            : "div only",
                t[t.size() / 2], t[0], n);
  }
}
