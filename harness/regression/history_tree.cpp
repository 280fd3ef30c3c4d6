#include "harness/regression/history_tree.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>
#include <tuple>

#include <fmt/format.h>

#include "harness/regression/compare.h"
#include "harness/results/results.h"

namespace offloadbench {

namespace {

// Subfolders of `directory` (links to folders included), sorted by name.
std::vector<std::filesystem::path> subfolders(const std::string& directory) {
  namespace fs = std::filesystem;
  std::error_code error;
  std::vector<fs::path> folders;
  fs::directory_iterator it(directory, error);
  for (const fs::directory_iterator end; !error && it != end; it.increment(error)) {
    std::error_code status_error;
    if (it->is_directory(status_error) && !status_error) folders.push_back(it->path());
  }
  if (error)
    throw ResultsError(
        fmt::format("{}: cannot list this directory: {}", directory, error.message()));
  std::sort(folders.begin(), folders.end());
  return folders;
}

bool has_results_files(const std::string& folder) {
  try {
    return !history_files(folder).empty();
  } catch (const ResultsError&) { return false; }
}

std::string percent(double change) { return fmt::format("{:+.1f}%", 100 * change); }

}  // namespace

bool is_history_tree(const std::string& directory) {
  std::vector<std::string> problems;
  if (!history_files(directory, &problems).empty() || !problems.empty()) return false;
  for (const auto& folder : subfolders(directory))
    if (has_results_files(folder.string())) return true;
  return false;
}

std::string machine_label(const History& h) {
  const auto& f = h.machine_fingerprint;
  auto text = [&](const char* key) {
    return f.is_object() && f.contains(key) && f[key].is_string() ? f[key].get<std::string>()
                                                                  : std::string("?");
  };
  std::string gpus;
  if (f.is_object() && f.contains("gpu_models") && f["gpu_models"].is_array())
    for (const auto& model : f["gpu_models"])
      if (model.is_string()) gpus += (gpus.empty() ? "" : ", ") + model.get<std::string>();
  const std::string host = h.hostname.empty() ? "?" : h.hostname;
  if (gpus.empty()) return fmt::format("{} · {} · no GPU", host, text("cpu_model"));
  return fmt::format("{} · {} · driver {}", host, gpus, text("driver"));
}

HistoryTree load_history_tree(const std::string& directory, const std::string& metric,
                              bool allow_different_machines, const ChangePointOptions& options) {
  HistoryTree tree;
  tree.directory = directory;
  for (const auto& folder : subfolders(directory)) {
    if (!has_results_files(folder.string())) continue;  // a folder of something else (plots, notes)
    try {
      auto history = load_history(folder.string(), metric, allow_different_machines, options);
      auto label = machine_label(history);
      tree.machines.push_back({folder.filename().string(), std::move(label), std::move(history)});
    } catch (const ResultsError& e) {
      tree.ignored.push_back(fmt::format("{}: {}", folder.filename().string(), e.what()));
    }
  }
  if (tree.machines.empty())
    throw ResultsError(fmt::format(
        "{}: no machine folder with finished results files{}", directory,
        tree.ignored.empty() ? std::string() : " (left out: " + tree.ignored.front() + ")"));
  tree.shared_steps = shared_steps(tree.machines);
  return tree;
}

std::vector<SharedStep> shared_steps(const std::vector<MachineHistory>& machines) {
  std::map<std::string, std::size_t> measured;  // benchmark → machines whose history has it
  std::map<std::tuple<std::string, std::string, bool>, SharedStep> steps;
  for (const auto& m : machines)
    for (const auto& b : m.history.benchmarks) {
      ++measured[b.name];
      for (const auto& cp : b.change_points) {
        auto& step = steps[{b.name, cp.git_sha, cp.slower}];
        if (step.machines.empty()) {
          step = {b.name, cp.git_sha, cp.previous_git_sha, cp.slower, {}, 0, cp.change, cp.change};
        }
        if (step.machines.empty() || step.machines.back() != m.machine)
          step.machines.push_back(m.machine);
        step.smallest_change = std::min(step.smallest_change, cp.change);
        step.largest_change = std::max(step.largest_change, cp.change);
      }
    }
  std::vector<SharedStep> shared;
  for (auto& [key, step] : steps) {
    if (step.machines.size() < 2 || step.git_sha.empty())
      continue;  // without a SHA there is no "same commit"
    step.machines_measured = measured[step.benchmark];
    shared.push_back(std::move(step));
  }
  std::stable_sort(shared.begin(), shared.end(), [](const SharedStep& a, const SharedStep& b) {
    return std::make_tuple(!a.slower, b.machines.size(), a.benchmark) <
           std::make_tuple(!b.slower, a.machines.size(), b.benchmark);
  });
  return shared;
}

void print_history_tree(std::FILE* out, const HistoryTree& tree, bool every_benchmark) {
  const std::string metric = tree.machines.front().history.metric;
  fmt::print(out, "history of {}: {} machines, metric {}\n", printable(tree.directory),
             tree.machines.size(), metric);
  for (const auto& why : tree.ignored) fmt::print(out, "  left out {}\n", printable(why));
  // (benchmark, sha, direction) → shared, so each machine's table can point at the line above.
  std::map<std::tuple<std::string, std::string, bool>, const SharedStep*> shared;
  for (const auto& s : tree.shared_steps) shared[{s.benchmark, s.git_sha, s.slower}] = &s;
  fmt::print(out, "steps on several machines: {}\n", tree.shared_steps.size());
  for (const auto& s : tree.shared_steps) {
    std::string machines;
    for (const auto& m : s.machines) machines += (machines.empty() ? "" : ", ") + printable(m);
    const auto change =
        s.smallest_change == s.largest_change
            ? percent(s.smallest_change)
            : fmt::format("{} to {}", percent(s.smallest_change), percent(s.largest_change));
    fmt::print(out, "  {:<6} {} appeared in {} (after {}) on {} of {} machines ({}): {}\n",
               s.slower ? "SLOWER" : "FASTER", printable(s.benchmark), printable(s.git_sha),
               printable(s.previous_git_sha), s.machines.size(), s.machines_measured, machines,
               change);
  }
  std::size_t total = 0,
              blind = 0;  // blind: machines with benchmarks that could not show a step yet
  for (const auto& m : tree.machines) {
    const auto& h = m.history;
    fmt::print(out, "machine {} ({}): {} runs from {} to {}, {} benchmarks\n", printable(m.machine),
               printable(m.label), h.runs.size(), printable(h.runs.front().start_time),
               printable(h.runs.back().start_time), h.benchmarks.size());
    for (const auto& why : h.ignored) fmt::print(out, "  ignored {}\n", printable(why));
    std::size_t steps = 0;
    for (const auto& b : h.benchmarks) {
      if (b.change_points.empty() && every_benchmark)
        fmt::print(out, "  {:<6} {:>7}  {}\n", "-", "", printable(b.name));
      for (const auto& cp : b.change_points) {
        ++steps;
        const auto it = shared.find({b.name, cp.git_sha, cp.slower});
        const std::string where =
            it == shared.end()
                ? fmt::format("at {} (git {}, after {}): median {} -> {}", printable(cp.start_time),
                              printable(cp.git_sha), printable(cp.previous_git_sha),
                              format_metric(cp.before, metric), format_metric(cp.after, metric))
                : fmt::format("in {}, on {} machines (above)", printable(cp.git_sha),
                              it->second->machines.size());
        fmt::print(out, "  {:<6} {:>7}  {} {}\n", cp.slower ? "SLOWER" : "FASTER",
                   percent(cp.change), printable(b.name), where);
      }
    }
    const auto unseen = unseen_steps_note(h);
    if (steps == 0)
      fmt::print(out, "  no change point{}\n", unseen.empty() ? "" : "; " + unseen);
    else if (!unseen.empty())
      fmt::print(out, "  {}\n", unseen);
    total += steps;
    blind += !unseen.empty();
  }
  const auto& o = tree.machines.front().history.options;
  fmt::print(
      out,
      "history: {} change point(s) on {} machines, {} of them at one commit on several (min "
      "magnitude "
      "{:.0f}%, persisting {} runs){}\n",
      total, tree.machines.size(), tree.shared_steps.size(), 100 * o.min_magnitude, o.min_segment,
      blind > 0
          ? fmt::format(
                "; on {} machine(s) some benchmarks could not have shown such a step yet (above)",
                blind)
          : "");
}

nlohmann::json to_json(const HistoryTree& tree) {
  const auto& first = tree.machines.front().history;
  nlohmann::json machines = nlohmann::json::array(), shared = nlohmann::json::array();
  for (const auto& m : tree.machines) {
    auto entry = to_json(m.history);
    entry["machine"] = m.machine;
    entry["label"] = m.label;
    machines.push_back(std::move(entry));
  }
  for (const auto& s : tree.shared_steps)
    shared.push_back({{"benchmark", s.benchmark},
                      {"git_sha", s.git_sha},
                      {"previous_git_sha", s.previous_git_sha},
                      {"verdict", s.slower ? "SLOWER" : "FASTER"},
                      {"machines", s.machines},
                      {"machines_measured", s.machines_measured},
                      {"smallest_change", s.smallest_change},
                      {"largest_change", s.largest_change}});
  return without_non_finite({{"directory", tree.directory},
                             {"metric", first.metric},
                             {"higher_is_better", higher_is_better(first.metric)},
                             {"min_magnitude", first.options.min_magnitude},
                             {"min_segment", first.options.min_segment},
                             {"machines", machines},
                             {"shared_change_points", shared},
                             {"ignored", tree.ignored}});
}

}  // namespace offloadbench
