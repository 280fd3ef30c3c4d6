// Seeded inputs in [-1, 1] for the twin tests, the same on the CPU and GPU sides.
#pragma once
#include <cstddef>
#include <random>
#include <vector>

namespace offloadbench::testing {

template <typename T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<T> out(n);
  for (auto& v : out) v = static_cast<T>(value(rng));
  return out;
}

}  // namespace offloadbench::testing
