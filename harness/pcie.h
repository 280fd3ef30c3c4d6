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

// A PCI bus id as sysfs names it: lower case, a 4-digit domain ("0000:1b:00.0"; CUDA and NVML print
// 8 digits, "00000000:1B:00.0").
std::string normalized_pci_bus_id(const std::string& pci_bus_id);

// The sysfs folder of a PCI device under `root` (/sys/bus/pci/devices, or a test's fake tree).
std::string sysfs_pci_device_dir(const std::string& pci_bus_id, const std::string& root);

// The first line of a (sysfs) file; "" when it cannot be read.
std::string read_first_line(const std::string& path);

}  // namespace offloadbench
