#include "harness/injected_slowdown.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace offloadbench {

namespace {

std::vector<SlowdownRule>& rules_in_use() {
  static std::vector<SlowdownRule> rules;
  return rules;
}

}  // namespace

std::vector<SlowdownRule> parse_injected_slowdown(const std::string& text) {
  std::vector<SlowdownRule> rules;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string entry = text.substr(begin, end - begin);
    const std::size_t equals = entry.rfind('=');
    std::string number = equals == std::string::npos ? "" : entry.substr(equals + 1);
    if (!number.empty() && number.back() == '%') number.pop_back();
    char* parsed_end = nullptr;
    const double percent = number.empty() ? NAN : std::strtod(number.c_str(), &parsed_end);
    if (equals == std::string::npos || equals == 0 ||
        parsed_end != number.c_str() + number.size() || !(percent >= 0 && percent <= 1000))
      throw std::invalid_argument(
          fmt::format("has an entry '{}' that is not <substring>=<percent> (0 to 1000)", entry));
    rules.push_back({entry.substr(0, equals), percent / 100});
    begin = end + 1;
  }
  return rules;
}

double slowdown_for(const std::vector<SlowdownRule>& rules, const std::string& case_name) {
  for (const auto& rule : rules)
    if (case_name.find(rule.substring) != std::string::npos) return rule.fraction;
  return 0;
}

void set_injected_slowdown(std::vector<SlowdownRule> rules) { rules_in_use() = std::move(rules); }

const std::vector<SlowdownRule>& injected_slowdown() { return rules_in_use(); }

double injected_slowdown_fraction(const std::string& case_name) {
  return slowdown_for(rules_in_use(), case_name);
}

double DeviceSlowdownInjector::delay_for(int calls) const {
  if (!(last_per_call_ > 0) || calls <= 0) return 0;
  return fraction_ * std::min(last_per_call_, 2 * shortest_per_call_) * calls;
}

void DeviceSlowdownInjector::measured(int calls, double device_seconds, double delay_seconds) {
  if (calls <= 0) return;
  const double own = (device_seconds - delay_seconds) / calls;
  if (!(own > 0)) return;  // a delay longer than the whole batch: nothing to learn from it
  last_per_call_ = own;
  if (shortest_per_call_ == 0 || own < shortest_per_call_) shortest_per_call_ = own;
}

DeviceSlowdownInjector& device_slowdown_injector(const std::string& case_name, double fraction) {
  static std::map<std::string, DeviceSlowdownInjector>
      injectors;  // one per slowed case, a few at most
  auto [it, made] = injectors.try_emplace(case_name, fraction);
  if (!made && it->second.fraction() != fraction) it->second = DeviceSlowdownInjector(fraction);
  return it->second;
}

void spin_for_seconds(double seconds) {
  if (!(seconds > 0)) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {}
}

}  // namespace offloadbench
