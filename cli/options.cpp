#include "cli/options.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "benchmarks/suites.h"
#include "cli/commands.h"
#include "harness/gpu_info.h"

namespace offloadbench::cli {

std::vector<const Suite*> select_suites(const std::string& text) {
  std::vector<const Suite*> selected;
  std::vector<std::string> known;
  for (const auto& s : all_suites()) known.push_back(s.name);
  if (text == "all") {
    for (const auto& s : all_suites()) selected.push_back(&s);
    return selected;
  }
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const auto name =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const Suite* found = nullptr;
    for (const auto& s : all_suites())
      if (s.name == name) found = &s;
    if (!found)
      throw UsageError(
          fmt::format("unknown suite '{}' (known: {}, or all)", name, fmt::join(known, ", ")));
    bool duplicate = false;
    for (auto* s : selected) duplicate |= s == found;
    if (!duplicate) selected.push_back(found);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return selected;
}

std::string sizes_meanings() {
  std::vector<std::string> parts;
  for (const auto& s : all_suites())
    if (!s.sizes_meaning.empty()) parts.push_back(fmt::format("{}: {}", s.name, s.sizes_meaning));
  return fmt::format("{}", fmt::join(parts, "; "));
}

void check_sizes_apply(const std::vector<const Suite*>& suites) {
  std::vector<std::string> fixed;
  for (auto* s : suites)
    if (s->sizes_meaning.empty()) fixed.push_back(s->name);
  if (fixed.empty()) return;
  throw UsageError(fmt::format(
      "--sizes does not apply to {} (fixed sweeps); choose suites it sizes with --suite ({})",
      fmt::join(fixed, ", "), sizes_meanings()));
}

std::vector<int> select_devices(const std::string& text) {
  const int visible = static_cast<int>(gpu_inventory().gpus.size());
  if (text == "cpu") return {};
  if (text == "all") {
    std::vector<int> all;
    for (int i = 0; i < visible; ++i) all.push_back(i);
    if (all.empty()) all.push_back(0);
    return all;
  }
  // One index, or a comma-separated list of them (the peer suite's GPUs).
  std::vector<int> chosen;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const auto item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    bool digits = !item.empty() && item.size() < 6;
    for (char c : item) digits &= std::isdigit(static_cast<unsigned char>(c)) != 0;
    if (!digits)
      throw UsageError(
          fmt::format("--device '{}' is not a GPU index, a list of them, 'all' or 'cpu'", text));
    const int index = std::stoi(item);
    if (index >= std::max(visible, 1))
      throw UsageError(
          fmt::format("--device {} is out of range: {} GPU(s) visible", index, visible));
    if (std::find(chosen.begin(), chosen.end(), index) != chosen.end())
      throw UsageError(fmt::format("--device '{}' names GPU {} twice", text, index));
    chosen.push_back(index);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return chosen;
}

}  // namespace offloadbench::cli
