#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "harness/gpu_info.h"
#include "harness/pcie.h"

namespace offloadbench {

TEST(Pcie, LinkRatesMatchTheSpecification) {
  // Gen3 x16: 8 GT/s · 128/130 · 16 lanes / 8 = 15.75 GB/s; Gen5 x16 = 63.0 GB/s; Gen1 x1 = 250
  // MB/s.
  EXPECT_NEAR(pcie_link_bytes_per_second(3, 16), 15.754e9, 0.01e9);
  EXPECT_NEAR(pcie_link_bytes_per_second(4, 16), 31.508e9, 0.01e9);
  EXPECT_NEAR(pcie_link_bytes_per_second(5, 16), 63.015e9, 0.01e9);
  EXPECT_NEAR(pcie_link_bytes_per_second(1, 1), 0.25e9, 1e3);
  EXPECT_EQ(pcie_link_bytes_per_second(0, 16), 0.0);
  EXPECT_EQ(pcie_link_bytes_per_second(4, 0), 0.0);
}

TEST(Pcie, GenerationFromSysfsSpeed) {
  EXPECT_EQ(pcie_generation_from_speed("32.0 GT/s PCIe"), 5);
  EXPECT_EQ(pcie_generation_from_speed("16.0 GT/s PCIe"), 4);
  EXPECT_EQ(pcie_generation_from_speed("8.0 GT/s PCIe"), 3);
  EXPECT_EQ(pcie_generation_from_speed("2.5 GT/s PCIe"), 1);
  EXPECT_EQ(pcie_generation_from_speed("Unknown"), 0);
}

class SysfsLink : public ::testing::Test {
 protected:
  void SetUp() override {
    root = std::filesystem::temp_directory_path() / ("ob_sysfs_" + std::to_string(::getpid()));
    auto dir = root / "0000:1b:00.0";
    std::filesystem::create_directories(dir);
    write(dir / "current_link_speed", "16.0 GT/s PCIe");
    write(dir / "max_link_speed", "32.0 GT/s PCIe");
    write(dir / "current_link_width", "8");
    write(dir / "max_link_width", "16");
    write(dir / "numa_node", "1");
  }
  void TearDown() override { std::filesystem::remove_all(root); }
  static void write(const std::filesystem::path& p, const char* text) {
    std::ofstream(p) << text << "\n";
  }
  std::filesystem::path root;
};

TEST_F(SysfsLink, ReadsADegradedLinkByCudaBusId) {
  // CUDA prints the bus id upper-case, sometimes with an 8-digit domain.
  for (const char* id : {"0000:1B:00.0", "00000000:1B:00.0"}) {
    const auto link = read_sysfs_link(id, root.string());
    EXPECT_EQ(link.current_generation, 4) << id;
    EXPECT_EQ(link.max_generation, 5);
    EXPECT_EQ(link.current_width, 8);
    EXPECT_EQ(link.max_width, 16);
    EXPECT_EQ(link.source, "sysfs");
    EXPECT_EQ(link.gpu_max_generation, 5);  // the GPU function's own capability
    EXPECT_EQ(link.gpu_max_width, 16);
    EXPECT_TRUE(link.degraded());
  }
  EXPECT_EQ(read_sysfs_numa_node("0000:1B:00.0", root.string()), 1);
  GpuInfo gpu;
  gpu.link = read_sysfs_link("0000:1b:00.0", root.string());
  const auto warning = link_warning(gpu);
  EXPECT_NE(warning.find("Gen4 x8"), std::string::npos) << warning;
  EXPECT_NE(warning.find("Gen5 x16"), std::string::npos) << warning;
}

TEST_F(SysfsLink, MissingDeviceIsUnknownNotAnError) {
  const auto link = read_sysfs_link("0000:ff:00.0", root.string());
  EXPECT_FALSE(link.known());
  EXPECT_FALSE(link.degraded());
  EXPECT_EQ(link.theoretical_bytes_per_second(), 0.0);
  EXPECT_EQ(read_sysfs_numa_node("0000:ff:00.0", root.string()), -1);
}

TEST(PcieCeiling, AVirtualMachinesRootPortDoesNotCapTheCeiling) {
  // Inside a VM, NVML's system maximum can read Gen1 (an emulated root port) and an idle GPU trains
  // its link down to Gen1 too; the GPU function's own capability (sysfs) says Gen5 x16.
  PcieLink nvml{1, 1, 16, 16, "nvml", 5, 0};
  PcieLink sysfs;
  sysfs.current_generation = 1;
  sysfs.current_width = 16;
  sysfs.max_generation = sysfs.gpu_max_generation = 5;
  sysfs.max_width = sysfs.gpu_max_width = 16;
  sysfs.source = "sysfs";
  const auto link = merge_link_readings(nvml, sysfs);
  EXPECT_EQ(link.source, "nvml+sysfs");
  EXPECT_EQ(link.max_generation, 1);  // NVML's reading is kept as read, and recorded
  EXPECT_EQ(link.ceiling_generation(), 5);
  EXPECT_EQ(link.ceiling_width(), 16);
  EXPECT_NEAR(link.ceiling_bytes_per_second(), pcie_link_bytes_per_second(5, 16), 1);
  // Without NVML's GPU maximum, sysfs alone raises it; without sysfs, NVML's alone does.
  nvml.gpu_max_generation = 0;
  EXPECT_EQ(merge_link_readings(nvml, sysfs).ceiling_generation(), 5);
  nvml.gpu_max_generation = 5;
  const auto nvml_only = merge_link_readings(nvml, PcieLink{});
  EXPECT_EQ(nvml_only.ceiling_generation(), 5);
  EXPECT_EQ(nvml_only.source, "nvml");
  // No NVML: the sysfs reading as it is.
  EXPECT_EQ(merge_link_readings(PcieLink{}, sysfs).source, "sysfs");
}

TEST(PcieCeiling, ALinkReadHigherUnderLoadRaisesTheCeiling) {
  PcieLink idle{2, 2, 16, 16, "nvml"};  // read at start: Gen2, nothing says more
  PcieLink busy{5, 2, 16, 16, "nvml"};  // read again after the copies: Gen5
  EXPECT_NEAR(link_ceiling_under_load(idle, busy), pcie_link_bytes_per_second(5, 16), 1);
  EXPECT_NEAR(link_ceiling_under_load(busy, idle), pcie_link_bytes_per_second(5, 16),
              1);  // never lowered
  EXPECT_NEAR(link_ceiling_under_load(idle, PcieLink{}), pcie_link_bytes_per_second(2, 16), 1);
}

TEST(PcieCeiling, TheGpuMaximumIsInTheJson) {
  GpuInfo gpu;
  gpu.link = PcieLink{1, 1, 16, 16, "nvml+sysfs", 5, 16};
  const auto j = to_json(gpu)["pcie_link"];
  EXPECT_EQ(j["gpu_max_generation"], 5);
  EXPECT_EQ(j["gpu_max_width"], 16);
  EXPECT_EQ(j["ceiling_generation"], 5);
  EXPECT_EQ(j["max_generation"], 1);
  EXPECT_NEAR(j["ceiling_bytes_per_second"].get<double>(), pcie_link_bytes_per_second(5, 16), 1);
}

TEST(GpuContext, OnlyAnErrorThatStaysAfterClearingIsABrokenContext) {
  EXPECT_EQ(broken_context_reason(0, 0, "none"), "");
  EXPECT_EQ(broken_context_reason(1, 0, "cudaErrorInvalidValue"),
            "");  // cleared: the context works
  const auto reason =
      broken_context_reason(719, 719, "cudaErrorLaunchFailure (719): unspecified launch failure");
  EXPECT_NE(reason.find("cudaErrorLaunchFailure"), std::string::npos) << reason;
  EXPECT_NE(reason.find("every later GPU case is skipped"), std::string::npos) << reason;
  // Without a GPU there is no context to break, and no case reaches the check.
  if (gpu_inventory().gpus.empty()) { EXPECT_EQ(gpu_context_error(), ""); }
}

TEST(GpuInventory, NoDriverIsSaidAsSuch) {
  // cudaDriverGetVersion gives 0 when no driver library is installed; the runtime then reports
  // cudaErrorInsufficientDriver (35), which would wrongly read as "your driver is too old".
  const auto none = device_count_failure_reason(
      35, 0, "cudaErrorInsufficientDriver (35): CUDA driver version is insufficient");
  EXPECT_EQ(none, "no usable GPU: no NVIDIA driver installed");
  const auto old = device_count_failure_reason(35, 12020, "cudaErrorInsufficientDriver (35)");
  EXPECT_NE(old.find("(CUDA 12.2) is older"), std::string::npos) << old;
  EXPECT_EQ(device_count_failure_reason(100, 13000, "cudaErrorNoDevice (100)"),
            "no usable GPU: the NVIDIA driver sees no device");
  EXPECT_NE(
      device_count_failure_reason(999, 13000, "cudaErrorUnknown (999)").find("cudaErrorUnknown"),
      std::string::npos);
}

TEST(GpuInventory, AnswersWithOrWithoutAGpu) {
  const auto& inv = gpu_inventory();
  if (inv.gpus.empty()) {
    EXPECT_FALSE(inv.unavailable_reason.empty());
    EXPECT_FALSE(gpu_unavailable_reason(0).empty());
  } else {
    EXPECT_TRUE(gpu_unavailable_reason(0).empty());
    EXPECT_FALSE(inv.gpus[0].name.empty());
  }
  EXPECT_FALSE(gpu_unavailable_reason(static_cast<int>(inv.gpus.size()) + 1).empty());
}

}  // namespace offloadbench
