// Host pages for pinning at scale (see host_pages.h).
#include "benchmarks/transfer/host_pages.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace offloadbench {

MappedPages::MappedPages(std::uint64_t bytes, bool huge_pages) : bytes_(bytes) {
  // Huge pages need 2 MiB-aligned ranges: map one huge page more and trim both ends to alignment.
  const std::uint64_t mapped = huge_pages ? bytes + kHugePageBytes : bytes;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  auto* start = static_cast<unsigned char*>(p);
  if (!huge_pages) {
    data_ = start;
    return;
  }
  const auto address = reinterpret_cast<std::uintptr_t>(start);
  auto* aligned = start + ((kHugePageBytes - address % kHugePageBytes) % kHugePageBytes);
  if (aligned > start) munmap(start, aligned - start);
  const std::uint64_t tail = (start + mapped) - (aligned + bytes);
  if (tail > 0) munmap(aligned + bytes, tail);
  data_ = aligned;
  if (madvise(data_, bytes_, MADV_HUGEPAGE) != 0) {
    const int error = errno;
    munmap(data_, bytes_);
    throw std::runtime_error(
        fmt::format("madvise(MADV_HUGEPAGE) failed: {}", std::strerror(error)));
  }
}

MappedPages::~MappedPages() { munmap(data_, bytes_); }

void MappedPages::touch() {
  for (std::uint64_t at = 0; at < bytes_; at += kBasePageBytes)
    data_[at] = static_cast<unsigned char>(at / kBasePageBytes);
}

std::string selected_mode(const std::string& sysfs_text) {
  const auto open = sysfs_text.find('[');
  const auto close = sysfs_text.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return "";
  return sysfs_text.substr(open + 1, close - open - 1);
}

namespace {
std::string read_mode(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const auto mode = in ? selected_mode(text.str()) : std::string();
  return mode.empty() ? "unavailable" : mode;
}

// "7f00-7f80 rw-p ..." -> {0x7f00, 0x7f80}; false for a field line ("Size: 4 kB").
bool mapping_range(const std::string& line, std::uint64_t& begin, std::uint64_t& end) {
  const auto dash = line.find('-'), space = line.find(' ');
  if (dash == std::string::npos || space == std::string::npos || dash > space || dash == 0)
    return false;
  try {
    std::size_t used = 0;
    begin = std::stoull(line.substr(0, dash), &used, 16);
    if (used != dash) return false;
    end = std::stoull(line.substr(dash + 1, space - dash - 1), &used, 16);
    return used == space - dash - 1;
  } catch (const std::exception&) { return false; }
}
}  // namespace

std::string transparent_huge_pages_enabled() {
  return read_mode("/sys/kernel/mm/transparent_hugepage/enabled");
}
std::string transparent_huge_pages_defrag() {
  return read_mode("/sys/kernel/mm/transparent_hugepage/defrag");
}

std::uint64_t anon_huge_bytes_in(const std::string& smaps_text, std::uint64_t begin,
                                 std::uint64_t bytes) {
  std::istringstream lines(smaps_text);
  std::string line;
  bool inside = false;
  std::uint64_t total = 0;
  while (std::getline(lines, line)) {
    std::uint64_t from = 0, to = 0;
    if (mapping_range(line, from, to)) {
      inside = from < begin + bytes && begin < to;
      continue;
    }
    static const std::string key = "AnonHugePages:";
    if (!inside || line.compare(0, key.size(), key) != 0) continue;
    try {
      total += std::stoull(line.substr(key.size())) * 1024;  // "AnonHugePages:    2048 kB"
    } catch (const std::exception&) {}
  }
  return total;
}

std::uint64_t anon_huge_bytes(const void* begin, std::uint64_t bytes) {
  std::ifstream in("/proc/self/smaps");
  std::stringstream text;
  text << in.rdbuf();
  return anon_huge_bytes_in(text.str(), reinterpret_cast<std::uintptr_t>(begin), bytes);
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> chunk_ranges(std::uint64_t bytes,
                                                                  std::uint64_t chunk) {
  if (chunk == 0) throw std::invalid_argument("chunk_ranges: a chunk of 0 bytes");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (std::uint64_t at = 0; at < bytes; at += chunk)
    out.emplace_back(at, std::min(chunk, bytes - at));
  return out;
}

}  // namespace offloadbench
