// `offloadbench list`: every suite and its benchmarks without running anything. One line per group
// of cases (a compare group, or cases whose names differ only in their last part: the size), with
// its views, its sizes ascending, and what will be skipped on this machine and why; every case
// with its fields behind --json.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "benchmarks/peer/peer_cases.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"
#include "harness/results/sizes.h"

namespace offloadbench::cli {

namespace {
struct ListOptions {
  std::string suites = "all";
  bool full = false;
  bool as_json = false;
  std::string names;  // "nvbandwidth": each case beside the nvbandwidth testcase it matches
};

struct CaseGroup {
  std::string key;
  std::vector<std::string> views;                     // in registration order
  std::vector<std::pair<double, std::string>> sizes;  // (value to sort by, label)
  std::string sweep;                                  // what the sizes count, when the rows say
  int cases = 0;
  std::map<std::string, int> skipped;  // reason -> cases
};

// "compute/triad/fp32/gpu_pinned/64Mi/gpu:1" -> ("compute/triad/fp32/gpu_pinned", "64Mi"); a kernel
// variant's suffix ("/kernel:four_per_thread") goes too: its series names it.
std::pair<std::string, std::string> split_last(std::string name) {
  for (bool erased = true; erased;) {
    erased = false;
    for (const char* suffix : {"/gpu:", "/kernel:"}) {
      const auto at = name.rfind(suffix);
      if (at != std::string::npos && name.find('/', at + 1) == std::string::npos)
        name.erase(at), erased = true;
    }
  }
  const auto slash = name.rfind('/');
  if (slash == std::string::npos) return {name, ""};
  return {name.substr(0, slash), name.substr(slash + 1)};
}

// What a case's size sorts by: its sweep field, else its bytes, else its label read as a size.
double size_value(const nlohmann::json& fields, const std::string& label) {
  const auto sweep = fields.value("sweep", std::string());
  for (const auto& key : {sweep, std::string("bytes")})
    if (!key.empty() && fields.contains(key) && fields[key].is_number())
      return fields[key].get<double>();
  try {
    return static_cast<double>(parse_size(label.substr(label.find(':') + 1)));
  } catch (const std::exception&) {
    return -1;  // not a size: kept in registration order, before the sizes
  }
}

std::vector<CaseGroup> group_cases(const std::vector<CaseSpec>& cases) {
  std::vector<CaseGroup> groups;
  std::map<std::string, std::size_t> index;
  for (const auto& c : cases) {
    auto [stem, label] = split_last(c.name);
    const auto compare_group = c.fields.value("compare_group", std::string());
    const auto series = c.fields.value("series", std::string());
    const auto key =
        compare_group.empty() ? stem : compare_group + (series.empty() ? "" : " " + series);
    auto [it, added] = index.emplace(key, groups.size());
    if (added) groups.push_back({key, {}, {}, c.fields.value("sweep", std::string()), 0, {}});
    auto& g = groups[it->second];
    ++g.cases;
    const auto view = c.fields.value("view", std::string());
    if (!view.empty() && std::find(g.views.begin(), g.views.end(), view) == g.views.end())
      g.views.push_back(view);
    const std::pair<double, std::string> size{size_value(c.fields, label), label};
    if (!label.empty() && std::find(g.sizes.begin(), g.sizes.end(), size) == g.sizes.end())
      g.sizes.push_back(size);
    if (c.fields.contains("device") && c.fields["device"].is_number_integer())
      if (const auto reason = gpu_unavailable_reason(c.fields["device"].get<int>());
          !reason.empty())
        ++g.skipped[reason];
  }
  for (auto& g : groups)
    std::stable_sort(g.sizes.begin(), g.sizes.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  return groups;
}

std::string group_line(const CaseGroup& g) {
  std::vector<std::string> labels;
  for (const auto& [value, label] : g.sizes) labels.push_back(label);
  std::string line = fmt::format("  {}", g.key);
  if (!g.views.empty()) line += fmt::format(" — {}", fmt::join(g.views, ", "));
  if (!labels.empty())
    line += fmt::format(" — {}{}", g.sweep.empty() ? "" : g.sweep + " ", fmt::join(labels, ", "));
  line += fmt::format(" ({} case{})", g.cases, g.cases == 1 ? "" : "s");
  for (const auto& [reason, count] : g.skipped)
    line += fmt::format(" [skipped here: {}{}]",
                        count == g.cases ? "" : fmt::format("{} of them, ", count), reason);
  return line;
}

int execute_list(const ListOptions& o) {
  RunConfig config;
  config.quick = !o.full;
  config.gpu_devices = {0};
  nlohmann::json listing = nlohmann::json::array();
  for (auto* suite : select_suites(o.suites)) {
    clear_registered_cases();
    suite->register_cases(config);
    if (!o.as_json)
      fmt::print("{} — {} ({} cases{})\n", suite->name, suite->description,
                 registered_cases().size(),
                 suite->sizes_meaning.empty() ? "; fixed sweeps"
                                              : "; --sizes sets " + suite->sizes_meaning);
    for (const auto& c : registered_cases()) {
      // min_time_s (0: the run's --benchmark_min_time) lets lab/tools/gpu-check --plan price each
      // case.
      const auto nvbandwidth = nvbandwidth_testcase(c.fields);
      if (o.as_json) {
        listing.push_back({{"name", c.name}, {"fields", c.fields}, {"min_time_s", c.min_time_s}});
        if (!o.names.empty()) listing.back()["nvbandwidth"] = nvbandwidth;
      } else if (!o.names.empty()) {
        fmt::print("  {:<58} {}\n", c.name, nvbandwidth.empty() ? "-" : nvbandwidth);
      }
    }
    if (!o.as_json && o.names.empty())
      for (const auto& g : group_cases(registered_cases())) fmt::print("{}\n", group_line(g));
  }
  if (o.as_json) fmt::print("{}\n", listing.dump(2));
  return 0;
}
}  // namespace

Command add_list_command(CLI::App& app) {
  auto o = std::make_shared<ListOptions>();
  auto* list =
      app.add_subcommand("list",
                         "List suites and their benchmarks: one line per group (views, sizes "
                         "ascending, what is skipped here); every case with --json");
  list->add_option("--suite", o->suites, "Comma-separated suites, or all")->default_str("all");
  list->add_flag("--full", o->full, "List the full sweep instead of the quick one");
  list->add_flag("--json", o->as_json, "Every case with its fields, as JSON");
  list->add_option("--names", o->names,
                   "nvbandwidth: show each case beside the nvbandwidth testcase it matches "
                   "('-' where none does)")
      ->check(CLI::IsMember({"nvbandwidth"}));
  return {list, [o] { return execute_list(*o); }};
}

}  // namespace offloadbench::cli
