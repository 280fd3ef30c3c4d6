#include "harness/system_info.h"

#include <cblas.h>
#include <omp.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "harness/results/sizes.h"

extern "C" {
// OpenBLAS extensions; declared by its cblas.h on most builds, repeated here for the others.
char* openblas_get_config(void);
int openblas_get_num_threads(void);
int openblas_get_parallel(void);  // 0 sequential, 1 pthreads, 2 OpenMP
}

namespace offloadbench {

namespace {
std::string proc_field(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) == 0) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      auto value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      return value;
    }
  }
  return "";
}

std::uint64_t meminfo_bytes(const std::string& key) {
  const auto text = proc_field("/proc/meminfo", key);
  return text.empty() ? 0 : std::stoull(text) * 1024;  // reported in kB (KiB)
}

// "always [madvise] never" -> "madvise"; a file without brackets gives its first line.
std::string selected_word(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const auto open = line.find('['), close = line.find(']');
  return open != std::string::npos && close > open ? line.substr(open + 1, close - open - 1) : line;
}

std::string format_time(const char* pattern) {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, pattern, &utc);
  return text;
}
}  // namespace

std::uint64_t host_memory_available_bytes() { return meminfo_bytes("MemAvailable"); }

std::string host_fit_problem(std::uint64_t bytes_needed) {
  const auto available = host_memory_available_bytes();
  if (available != 0 && bytes_needed + (512ull << 20) > available)
    return fmt::format("needs {} of host memory, {} available", format_size(bytes_needed),
                       format_size(available));
  return "";
}

unsigned max_threads_accepted(unsigned hardware_threads) {
  return 4 * std::max(hardware_threads, 1u);
}

std::string omp_num_threads_problem(const char* value, unsigned hardware_threads) {
  if (!value || !*value) return "";
  const unsigned most = max_threads_accepted(hardware_threads);
  const std::string text = value;
  std::size_t start = 0;
  while (true) {  // OpenMP's nesting levels: "8" or "8,2"
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    const bool digits =
        !item.empty() && item.size() <= 9 &&
        std::all_of(item.begin(), item.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
    if (!digits) {  // too long a number is still too many; other text libgomp ignores, with its own
                    // warning
      if (!item.empty() && item.size() > 9 &&
          std::all_of(item.begin(), item.end(),
                      [](unsigned char c) { return c >= '0' && c <= '9'; }))
        return fmt::format(
            "asks for more threads than this machine can run ({} hardware threads; at most {} "
            "are accepted)",
            hardware_threads, most);
      return "";
    }
    if (std::stoul(item) > most)
      return fmt::format(
          "asks for more threads than this machine can run ({} hardware threads; at most {} are "
          "accepted)",
          hardware_threads, most);
    if (end == text.size()) return "";
    start = end + 1;
  }
}

HostInfo query_host_info() {
  HostInfo host;
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  host.hostname = name;
  host.cpu_model = proc_field("/proc/cpuinfo", "model name");
  if (host.cpu_model.empty()) host.cpu_model = "unknown";
  host.logical_cpus = static_cast<int>(std::thread::hardware_concurrency());
  host.omp_threads = omp_get_max_threads();
  host.memory_total_bytes = meminfo_bytes("MemTotal");
  host.memory_available_bytes = meminfo_bytes("MemAvailable");
  const int parallel = openblas_get_parallel();
  host.blas_library = fmt::format("{} ({})", openblas_get_config(),
                                  parallel == 2   ? "OpenMP"
                                  : parallel == 1 ? "pthreads"
                                                  : "sequential");
  host.blas_threads = openblas_get_num_threads();
  utsname uts{};
  if (uname(&uts) == 0) host.os = std::string(uts.sysname) + " " + uts.release + " " + uts.machine;
  host.cpu_governor = selected_word("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  host.thp_enabled = selected_word("/sys/kernel/mm/transparent_hugepage/enabled");
  return host;
}

nlohmann::json to_json(const HostInfo& host) {
  return {{"hostname", host.hostname},
          {"cpu_model", host.cpu_model},
          {"logical_cpus", host.logical_cpus},
          {"omp_threads", host.omp_threads},
          {"memory_total_bytes", host.memory_total_bytes},
          {"memory_available_bytes", host.memory_available_bytes},
          {"blas", {{"library", host.blas_library}, {"threads", host.blas_threads}}},
          {"os", host.os},
          {"cpu_governor", host.cpu_governor},
          {"thp_enabled", host.thp_enabled}};
}

std::string utc_now_iso8601() { return format_time("%Y-%m-%dT%H:%M:%SZ"); }
std::string utc_now_stamp() { return format_time("%Y%m%dT%H%M%SZ"); }

}  // namespace offloadbench
