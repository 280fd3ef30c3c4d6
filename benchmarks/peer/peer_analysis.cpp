#include "benchmarks/peer/peer_analysis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/results/results.h"

namespace offloadbench {

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool per_gpu(const std::string& pattern) {
  return pattern != "one_way" && pattern != "bidirectional" && pattern != "latency";
}
}  // namespace

std::vector<PeerMatrix> peer_matrices(const nlohmann::json& results) {
  struct Collected {
    std::string pattern;
    double bytes = 0;
    std::set<int> gpus;
    std::map<std::pair<int, int>, std::vector<double>> values;
  };
  std::vector<std::string> order;
  std::map<std::string, Collected> by_testcase;
  for (const auto* row_pointer : iteration_row_pointers(results)) {
    const auto& row = *row_pointer;
    if (row.value("op", "") != "peer" || !row.contains("nvbandwidth") ||
        !row["nvbandwidth"].is_string())
      continue;
    const auto testcase = row["nvbandwidth"].get<std::string>();
    auto& c = by_testcase[testcase];
    if (c.pattern.empty()) order.push_back(testcase);
    c.pattern = row.value("pattern", "");
    if (row.contains("gpus") && row["gpus"].is_array())
      for (const auto& g : row["gpus"])
        if (g.is_number_integer()) c.gpus.insert(g.get<int>());
    if (row.value("skipped", false) || !row.contains("device") ||
        !row["device"].is_number_integer())
      continue;
    const bool latency = c.pattern == "latency";
    const char* field = latency ? "latency_ns" : "bytes_per_second";
    if (!row.contains(field) || !row[field].is_number()) continue;
    const double bytes = row.value("bytes", 0.0);
    if (bytes < c.bytes) continue;
    if (bytes > c.bytes) {  // a larger size replaces smaller ones
      c.values.clear();
      c.bytes = bytes;
    }
    const int gpu = row["device"].get<int>();
    const int peer =
        row.contains("peer") && row["peer"].is_number_integer() ? row["peer"].get<int>() : -1;
    const auto cell = per_gpu(c.pattern) ? std::make_pair(0, gpu) : std::make_pair(gpu, peer);
    c.values[cell].push_back(latency ? row[field].get<double>() : row[field].get<double>() / 1e9);
  }
  std::vector<PeerMatrix> matrices;
  for (const auto& testcase : order) {
    const auto& c = by_testcase[testcase];
    if (c.values.empty()) continue;
    PeerMatrix m;
    m.testcase = testcase;
    m.latency = c.pattern == "latency";
    m.one_row = per_gpu(c.pattern);
    m.gpus.assign(c.gpus.begin(), c.gpus.end());
    for (const auto& [cell, values] : c.values) {  // rows whose "gpus" field was missing still show
      if (!m.one_row && std::find(m.gpus.begin(), m.gpus.end(), cell.first) == m.gpus.end())
        m.gpus.push_back(cell.first);
      if (std::find(m.gpus.begin(), m.gpus.end(), cell.second) == m.gpus.end())
        m.gpus.push_back(cell.second);
    }
    std::sort(m.gpus.begin(), m.gpus.end());
    const auto index = [&](int gpu) {
      return std::find(m.gpus.begin(), m.gpus.end(), gpu) - m.gpus.begin();
    };
    const std::size_t rows = m.one_row ? 1 : m.gpus.size();
    m.cells.assign(rows,
                   std::vector<double>(m.gpus.size(), std::numeric_limits<double>::quiet_NaN()));
    for (const auto& [cell, values] : c.values)
      m.cells[m.one_row ? 0 : static_cast<std::size_t>(index(cell.first))]
             [static_cast<std::size_t>(index(cell.second))] = median(values);
    matrices.push_back(std::move(m));
  }
  return matrices;
}

void print_peer_matrices(std::FILE* out, const nlohmann::json& results) {
  for (const auto& m : peer_matrices(results)) {
    fmt::print(
        out, "{} ({}{}):\n", printable(m.testcase), m.latency ? "ns" : "GB/s",
        m.one_row ? ", one value per GPU" : ", row = the GPU that runs it, column = its peer");
    std::string header = "      ";
    for (int g : m.gpus) header += fmt::format("{:>10}", g);
    fmt::print(out, "{}\n", header);
    for (std::size_t r = 0; r < m.cells.size(); ++r) {
      std::string line = m.one_row ? "      " : fmt::format("  {:>4}", m.gpus[r]);
      for (double v : m.cells[r])
        line += std::isnan(v) ? fmt::format("{:>10}", "N/A") : fmt::format("{:>10.2f}", v);
      fmt::print(out, "{}\n", line);
    }
  }
}

FamilyAnalysis peer_analysis() {
  FamilyAnalysis family;
  family.family = "peer";
  family.print_summary = print_peer_matrices;
  return family;
}

}  // namespace offloadbench
