// The batches family's table of cases. Byte counting:
//   GPU rows   bytes = what crosses the bus host -> device: batch·H·W·C bytes of uint8, or 4× that
//              in fp32 for (a); ceiling = the link. images_per_second = batch / time per batch.
//   CPU rows   bytes = uint8 read + fp32 written (5 bytes per element, BabelStream's way); no
//   ceiling.
// Every GPU row's time runs from host uint8 to a normalized tensor on the device, synchronized.
#include "benchmarks/batches/batches_cases.h"

#include <fmt/format.h>

#include "benchmarks/property_table.h"
#include "harness/benchmark_case.h"
#include "harness/gpu_runner.h"
#include "harness/system_info.h"

namespace offloadbench {

std::string ImageShape::label() const { return fmt::format("{}x{}x{}", height, width, channels); }

namespace {
constexpr PlacementInfo kPlacementTable[] = {
    //                              name                   normalize_on_gpu  output
    {Placement::cpu_normalize_fp32, "cpu_normalize_fp32", false, NormalizedType::fp32},
    {Placement::gpu_normalize_fp32, "gpu_normalize_fp32", true, NormalizedType::fp32},
    {Placement::gpu_normalize_bf16, "gpu_normalize_bf16", true, NormalizedType::bf16},
    {Placement::gpu_normalize_fp16, "gpu_normalize_fp16", true, NormalizedType::fp16},
};
}  // namespace

const PlacementInfo& placement_info(Placement placement) {
  return row_for(kPlacementTable, &PlacementInfo::placement, placement, "kPlacementTable");
}
const char* to_string(Placement placement) { return placement_info(placement).name; }

std::uint64_t bus_bytes(const BatchToGpuCase& c) {
  const std::uint64_t elements = c.image.elements() * c.batch;
  return placement_info(c.placement).normalize_on_gpu ? elements : elements * sizeof(float);
}

// Small (CIFAR/ImageNet-downsampled), ImageNet training crops, one large grayscale frame (a
// camera).
std::vector<ImageShape> batch_images() { return {{64, 64, 3}, {224, 224, 3}, {1024, 1280, 1}}; }

std::vector<int> batch_sizes(bool quick) {
  if (quick) return {1, 4, 16, 64, 256};
  return {1, 2, 4, 8, 16, 32, 64, 128, 256};
}

namespace {

nlohmann::json image_fields(const ImageShape& image, int batch) {
  return {{"image", image.label()},
          {"height", image.height},
          {"width", image.width},
          {"channels", image.channels},
          {"batch", batch},
          {"sweep", "batch"},
          {"elements", image.elements() * batch}};
}

void register_gpu_rows(const RunConfig& config, const ImageShape& image, int batch) {
  const int all_threads = query_host_info().omp_threads;
  for (int device : config.gpu_devices)
    for (auto placement : kPlacements)
      for (auto memory : {HostMemoryKind::pageable, HostMemoryKind::pinned}) {
        const auto& info = placement_info(placement);
        BatchToGpuCase c{image, batch, placement, memory, info.normalize_on_gpu ? 0 : all_threads,
                         device};
        auto fields = image_fields(image, batch);
        fields.update({{"op", "batch_to_gpu"},
                       {"placement", info.name},
                       {"normalize_on", info.normalize_on_gpu ? "gpu" : "cpu"},
                       {"bus_type", info.normalize_on_gpu ? "uint8" : "fp32"},
                       {"output_type", to_string(info.output)},
                       {"host_memory", to_string(memory)},
                       {"bytes", bus_bytes(c)},
                       {"bytes_counted", "host to device"},
                       {"output_bytes", image.elements() * batch * element_bytes(info.output)},
                       {"device", device}});
        if (!info.normalize_on_gpu) fields["cpu_threads"] = all_threads;
        register_case(
            measured_case(fmt::format("batches/{}/{}/{}/batch:{}{}", image.label(), info.name,
                                      to_string(memory), batch, config.gpu_suffix(device)),
                          "batches", std::move(fields), Clock::host_wall,
                          [c] { return OFFLOADBENCH_GPU_RUNNER(setup_batch_to_gpu)(c); }));
      }
}

void register_cpu_rows(const RunConfig& config, const ImageShape& image, int batch) {
  if (config.quick && image.elements() * batch > kQuickCpuBatchBytes) return;
  const int all_threads = query_host_info().omp_threads;
  std::vector<int> thread_counts = {1};
  if (all_threads > 1) thread_counts.push_back(all_threads);
  for (int threads : thread_counts) {
    auto fields = image_fields(image, batch);
    fields.update({{"op", "cpu_normalize"},
                   {"placement", "cpu_normalize"},
                   {"output_type", "fp32"},
                   {"device", "cpu"},
                   {"cpu_threads", threads},
                   {"vector_level", cpu::normalize_vector_level()},
                   {"bytes", image.elements() * batch * (1 + sizeof(float))},
                   {"bytes_counted", "uint8 read + fp32 written"}});
    const CpuNormalizeCase c{image, batch, threads};
    register_case(measured_case(
        fmt::format("batches/{}/cpu_normalize/threads:{}/batch:{}", image.label(), threads, batch),
        "batches", std::move(fields), Clock::host_wall, [c] { return setup_cpu_normalize(c); }));
  }
}

}  // namespace

void register_batches_suite(const RunConfig& config) {
  for (const auto& image : batch_images())
    for (int batch : batch_sizes(config.quick)) {
      register_gpu_rows(config, image, batch);
      register_cpu_rows(config, image, batch);
    }
}

Suite batches_suite() {
  return {"batches",
          "what to send over the bus: CPU normalize + fp32 copy vs uint8 copy + GPU normalize, by "
          "image size and batch",
          register_batches_suite,
          "",  // image sizes and batches are fixed: --sizes is refused
          ""};
}

}  // namespace offloadbench
