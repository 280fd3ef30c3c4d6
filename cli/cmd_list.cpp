// `offloadbench list`: every suite, its benchmarks and their parameters, without running anything.
#include <fmt/format.h>

#include "benchmarks/peer/peer_cases.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "harness/benchmark_case.h"

namespace offloadbench::cli {

namespace {
struct ListOptions {
  std::string suites = "all";
  bool full = false;
  bool as_json = false;
  std::string names;  // "nvbandwidth": each case beside the nvbandwidth testcase it matches
};

int execute_list(const ListOptions& o) {
  RunConfig config;
  config.quick = !o.full;
  config.gpu_devices = {0};
  nlohmann::json listing = nlohmann::json::array();
  for (auto* suite : select_suites(o.suites)) {
    clear_registered_cases();
    suite->register_cases(config);
    if (!o.as_json) fmt::print("{} — {} ({} cases)\n", suite->name, suite->description, registered_cases().size());
    for (const auto& c : registered_cases()) {
      // min_time_s (0: the run's --benchmark_min_time) lets scripts/gpu-check --plan price each case.
      const auto nvbandwidth = nvbandwidth_testcase(c.fields);
      if (o.as_json) {
        listing.push_back({{"name", c.name}, {"fields", c.fields}, {"min_time_s", c.min_time_s}});
        if (!o.names.empty()) listing.back()["nvbandwidth"] = nvbandwidth;
      } else if (!o.names.empty()) {
        fmt::print("  {:<58} {}\n", c.name, nvbandwidth.empty() ? "-" : nvbandwidth);
      } else {
        fmt::print("  {:<58} {}\n", c.name, c.fields.dump());
      }
    }
  }
  if (o.as_json) fmt::print("{}\n", listing.dump(2));
  return 0;
}
}  // namespace

Command add_list_command(CLI::App& app) {
  auto o = std::make_shared<ListOptions>();
  auto* list = app.add_subcommand("list", "List suites, their benchmarks and parameters");
  list->add_option("--suite", o->suites, "Comma-separated suites, or all")->default_str("all");
  list->add_flag("--full", o->full, "List the full sweep instead of the quick one");
  list->add_flag("--json", o->as_json, "Print as JSON");
  list->add_option("--names", o->names, "nvbandwidth: show each case beside the nvbandwidth testcase it matches "
                                        "('-' where none does)")
      ->check(CLI::IsMember({"nvbandwidth"}));
  return {list, [o] { return execute_list(*o); }};
}

}  // namespace offloadbench::cli
