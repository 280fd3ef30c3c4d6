#include "harness/analysis/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/results/results.h"
#include "harness/results/sizes.h"

namespace offloadbench {

double median_of(const nlohmann::json& results, const std::string& name, const std::string& field) {
  std::vector<double> values;
  for (const auto& row : iteration_rows(results))
    if (row.value("name", "") == name && !row.value("skipped", false) && row.contains(field) &&
        row[field].is_number())
      values.push_back(row[field].get<double>());
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const auto n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

namespace {
std::string rate_text(double value, const char* unit) {
  if (value >= 1e12) return fmt::format("{:.2f} T{}", value / 1e12, unit);
  if (value >= 1e9) return fmt::format("{:.2f} G{}", value / 1e9, unit);
  if (value >= 1e6) return fmt::format("{:.2f} M{}", value / 1e6, unit);
  return fmt::format("{:.3g} {}", value, unit);
}
}  // namespace

void print_summary(std::FILE* out, const nlohmann::json& results) {
  // Headline rows: per label, the largest size measured.
  std::map<std::string, nlohmann::json> headline;
  std::map<std::string, int> skip_reasons;
  int rows = 0, skipped = 0, invalid = 0;
  for (const auto& row : iteration_rows(results)) {
    ++rows;
    if (row.value("skipped", false)) {
      ++skipped;
      ++skip_reasons[row.value("skip_reason", "")];
      continue;
    }
    if (row["validated"] == false) ++invalid;
    if (!row.contains("headline")) continue;
    const auto label = row["headline"].get<std::string>();
    auto& best = headline[label];
    if (best.is_null() || row.value("bytes", 0.0) > best.value("bytes", 0.0)) best = row;
  }
  fmt::print(out, "offloadbench: {} measurements, {} skipped, {} invalid\n", rows, skipped, invalid);
  for (const auto& [label, row] : headline) {
    const auto name = row["name"].get<std::string>();
    const bool flops = row.contains("flop_per_second");
    const double rate = median_of(results, name, flops ? "flop_per_second" : "bytes_per_second");
    std::string line = fmt::format("  {:<34} {}", label, rate_text(rate, flops ? "FLOP/s" : "B/s"));
    // Where the size is: the swept parameter when the row names one (n = 1024), else its bytes.
    const std::string sweep = row.value("sweep", "");
    if (!sweep.empty() && sweep != "bytes" && row.contains(sweep) && row[sweep].is_number())
      line += fmt::format(" at {} = {}", sweep, row[sweep].dump());
    else if (row.contains("bytes"))
      line += fmt::format(" at {}", format_size(row["bytes"].get<std::uint64_t>()));
    const double ceiling = row.value("ceiling_bytes_per_second", 0.0);
    if (ceiling > 0 && !flops) {
      const bool link = row.value("op", "") == "device_copy";
      line += fmt::format(" ({:.0f}% of the {})", 100 * rate / ceiling,
                          link ? "link's theoretical rate" : "theoretical ceiling");
    }
    fmt::print(out, "{}\n", line);
  }
  for (const auto& [reason, count] : skip_reasons) fmt::print(out, "  skipped {:>4}: {}\n", count, reason);
  // The analysis's findings (crossovers, fits, overlap, ceilings), when the file has been analysed.
  if (results.contains("analysis") && results["analysis"].contains("headlines")) {
    fmt::print(out, "findings:\n");
    for (const auto& line : results["analysis"]["headlines"]) fmt::print(out, "  {}\n", line.get<std::string>());
  }
}

}  // namespace offloadbench
