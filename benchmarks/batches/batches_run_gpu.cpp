// The batches family's GPU rows: one call takes one batch from host uint8 to a normalized tensor on
// the device and waits for it (cudaStreamSynchronize), timed by the wall clock, so (a) the CPU
// normalize + fp32 copy and (b, c) the uint8 copy + GPU kernel are timed alike, end to end. Beside
// the calls, (b, c) time their kernel alone by CUDA events (kernel_time_s, counted as BabelStream
// counts: the uint8 bytes read + the output written), whose share of the DRAM peak the copy hides.
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/batches/batches_cases.h"
#include "benchmarks/transfer/transfer_extra_cases.h"  // fill_seeded_bytes
#include "harness/cuda/event_timer.h"
#include "harness/cuda/gpu_checks.h"
#include "harness/gpu_info.h"
#include "harness/system_info.h"
#include "kernels/cuda/cuda_raii.h"

namespace offloadbench {

namespace {

struct BatchBuffers {
  HostBuffer
      pixels;  // uint8 HWC: pageable for (a) (the CPU reads it), the case's memory kind for (b, c)
  HostBuffer staging;     // (a) only: the CPU's fp32 output, in the case's memory kind, copied from
  DeviceBuffer uploaded;  // (b, c) only: the uint8 batch on the device
  DeviceBuffer normalized;  // the result: [batch][C][H][W] of the output type
  CudaStream stream;
};

}  // namespace

MeasuredCase setup_batch_to_gpu(const BatchToGpuCase& c) {
  const auto& info = placement_info(c.placement);
  const std::uint64_t elements = c.image.elements() * c.batch;
  const std::uint64_t output_bytes = elements * element_bytes(info.output);
  const std::uint64_t device_bytes = output_bytes + (info.normalize_on_gpu ? elements : 0);
  if (auto problem = gpu_problem(c.device, device_bytes); !problem.empty())
    return MeasuredCase::skip(problem);
  const std::uint64_t host_bytes = elements + (info.normalize_on_gpu ? 0 : output_bytes);
  if (auto problem = host_fit_problem(host_bytes); !problem.empty())
    return MeasuredCase::skip(problem);

  auto b = std::make_shared<BatchBuffers>();
  b->pixels =
      HostBuffer(elements, info.normalize_on_gpu ? c.host_memory : HostMemoryKind::pageable);
  fill_seeded_bytes(b->pixels.data(), elements, kBatchSeed);
  if (!info.normalize_on_gpu)
    b->staging = HostBuffer(output_bytes, c.host_memory);
  else
    b->uploaded = DeviceBuffer(elements);
  b->normalized = DeviceBuffer(output_bytes);
  const auto params = default_normalize_params(c.image.channels);

  MeasuredCase made;
  Measurement& m = made.measurement;
  const int height = c.image.height, width = c.image.width, batch = c.batch;
  if (info.normalize_on_gpu) {
    m.call = [b, elements, type = info.output, batch, height, width, params] {
      CUDA_CHECK(cudaMemcpyAsync(b->uploaded.data(), b->pixels.data(), elements,
                                 cudaMemcpyHostToDevice, b->stream.get()));
      gpu::normalize_hwc_to_chw(b->normalized.data(), type, b->uploaded.as<std::uint8_t>(), batch,
                                height, width, params, b->stream.get());
      b->stream.synchronize();
    };
  } else {
    m.call = [b, output_bytes, threads = c.cpu_threads, batch, height, width, params] {
      cpu::normalize_hwc_to_chw(b->staging.as<float>(), b->pixels.as<std::uint8_t>(), batch, height,
                                width, params, threads);
      CUDA_CHECK(cudaMemcpyAsync(b->normalized.data(), b->staging.data(), output_bytes,
                                 cudaMemcpyHostToDevice, b->stream.get()));
      b->stream.synchronize();
    };
  }
  // The device output is poisoned (all-ones bytes: NaN in every type), one call runs, and what it
  // left on the device is read back and checked against the double reference the CPU twin is tested
  // on.
  m.verify = [b, output_bytes, type = info.output, batch, height, width, params, call = m.call] {
    CUDA_CHECK(cudaMemset(b->normalized.data(), 0xff, output_bytes));
    CUDA_CHECK(cudaDeviceSynchronize());  // the memset ran on the legacy stream; the case's stream
                                          // does not wait
    call();
    std::vector<unsigned char> back(output_bytes);
    CUDA_CHECK(cudaMemcpy(back.data(), b->normalized.data(), output_bytes, cudaMemcpyDeviceToHost));
    return check_normalized(back.data(), type, b->pixels.as<std::uint8_t>(), batch, height, width,
                            params);
  };
  m.work.bytes = static_cast<double>(bus_bytes(c));
  m.work.items = c.batch;
  m.work.items_rate = "images_per_second";
  m.bytes_ceiling = link_ceiling(c.device);
  if (info.normalize_on_gpu) {
    SideRate kernel;
    kernel.rate_counter = "kernel_bytes_per_second";
    kernel.time_counter = "kernel_time_s";
    kernel.bytes = static_cast<double>(elements + output_bytes);
    kernel.time = [b, type = info.output, batch, height, width, params] {
      EventTimerOptions on_stream;
      on_stream.stream = b->stream.get();
      EventTimer timer(on_stream);
      return median_of(5, [&] {
        return time_once(timer, [&] {
          gpu::normalize_hwc_to_chw(b->normalized.data(), type, b->uploaded.as<std::uint8_t>(),
                                    batch, height, width, params, b->stream.get());
        });
      });
    };
    m.side_rates = {kernel};
    m.report = [peak = gpu_inventory().gpus.at(c.device).dram_bytes_per_second](
                   benchmark::State& state, const Totals& totals) {
      if (peak > 0)
        state.counters["kernel_dram_efficiency"] =
            totals.side_bytes_per_second("kernel_bytes_per_second") / peak;
    };
  }
  return made;
}

}  // namespace offloadbench
