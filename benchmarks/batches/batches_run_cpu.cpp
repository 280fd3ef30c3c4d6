// The batches family's CPU rows: the CPU normalize (kernels/normalize_image.h) of one batch from
// host uint8 to host fp32, on 1 or all threads, by the wall clock. The output buffer is made once
// and first written by the case's own threads (in the check), as a data loader reusing its batch
// buffer would; PyTorch's expression allocates a new one per batch (lab/tools/torch-normalize).
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/batches/batches_cases.h"
#include "benchmarks/transfer/transfer_extra_cases.h"  // fill_seeded_bytes
#include "harness/system_info.h"

namespace offloadbench {

MeasuredCase setup_cpu_normalize(const CpuNormalizeCase& c) {
  const std::uint64_t elements = c.image.elements() * c.batch;
  if (auto problem = host_fit_problem(elements * (1 + sizeof(float))); !problem.empty())
    return MeasuredCase::skip(problem);
  struct Buffers {
    std::vector<std::uint8_t> pixels;
    std::unique_ptr<float[]> normalized;  // not zeroed: the first write is the case's own
  };
  auto b = std::make_shared<Buffers>();
  b->pixels.resize(elements);
  fill_seeded_bytes(b->pixels.data(), elements, kBatchSeed);
  b->normalized.reset(new float[elements]);
  const auto params = default_normalize_params(c.image.channels);
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [b, c, params] {
    cpu::normalize_hwc_to_chw(b->normalized.get(), b->pixels.data(), c.batch, c.image.height,
                              c.image.width, params, c.threads);
    benchmark::DoNotOptimize(b->normalized.get());
    benchmark::ClobberMemory();
  };
  m.verify = [b, c, params, call = m.call] {
    call();
    return check_normalized(b->normalized.get(), NormalizedType::fp32, b->pixels.data(), c.batch,
                            c.image.height, c.image.width, params);
  };
  m.verify_warms_up = true;
  m.work.bytes = static_cast<double>(elements) * (1 + sizeof(float));
  m.work.items = c.batch;
  m.work.items_rate = "images_per_second";
  return made;
}

}  // namespace offloadbench
