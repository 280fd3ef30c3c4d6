// Host pages for pinning at scale: an anonymous mapping that can ask for transparent huge pages
// (2 MiB-aligned, madvise(MADV_HUGEPAGE)), touched one write per 4 KiB page, and what the kernel
// says it did: the system's THP mode and the AnonHugePages of the mapping in /proc/self/smaps, so a
// row shows whether madvise took. The parsers take text, so tests feed them made-up files.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace offloadbench {

inline constexpr std::uint64_t kHugePageBytes = 2ull << 20;
inline constexpr std::uint64_t kBasePageBytes = 4096;

class MappedPages {
 public:
  // huge_pages: align the mapping to 2 MiB and madvise(MADV_HUGEPAGE) it; throws std::bad_alloc
  // when mmap fails and std::runtime_error when madvise does.
  MappedPages(std::uint64_t bytes, bool huge_pages);
  ~MappedPages();
  MappedPages(const MappedPages&) = delete;
  MappedPages& operator=(const MappedPages&) = delete;
  unsigned char* data() const { return data_; }
  std::uint64_t bytes() const { return bytes_; }
  // One write per 4 KiB page (the first write of each faults it in), each page a different byte.
  void touch();

 private:
  unsigned char* data_ = nullptr;
  std::uint64_t bytes_ = 0;
};

// "always", "madvise" or "never": the bracketed word of /sys/kernel/mm/transparent_hugepage/enabled
// (or .../defrag) text; "" when the text has none.
std::string selected_mode(const std::string& sysfs_text);
// The system's THP mode and defrag policy ("unavailable" when the files cannot be read).
std::string transparent_huge_pages_enabled();
std::string transparent_huge_pages_defrag();

// Bytes of AnonHugePages in the mappings of `smaps_text` (/proc/PID/smaps) that overlap
// [begin, begin + bytes); 0 when none does.
std::uint64_t anon_huge_bytes_in(const std::string& smaps_text, std::uint64_t begin,
                                 std::uint64_t bytes);
// The same for this process now.
std::uint64_t anon_huge_bytes(const void* begin, std::uint64_t bytes);

// [offset, length) pieces of `bytes` in chunks of `chunk` (the last one shorter); none for 0 bytes.
std::vector<std::pair<std::uint64_t, std::uint64_t>> chunk_ranges(std::uint64_t bytes,
                                                                  std::uint64_t chunk);

}  // namespace offloadbench
