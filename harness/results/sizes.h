// Byte sizes as users type them ("4KiB", "256MiB", "1G", "4096") and as we print them.
// Sizes are 64-bit everywhere: a 4 GiB buffer must never wrap.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace offloadbench {

// The largest size accepted (16 TiB). Far above any machine's memory, and small enough that a
// runner's products (elements × 8 bytes × a few arrays) cannot wrap a 64-bit integer.
inline constexpr std::uint64_t kMaxSize = std::uint64_t{1} << 44;

// Binary multiples only: K, Ki, KiB, M, Mi, MiB, G, Gi, GiB (case-insensitive), or a plain byte
// count. Throws std::invalid_argument naming the text for anything else, for zero and above
// kMaxSize.
std::uint64_t parse_size(const std::string& text);

// A comma-separated list of sizes ("4KiB,1MiB"); throws like parse_size, and on an empty list.
std::vector<std::uint64_t> parse_size_list(const std::string& text);

// "4KiB", "256MiB", "1GiB"; sizes that are not a whole multiple print in the largest unit that is.
std::string format_size(std::uint64_t bytes);

// from, 2·from, 4·from, … ≤ to.
std::vector<std::uint64_t> powers_of_two(std::uint64_t from, std::uint64_t to);

}  // namespace offloadbench
