#include "harness/pcie.h"

#include <cctype>
#include <cstdlib>
#include <fstream>

namespace offloadbench {

double pcie_gigatransfers_per_second(int generation) {
  switch (generation) {
    case 1:
      return 2.5;
    case 2:
      return 5.0;
    case 3:
      return 8.0;
    case 4:
      return 16.0;
    case 5:
      return 32.0;
    case 6:
      return 64.0;
    default:
      return 0.0;
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

std::string normalized_pci_bus_id(const std::string& pci_bus_id) {
  std::string id = pci_bus_id;
  for (auto& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (id.size() > 12 && id.find(':') == 8) id = id.substr(4);
  return id;
}

std::string sysfs_pci_device_dir(const std::string& pci_bus_id, const std::string& root) {
  return root + "/" + normalized_pci_bus_id(pci_bus_id);
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace offloadbench
