#include "cli/benchmark_flags.h"

#include <cmath>
#include <regex>

#include <fmt/format.h>

#include "cli/commands.h"

namespace offloadbench::cli {

namespace {

enum class FlagValue { boolean, positive_number, time_unit, regex, color, key_values, any };

struct AllowedFlag {
  const char* name;
  FlagValue value;
};

// Google Benchmark 1.7.1's flags that leave the results file as offloadbench writes it.
constexpr AllowedFlag kAllowed[] = {
    {"benchmark_filter", FlagValue::regex},
    {"benchmark_min_time", FlagValue::positive_number},
    {"benchmark_min_warmup_time", FlagValue::positive_number},
    {"benchmark_enable_random_interleaving", FlagValue::boolean},
    {"benchmark_display_aggregates_only", FlagValue::boolean},
    {"benchmark_counters_tabular", FlagValue::boolean},
    {"benchmark_color", FlagValue::color},
    {"benchmark_perf_counters", FlagValue::any},
    {"benchmark_context", FlagValue::key_values},
    {"benchmark_time_unit", FlagValue::time_unit},
};

// Flags that would lose rows, change the file's format or write elsewhere: what to use instead.
constexpr std::pair<const char*, const char*> kRefused[] = {
    {"benchmark_repetitions", "use --repetitions"},
    {"benchmark_out", "use --out"},
    {"benchmark_out_format", "the results file is always JSON"},
    {"benchmark_format", "offloadbench writes its own results file and progress line"},
    {"benchmark_report_aggregates_only", "the results file keeps every repetition"},
    {"benchmark_list_tests", "use offloadbench list"},
};

std::string value_problem(FlagValue kind, const std::string& value, bool given) {
  switch (kind) {
    case FlagValue::boolean:
      if (!given) return "";
      for (const char* ok : {"true", "false", "1", "0", "yes", "no"})
        if (value == ok) return "";
      return "expects true or false";
    case FlagValue::positive_number: {
      std::size_t used = 0;
      double v = NAN;
      try {
        v = std::stod(value, &used);
      } catch (const std::exception&) { used = 0; }
      return used == value.size() && used > 0 && std::isfinite(v) && v > 0
                 ? ""
                 : "expects a positive number of seconds";
    }
    case FlagValue::time_unit:
      return value == "ns" || value == "us" || value == "ms" || value == "s"
                 ? ""
                 : "expects ns, us, ms or s";
    case FlagValue::regex:
      try {
        std::regex(value.rfind('-', 0) == 0 ? value.substr(1) : value, std::regex::extended);
        return "";
      } catch (const std::regex_error&) { return "is not a valid regular expression"; }
    case FlagValue::color:
      return value == "auto" || value_problem(FlagValue::boolean, value, given).empty()
                 ? ""
                 : "expects auto, true or false";
    case FlagValue::key_values:
      return std::regex_match(value, std::regex("[^,=]+=[^,]*(,[^,=]+=[^,]*)*"))
                 ? ""
                 : "expects key=value[,key=value]";
    case FlagValue::any:
      return "";
  }
  return "";
}

}  // namespace

void check_benchmark_flags(const std::vector<std::string>& flags) {
  for (const auto& flag : flags) {
    if (flag.rfind("--benchmark_", 0) != 0)
      throw UsageError(
          fmt::format("'{}' after -- is not a Google Benchmark flag (--benchmark_...)", flag));
    const auto equals = flag.find('=');
    const std::string name =
        flag.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
    const std::string value = equals == std::string::npos ? "" : flag.substr(equals + 1);
    for (const auto& [refused, instead] : kRefused)
      if (name == refused)
        throw UsageError(fmt::format("'{}' is not allowed after --: {}", flag, instead));
    const AllowedFlag* known = nullptr;
    for (const auto& allowed : kAllowed)
      if (name == allowed.name) known = &allowed;
    if (!known)
      throw UsageError(
          fmt::format("'{}' is not a Google Benchmark flag offloadbench passes on", flag));
    if (auto problem = value_problem(known->value, value, equals != std::string::npos);
        !problem.empty())
      throw UsageError(fmt::format("'{}': {}", flag, problem));
  }
}

}  // namespace offloadbench::cli
