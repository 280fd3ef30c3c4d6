#include "harness/pcie.h"

#include <cstdlib>

namespace offloadbench {

double pcie_gigatransfers_per_second(int generation) {
  switch (generation) {
    case 1: return 2.5;
    case 2: return 5.0;
    case 3: return 8.0;
    case 4: return 16.0;
    case 5: return 32.0;
    case 6: return 64.0;
    default: return 0.0;
  }
}

double pcie_link_bytes_per_second(int generation, int width) {
  if (width <= 0) return 0.0;
  const double gt = pcie_gigatransfers_per_second(generation);
  double encoding = 128.0 / 130.0;
  if (generation <= 2) encoding = 8.0 / 10.0;
  if (generation >= 6) encoding = 242.0 / 256.0;
  return gt * 1e9 * encoding * width / 8.0;
}

int pcie_generation_from_speed(const std::string& sysfs_speed) {
  const double gt = std::strtod(sysfs_speed.c_str(), nullptr);
  for (int gen = 1; gen <= 6; ++gen) {
    if (gt > 0 && gt > pcie_gigatransfers_per_second(gen) * 0.9 &&
        gt < pcie_gigatransfers_per_second(gen) * 1.1)
      return gen;
  }
  return 0;
}

}  // namespace offloadbench
