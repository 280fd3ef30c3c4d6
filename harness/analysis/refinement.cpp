#include "harness/analysis/refinement.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"

namespace offloadbench {

namespace {

// The sweep values each group measured already (any view, any row).
std::map<std::string, std::set<std::uint64_t>> measured_values(const nlohmann::json& document) {
  std::map<std::string, std::set<std::uint64_t>> measured;
  const auto rows = document.find("benchmarks");
  if (rows == document.end() || !rows->is_array()) return measured;
  for (const auto& row : *rows) {
    if (!row.is_object()) continue;
    const auto group = row.find("compare_group"), sweep = row.find("sweep");
    if (group == row.end() || sweep == row.end() || !group->is_string() || !sweep->is_string())
      continue;
    const auto value = row.find(sweep->get<std::string>());
    if (value != row.end() && value->is_number() && value->get<double>() >= 0)
      measured[group->get<std::string>()].insert(
          static_cast<std::uint64_t>(std::llround(value->get<double>())));
  }
  return measured;
}

double number_or_zero(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : 0.0;
}

}  // namespace

RefinementSizes refinement_sizes(const nlohmann::json& document,
                                 const std::map<std::string, std::string>& refinable) {
  RefinementSizes next;
  const auto analysis = document.find("analysis");
  if (analysis == document.end() || !analysis->is_object() || !analysis->contains("crossovers"))
    return next;
  const auto& crossovers = (*analysis)["crossovers"];
  if (!crossovers.is_array()) return next;
  const auto measured = measured_values(document);
  for (const auto& c : crossovers) {
    if (!c.is_object() || c.value("kind", "") != "crossover" || c.value("located", false)) continue;
    const auto family = refinable.find(c.value("family", ""));
    if (family == refinable.end() || c.value("sweep", "") != family->second) continue;
    const double low = number_or_zero(c, "bracket_low"), high = number_or_zero(c, "bracket_high");
    if (!(low > 0 && high > low) || crossover_located(low, high)) continue;
    const auto group = c.value("compare_group", "");
    const auto done = measured.find(group);
    const auto is_new = [&](double a, double b, std::uint64_t v) {
      return static_cast<double>(v) > a && static_cast<double>(v) < b &&
             (done == measured.end() || !done->second.count(v));
    };
    const auto middle_of = [](double a, double b) {
      return static_cast<std::uint64_t>(std::llround(std::sqrt(a * b)));
    };
    std::vector<std::uint64_t> picks;
    const auto middle = middle_of(low, high);
    if (is_new(low, high, middle)) {
      picks.push_back(middle);
    } else if (static_cast<double>(middle) > low && static_cast<double>(middle) < high) {
      // Measured, yet no point of the crossover (a case too unsteady to pair, say): both halves'
      // middles.
      for (auto pick : {middle_of(low, static_cast<double>(middle)),
                        middle_of(static_cast<double>(middle), high)})
        if (is_new(low, high, pick)) picks.push_back(pick);
    }
    auto& values = next[group];
    for (auto pick : picks)
      if (std::find(values.begin(), values.end(), pick) == values.end()) values.push_back(pick);
    if (values.empty()) next.erase(group);
  }
  for (auto& [group, values] : next) std::sort(values.begin(), values.end());
  return next;
}

std::string format_refinement(const RefinementSizes& sizes) {
  std::string text;
  for (const auto& [group, values] : sizes)
    text += fmt::format("{}{}={}", text.empty() ? "" : ";", group, fmt::join(values, ","));
  return text;
}

RefinementSizes parse_refinement(const std::string& text) {
  RefinementSizes sizes;
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(
        fmt::format("'{}' is not GROUP=VALUE,VALUE;GROUP=VALUE: {}", text, why));
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find(';', start), text.size());
    const auto item = text.substr(start, end - start);
    const auto equals = item.rfind('=');
    if (equals == std::string::npos || equals == 0)
      throw bad(fmt::format("'{}' has no group", item));
    auto& values = sizes[item.substr(0, equals)];
    std::size_t at = equals + 1;
    while (at <= item.size()) {
      const auto comma = std::min(item.find(',', at), item.size());
      const auto number = item.substr(at, comma - at);
      if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos ||
          number.size() > 15)
        throw bad(fmt::format("'{}' is not a whole number", number));
      const auto value = std::stoull(number);
      if (value == 0) throw bad("a value is 0");
      values.push_back(value);
      at = comma + 1;
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    start = end + 1;
  }
  return sizes;
}

}  // namespace offloadbench
