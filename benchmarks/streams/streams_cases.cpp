// The streams suite's table of cases. Sizes: quick 64 MiB and 256 MiB, full 16 MiB … 1 GiB in 4×
// steps, or --sizes. Workload ratios ¼, 1, 4 (kernel time ÷ H2D time): transfer-bound to compute-
// bound. Quick mode keeps the K×C grid to the shapes that answer the targets; full runs all of it.
// Bytes: `bytes` per direction; pipelines count H2D + D2H (2·bytes) per iteration.
#include "benchmarks/streams/streams_cases.h"

#include <fmt/format.h>

#include "benchmarks/streams/streams_model.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_info.h"
#include "harness/gpu_runner.h"
#include "harness/results/sizes.h"

namespace offloadbench {

const char* to_string(StreamsOp op) {
  switch (op) {
    case StreamsOp::serial:
      return "serial";
    case StreamsOp::async:
      return "async";
    case StreamsOp::pipelined:
      return "pipelined";
    case StreamsOp::pipelined_best:
      return "pipelined_best";
    case StreamsOp::bidirectional:
      return "bidirectional";
    case StreamsOp::host_overlap:
      return "host_overlap";
  }
  return "unknown";
}

const char* to_string(IssueOrder order) {
  return order == IssueOrder::depth_first ? "depth_first" : "breadth_first";
}

StreamsCase StreamsCase::on(int gpu, std::uint64_t bytes_per_direction) const {
  StreamsCase c = *this;
  c.device = gpu;
  c.bytes = bytes_per_direction;
  return c;
}

StreamsCase StreamsCase::at_ratio(double kernel_over_h2d) const {
  StreamsCase c = *this;
  c.workload_ratio = kernel_over_h2d;
  return c;
}

StreamsCase StreamsCase::as(StreamsOp kind, HostMemoryKind memory) const {
  StreamsCase c = *this;
  c.op = kind;
  c.host_memory = memory;
  return c;
}

StreamsCase StreamsCase::pipelined(const PipelineShape& shape, HostMemoryKind memory) const {
  StreamsCase c = as(StreamsOp::pipelined, memory);
  c.streams = shape.streams;
  c.chunks = shape.chunks;
  c.order = shape.order;
  return c;
}

StreamsCase StreamsCase::best_of(std::vector<PipelineShape> shapes) const {
  StreamsCase c = as(StreamsOp::pipelined_best, HostMemoryKind::pinned);
  c.search = std::move(shapes);
  return c;
}

StreamsCase StreamsCase::bidirectional() const {
  StreamsCase c = as(StreamsOp::bidirectional, HostMemoryKind::pinned);
  c.workload_ratio = 0;  // no kernel
  c.streams = 2;
  return c;
}

StreamsCase StreamsCase::host_overlap(bool synchronous) const {
  StreamsCase c =
      as(StreamsOp::host_overlap, synchronous ? HostMemoryKind::pageable : HostMemoryKind::pinned);
  c.workload_ratio = 1.0;
  c.streams = 1;
  c.synchronous_api = synchronous;
  return c;
}

std::string streams_case_problem(const StreamsCase& c) {
  if (c.bytes == 0 || c.bytes % sizeof(float) != 0)
    return fmt::format("{} bytes is not a whole number of floats", c.bytes);
  const auto elements = c.bytes / sizeof(float);
  if (c.op == StreamsOp::pipelined) return pipeline_problem(elements, c.streams, c.chunks);
  if (c.op == StreamsOp::pipelined_best) {
    if (c.search.empty()) return "no pipeline shapes to search";
    for (const auto& shape : c.search)
      if (auto problem = pipeline_problem(elements, shape.streams, shape.chunks); !problem.empty())
        return problem;
  }
  return "";
}

MeasuredCase setup_streams_case(const StreamsCase& c, std::shared_ptr<StreamsWorkspaceSlot> slot) {
  if (auto problem = streams_case_problem(c); !problem.empty()) return MeasuredCase::skip(problem);
  return OFFLOADBENCH_GPU_RUNNER(setup_streams_gpu)(
      c, slot ? std::move(slot) : std::make_shared<StreamsWorkspaceSlot>());
}

std::string streams_case_name(const StreamsCase& c, const std::string& device_suffix) {
  std::string name = fmt::format("streams/{}", to_string(c.op));
  if (c.op == StreamsOp::host_overlap)
    name += c.synchronous_api ? "/sync_api" : "/async_api";
  else
    name += fmt::format("/{}", to_string(c.host_memory));
  if (c.op != StreamsOp::bidirectional) name += fmt::format("/ratio:{:g}", c.workload_ratio);
  if (c.op == StreamsOp::pipelined)
    name += fmt::format("/K:{}/C:{}/{}", c.streams, c.chunks, to_string(c.order));
  return name + "/" + format_size(c.bytes) + device_suffix;
}

namespace {

constexpr double kRatios[] = {0.25, 1.0, 4.0};

std::vector<std::uint64_t> streams_sizes(const RunConfig& config) {
  if (config.sizes) return *config.sizes;
  if (config.quick) return {64ull << 20, 256ull << 20};
  return {16ull << 20, 64ull << 20, 256ull << 20, 1ull << 30};
}

std::vector<PipelineShape> full_grid() {
  std::vector<PipelineShape> shapes;
  for (auto order : {IssueOrder::depth_first, IssueOrder::breadth_first})
    for (int k : {1, 2, 4, 8})
      for (int chunks : {4, 8, 16, 32, 64})
        if (k <= chunks) shapes.push_back({k, chunks, order});
  return shapes;
}

// Pinned pipelines registered per (size, ratio). Shapes are {K streams, C chunks, issue order}.
std::vector<PipelineShape> pinned_shapes(const RunConfig& config, double ratio) {
  if (!config.quick) return full_grid();
  if (ratio != 1.0) return {{4, 16, IssueOrder::depth_first}};
  return {{2, 8, IssueOrder::depth_first},
          {4, 16, IssueOrder::depth_first},
          {4, 16, IssueOrder::breadth_first},
          {4, 32, IssueOrder::depth_first},
          {4, 32, IssueOrder::breadth_first}};
}

// What pipelined_best tries in quick mode: the shapes that can get near the bound.
std::vector<PipelineShape> quick_search() {
  std::vector<PipelineShape> shapes;
  for (auto order : {IssueOrder::depth_first, IssueOrder::breadth_first})
    for (int k : {2, 4, 8})
      for (int chunks : {16, 32, 64}) shapes.push_back({k, chunks, order});
  return shapes;
}

std::vector<PipelineShape> pageable_shapes(const RunConfig& config) {
  if (config.quick) return {{4, 16, IssueOrder::depth_first}};
  return {{4, 16, IssueOrder::depth_first}, {4, 16, IssueOrder::breadth_first}};
}

std::string ratio_label(double ratio) {
  if (ratio == 1.0) return "balanced";
  return ratio < 1.0 ? "transfer-bound" : "compute-bound";
}

// Fields shared by every row; the bound is the device's, known at registration.
nlohmann::json base_fields(const StreamsCase& c) {
  nlohmann::json f = {{"op", to_string(c.op)}, {"host_memory", to_string(c.host_memory)},
                      {"bytes", c.bytes},      {"elements", c.bytes / sizeof(float)},
                      {"device", c.device},    {"bytes_counted", "h2d+d2h"}};
  const auto& gpus = gpu_inventory().gpus;
  const bool known = c.device >= 0 && static_cast<std::size_t>(c.device) < gpus.size();
  f["bound"] = known ? to_string(overlap_bound_for(gpus[c.device].async_engine_count)) : "unknown";
  if (c.op == StreamsOp::bidirectional) return f;
  f["workload_ratio"] = c.workload_ratio;
  f["workload"] = ratio_label(c.workload_ratio);
  f["compare_group"] = fmt::format("streams/fma_ratio:{:g}", c.workload_ratio);
  f["sweep"] = "bytes";
  return f;
}

nlohmann::json streams_fields(const StreamsCase& c) {
  auto f = base_fields(c);
  const bool pinned = c.host_memory == HostMemoryKind::pinned;
  switch (c.op) {
    case StreamsOp::serial:
      f.update({{"streams", 0},
                {"chunks", 1},
                {"view", pinned ? "gpu_pinned" : "gpu_pageable"},
                {"series", "serial"}});
      break;
    case StreamsOp::async:
      f.update(
          {{"streams", 1}, {"chunks", 1}, {"view", "gpu_pinned"}, {"series", "async one stream"}});
      break;
    case StreamsOp::pipelined:
      f.update({{"streams", c.streams},
                {"chunks", c.chunks},
                {"issue_order", to_string(c.order)},
                {"view", pinned ? "gpu_pinned_overlap" : "gpu_pageable"},
                {"series", fmt::format("K{} C{} {}", c.streams, c.chunks, to_string(c.order))}});
      if (!pinned) f["op"] = "pageable_pipelined";
      break;
    case StreamsOp::pipelined_best:  // streams, chunks and the order are counters: found at run
                                     // time
      f.update({{"view", "gpu_pinned_overlap"}, {"series", "best"}});
      break;
    case StreamsOp::bidirectional:
      f["streams"] = 2;
      break;
    case StreamsOp::host_overlap:
      f["api"] = c.synchronous_api ? "cudaMemcpy" : "cudaMemcpyAsync";
      f.erase("compare_group");
      f.erase("sweep");
      break;
  }
  return f;
}

struct Registration {
  StreamsCase c;
  std::string name;
  nlohmann::json fields;
};
using CaseTable = std::vector<Registration>;

void add(CaseTable& table, const StreamsCase& c, const std::string& suffix,
         const std::string& headline = "") {
  auto fields = streams_fields(c);
  if (!headline.empty()) fields["headline"] = headline;
  table.push_back({c, streams_case_name(c, suffix), std::move(fields)});
}

// Quick mode keeps pageable and best-of cases to the balanced workload, where the targets are.
void register_for(CaseTable& table, const RunConfig& config, int device, std::uint64_t bytes,
                  const std::string& suffix) {
  const auto pinned = HostMemoryKind::pinned, pageable = HostMemoryKind::pageable;
  const StreamsCase sized = StreamsCase{}.on(device, bytes);
  for (double ratio : kRatios) {
    const bool balanced = ratio == 1.0, every = balanced || !config.quick;
    const auto headline = [balanced](const char* label) { return balanced ? label : ""; };
    const StreamsCase at = sized.at_ratio(ratio);
    add(table, at.as(StreamsOp::serial, pinned), suffix,
        headline("streams serial, pinned, balanced"));
    if (every)
      add(table, at.as(StreamsOp::serial, pageable), suffix,
          headline("streams serial, pageable, balanced"));
    add(table, at.as(StreamsOp::async, pinned), suffix);
    for (const auto& shape : pinned_shapes(config, ratio))
      add(table, at.pipelined(shape, pinned), suffix);
    if (!every) continue;
    for (const auto& shape : pageable_shapes(config))
      add(table, at.pipelined(shape, pageable), suffix,
          shape.order == IssueOrder::depth_first ? headline("streams pageable pipelined, balanced")
                                                 : "");
    add(table, at.best_of(config.quick ? quick_search() : full_grid()), suffix,
        headline("streams best pipelined, balanced"));
  }
  add(table, sized.bidirectional(), suffix, "streams bidirectional, pinned");
  // What the host can do meanwhile: naive synchronous code from pageable memory vs async from
  // pinned.
  for (bool synchronous : {true, false}) add(table, sized.host_overlap(synchronous), suffix);
}

}  // namespace

void register_streams_suite(const RunConfig& config) {
  CaseTable table;
  for (int device : config.gpu_devices) {
    for (auto bytes : streams_sizes(config))
      register_for(table, config, device, bytes, config.gpu_suffix(device));
  }
  if (table.empty()) return;
  table.back().c.release_after = true;
  // One workspace for the suite: its cases run in this order, a size group at a time.
  auto slot = std::make_shared<StreamsWorkspaceSlot>();
  for (auto& r : table)
    register_case(measured_case(r.name, "streams", std::move(r.fields), Clock::device_events,
                                [c = r.c, slot] { return setup_streams_case(c, slot); }));
}

Suite streams_suite() {
  return {"streams",
          "sync vs async copies, copy/compute overlap over K streams x C chunks vs the copy-engine "
          "bound",
          register_streams_suite, "bytes moved each way per stream workload", ""};
}

}  // namespace offloadbench
