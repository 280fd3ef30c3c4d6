// Theoretical PCIe link rate per direction, the ceiling every copy bandwidth is checked against.
// Rates after line encoding: Gen1/2 use 8b/10b, Gen3–5 128b/130b, Gen6 FLIT mode (242/256 payload).
// Packet headers cost another ~5–10% in practice, so ~80% of this figure is a good copy.
#pragma once
#include <string>

namespace offloadbench {

// Transfer rate in GT/s of a PCIe generation (1..6); 0 when unknown.
double pcie_gigatransfers_per_second(int generation);

// Bytes per second in one direction for a generation and lane count; 0 when either is unknown.
double pcie_link_bytes_per_second(int generation, int width);

// The generation named by a sysfs link speed such as "32.0 GT/s PCIe"; 0 when not recognised.
int pcie_generation_from_speed(const std::string& sysfs_speed);

}  // namespace offloadbench
