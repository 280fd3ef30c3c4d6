// The compute family's CPU views: the CPU twins from kernels/ with one thread or all of them, timed
// by the host wall clock. Arrays are written first by the threads that later stream them.
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/compute/compute_cases.h"
#include "harness/benchmark_case.h"
#include "harness/host_blocks.h"
#include "harness/results/sizes.h"
#include "harness/system_info.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"

namespace offloadbench {

// x and y hold the inputs (never written by any op), z the output of whichever op ran last.
struct ElementwiseHostArrays {
  // Filled by the case's own threads (fill_elementwise_inputs); large arrays are kept between the
  // family's cases (harness/host_blocks.h), so that a process pays their first touch once.
  explicit ElementwiseHostArrays(std::size_t bytes) : x(bytes, 64), y(bytes, 64), z(bytes, 64) {}
  HostArray x, y, z;
};

namespace {

template <typename T>
MeasuredCase setup_elementwise_cpu_typed(const ElementwiseCase& c,
                                         ReusedArrays<ElementwiseHostArrays>& reuse) {
  const auto& info = op_info(c.op);
  const std::size_t n = c.elements;
  // parse_size caps --sizes at kMaxSize, so 3·n·sizeof(T) cannot wrap; a case built otherwise
  // skips.
  if (n > kMaxSize)
    return MeasuredCase::skip(fmt::format("{} elements is more than any machine holds", n));
  if (auto problem = host_fit_problem(3 * n * sizeof(T)); !problem.empty())
    return MeasuredCase::skip(problem);
  // Same type, size and threads: same arrays, first-touched and filled once by these threads.
  const auto key = fmt::format("{}/{}/threads:{}", to_string(c.type), n, c.threads);
  // A named maker: GCC 13's -Wdangling-reference flags a reference bound to a call with a temporary
  // argument.
  const auto make_arrays = [&] {
    auto made = std::make_unique<ElementwiseHostArrays>(n * sizeof(T));
    fill_elementwise_inputs(made->x.as<T>(), made->y.as<T>(), n, c.threads);
    return made;
  };
  ElementwiseHostArrays& arrays = reuse.get(key, make_arrays);
  T *x = arrays.x.as<T>(), *y = arrays.y.as<T>(), *z = arrays.z.as<T>();
  auto sum = std::make_shared<double>(0);
  const auto run = cpu::elementwise<T>(c.op);
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [run, args = elementwise_args(c.op, z, sum.get(), x, y, n), threads = c.threads, sum] {
    run(args, threads);
    benchmark::DoNotOptimize(*sum);
    benchmark::ClobberMemory();
  };
  m.verify = [op = c.op, z, sum, n, call = m.call] {
    call();
    return check_elementwise_output(op, z, *sum, n,
                                    check_outputs_in_full() ? 1 : kSampledCheckPeriodStride);
  };
  m.verify_warms_up = true;
  // x and y were filled at set-up; where z's pages were not touched then, verify's run places them.
  m.verify_only_checks = arrays.z.pages_touched();
  m.work.bytes = static_cast<double>(info.arrays_moved) * n * sizeof(T);
  return made;
}

}  // namespace

MeasuredCase setup_elementwise_cpu(const ElementwiseCase& c,
                                   ReusedArrays<ElementwiseHostArrays>& reuse) {
  if (c.type == ElementType::fp32) return setup_elementwise_cpu_typed<float>(c, reuse);
  return setup_elementwise_cpu_typed<double>(c, reuse);
}

MeasuredCase setup_matmul_cpu(const MatmulCase& c) {
  const std::size_t a_count = static_cast<std::size_t>(c.m) * c.k,
                    b_count = static_cast<std::size_t>(c.k) * c.n,
                    c_count = static_cast<std::size_t>(c.m) * c.n;
  if (auto problem = host_fit_problem((a_count + b_count + c_count) * sizeof(float));
      !problem.empty())
    return MeasuredCase::skip(problem);
  struct Matrices {
    explicit Matrices(int threads, std::size_t a_count, std::size_t b_count, std::size_t c_count)
        : threads(threads), a(a_count), b(b_count), out(c_count) {}
    BlasThreads
        threads;  // one thread count for the whole case: the timed calls never switch the pool
    std::vector<float> a, b, out;
  };
  auto mats = std::make_shared<Matrices>(c.threads, a_count, b_count, c_count);
  fill_exact_matrix(mats->a.data(), a_count, 1);
  fill_exact_matrix(mats->b.data(), b_count, 2);
  MeasuredCase made;
  Measurement& m = made.measurement;
  m.call = [mats, c] {
    cpu::matmul(mats->out.data(), mats->a.data(), mats->b.data(), c.m, c.n, c.k, c.threads,
                c.engine == GemmEngine::onednn ? CpuGemmLibrary::onednn : CpuGemmLibrary::openblas);
    benchmark::DoNotOptimize(mats->out.data());
    benchmark::ClobberMemory();
  };
  m.verify = [mats, c, call = m.call] {
    call();
    return sampled_matmul_mismatches(mats->out.data(), mats->a.data(), mats->b.data(), c.m, c.n,
                                     c.k, input_roundoff(GemmPrecision::fp32));
  };
  m.verify_warms_up = true;
  m.verify_only_checks = true;  // the matrices were written at set-up
  m.work.flops = 2.0 * c.m * c.n * c.k;
  return made;
}

}  // namespace offloadbench
