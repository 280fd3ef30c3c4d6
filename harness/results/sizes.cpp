#include "harness/results/sizes.h"

#include <cctype>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace offloadbench {

namespace {
std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

std::uint64_t parse_size(const std::string& text) {
  auto bad = [&](const char* why) {
    return std::invalid_argument(fmt::format("malformed size '{}': {}", text, why));
  };
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0) throw bad("expected a number such as 4096, 64KiB or 1GiB");
  const std::string unit = lower(text.substr(digits));
  int shift = 0;
  if (unit.empty() || unit == "b")
    shift = 0;
  else if (unit == "k" || unit == "ki" || unit == "kib")
    shift = 10;
  else if (unit == "m" || unit == "mi" || unit == "mib")
    shift = 20;
  else if (unit == "g" || unit == "gi" || unit == "gib")
    shift = 30;
  else
    throw bad("unknown unit (use KiB, MiB or GiB)");

  std::uint64_t value = 0;
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = 0; i < digits; ++i) {
    const auto d = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (kMax - d) / 10) throw bad("too large");
    value = value * 10 + d;
  }
  if (value == 0) throw bad("must be greater than zero");
  if (value > (kMaxSize >> shift)) throw bad("too large (at most 16TiB: no machine holds more)");
  return value << shift;
}

std::vector<std::uint64_t> parse_size_list(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("empty list (give sizes such as 4KiB,1MiB)");
  std::vector<std::uint64_t> sizes;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto end = comma == std::string::npos ? text.size() : comma;
    sizes.push_back(parse_size(text.substr(start, end - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

std::string format_size(std::uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", bytes, units[unit]);
}

std::vector<std::uint64_t> powers_of_two(std::uint64_t from, std::uint64_t to) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = from; s != 0 && s <= to; s *= 2) out.push_back(s);
  return out;
}

}  // namespace offloadbench
