// The batches family's finding: per GPU, image size and host memory kind, the batch from which
// sending uint8 and normalizing on the GPU beats a CPU normalize and an fp32 copy, and by how much.
// speedup = time of (a) / time of the GPU placement (medians); its range takes the slowest against
// the fastest repetitions both ways, and the crossover search is analysis.h's find_crossover.
#include "benchmarks/batches/batches_analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"

namespace offloadbench::detail {

namespace {
constexpr const char* kCpuPlacement =
    "cpu_normalize_fp32";  // (a): the baseline every GPU placement races

// The first measured batch after the last one the GPU placement loses (the crossover's "from
// batch").
double first_winning_batch(const std::vector<SpeedupPoint>& points) {
  double first = points.front().size;
  for (std::size_t i = 0; i + 1 < points.size(); ++i)
    if (points[i].speedup < 1.0) first = points[i + 1].size;
  return first;
}
}  // namespace

nlohmann::json batches_crossovers(const std::vector<Measured>& cases) {
  // (device, elements per image, image, host memory) -> placement -> batch -> case: smallest images
  // first.
  using Key = std::tuple<int, double, std::string, std::string>;
  std::map<Key, std::map<std::string, std::map<double, const Measured*>>> curves;
  for (const auto& c : cases) {
    const auto& row = c.row();
    if (text(row, "op") != "batch_to_gpu" || !row.contains("device") ||
        !row["device"].is_number_integer())
      continue;
    const double batch = number(row, "batch");
    if (!std::isfinite(batch) || batch < 1) continue;
    const double elements = number(row, "height") * number(row, "width") * number(row, "channels");
    curves[{row["device"].get<int>(), std::isfinite(elements) ? elements : 0.0, text(row, "image"),
            text(row, "host_memory")}][text(row, "placement")][batch] = &c;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [key, by_placement] : curves) {
    const auto baseline = by_placement.find(kCpuPlacement);
    if (baseline == by_placement.end()) continue;
    for (const auto& [placement, by_batch] : by_placement) {
      if (placement == kCpuPlacement) continue;
      std::vector<SpeedupPoint> points;
      nlohmann::json point_rows = nlohmann::json::array();
      for (const auto& [batch, gpu] : by_batch) {
        const auto cpu = baseline->second.find(batch);
        if (cpu == baseline->second.end()) continue;
        const auto [gmin, gmax] = std::minmax_element(gpu->seconds.begin(), gpu->seconds.end());
        const auto [cmin, cmax] =
            std::minmax_element(cpu->second->seconds.begin(), cpu->second->seconds.end());
        const double gpu_s = median(gpu->seconds), cpu_s = median(cpu->second->seconds);
        points.push_back({batch, cpu_s / gpu_s, *cmin / *gmax, *cmax / *gmin});
        point_rows.push_back({{"batch", batch},
                              {"seconds", gpu_s},
                              {"baseline_seconds", cpu_s},
                              {"speedup", points.back().speedup},
                              {"speedup_low", points.back().speedup_low},
                              {"speedup_high", points.back().speedup_high}});
      }
      if (points.empty()) continue;
      const auto crossing = find_crossover(points);
      const auto& [device, elements, image, memory] = key;
      nlohmann::json j = {{"device", device},
                          {"image", image},
                          {"host_memory", memory},
                          {"placement", placement},
                          {"baseline", kCpuPlacement},
                          {"kind", to_string(crossing.kind)},
                          {"gpu_wins_somewhere_below", crossing.gpu_wins_somewhere_below},
                          {"smallest_batch", points.front().size},
                          {"largest_batch", points.back().size},
                          {"speedup_at_largest", points.back().speedup},
                          {"speedup_low_at_largest", points.back().speedup_low},
                          {"speedup_high_at_largest", points.back().speedup_high},
                          {"points", point_rows}};
      j["batch"] = crossing.kind == CrossoverKind::crossover ? nlohmann::json(crossing.size)
                                                             : nlohmann::json(nullptr);
      j["first_winning_batch"] =
          crossing.kind == CrossoverKind::crossover || crossing.kind == CrossoverKind::gpu_wins_all
              ? nlohmann::json(first_winning_batch(points))
              : nlohmann::json(nullptr);
      j["low"] = crossing.low ? nlohmann::json(*crossing.low) : nlohmann::json(nullptr);
      j["high"] = crossing.high ? nlohmann::json(*crossing.high) : nlohmann::json(nullptr);
      j["located"] = crossing.located;
      out.push_back(j);
    }
  }
  return out;
}

std::string batches_line(const nlohmann::json& c, bool name_device) {
  const auto image = c.value("image", std::string()),
             memory = c.value("host_memory", std::string());
  const auto kind = c.value("kind", std::string());
  const std::string who =
      fmt::format("{}{} batches from {} memory",
                  name_device ? fmt::format("GPU {} ", c["device"].dump()) : "", image, memory);
  const auto at_largest =
      fmt::format("{:.2f}× ({:.2f}–{:.2f}) at batch {:.0f}", c.value("speedup_at_largest", 0.0),
                  c.value("speedup_low_at_largest", 0.0), c.value("speedup_high_at_largest", 0.0),
                  c.value("largest_batch", 0.0));
  const auto batch = [&](const char* key, const char* otherwise) {
    return c[key].is_number() ? fmt::format("{:.3g}", c[key].get<double>())
                              : std::string(otherwise);
  };
  if (kind == "crossover")
    return fmt::format(
        "{}: send uint8 and normalize on the GPU from batch {:.0f} (crossing ≈ {}, range {}–{}); "
        "{}",
        who, c["first_winning_batch"].get<double>(), batch("batch", "?"),
        batch("low", "below the smallest"), batch("high", "beyond the largest"), at_largest);
  if (kind == "gpu_wins_all")
    return fmt::format(
        "{}: send uint8 and normalize on the GPU at every batch measured ({:.0f}–{:.0f}); {}", who,
        c.value("smallest_batch", 0.0), c.value("largest_batch", 0.0), at_largest);
  return fmt::format(
      "{}: a CPU normalize and an fp32 copy is as fast or faster up to batch {:.0f} (GPU normalize "
      "{})",
      who, c.value("largest_batch", 0.0), at_largest);
}

void batches_lines(const nlohmann::json& analysis, std::vector<std::string>& out) {
  if (!analysis.contains("batches")) return;
  bool several_devices = false;
  for (const auto& c : analysis["batches"]) several_devices |= c.value("device", 0) != 0;
  // One line per crossover of the fp32 GPU normalize (b); bf16/fp16 (c) are in the analysis block
  // and the chart.
  for (const auto& c : analysis["batches"])
    if (c.value("placement", std::string()) == "gpu_normalize_fp32")
      out.push_back(batches_line(c, several_devices));
}

}  // namespace offloadbench::detail

namespace offloadbench {

FamilyAnalysis batches_analysis() {
  FamilyAnalysis family;
  family.family = "batches";
  family.sections = {"batches"};
  family.gpu_sections = {"batches"};
  family.analyze = [](const std::vector<detail::Measured>& cases, const nlohmann::json&,
                      nlohmann::json& out) { out["batches"] = detail::batches_crossovers(cases); };
  family.lines = detail::batches_lines;
  return family;
}

}  // namespace offloadbench
