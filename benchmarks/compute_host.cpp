// The compute family's CPU views: the CPU twins from kernels/ with one thread or all of them, timed
// by the host wall clock. Arrays are first touched by the threads that later stream them.
#include <chrono>
#include <memory>
#include <vector>

#include "benchmarks/compute.h"
#include "harness/benchmark_case.h"
#include "kernels/elementwise.h"
#include "kernels/matmul.h"

namespace offloadbench {

namespace {

using WallClock = std::chrono::steady_clock;

template <typename T>
void run_elementwise_op_cpu(ElementwiseOp op, T* z, double* sum, const T* x, const T* y, std::size_t n, int threads) {
  const T s = static_cast<T>(op_info(op).scalar);
  switch (op) {
    case ElementwiseOp::copy: return cpu::copy(z, x, n, threads);
    case ElementwiseOp::scale: return cpu::scale(z, x, s, n, threads);
    case ElementwiseOp::add: return cpu::add(z, x, y, n, threads);
    case ElementwiseOp::triad: return cpu::triad(z, x, y, s, n, threads);
    case ElementwiseOp::dot: return cpu::dot(sum, x, y, n, threads);
    case ElementwiseOp::add_scalar: return cpu::add_scalar(z, x, s, n, threads);
  }
}

// Uninitialised storage: the first write (by the case's own threads) places the pages.
template <typename T>
std::unique_ptr<T[]> untouched_array(std::size_t n) {
  return std::unique_ptr<T[]>(new T[n]);
}

template <typename T>
void run_elementwise_cpu_typed(benchmark::State& state, const ElementwiseCase& c) {
  const auto& info = op_info(c.op);
  const std::size_t n = c.elements;
  const int arrays = info.inputs + (info.writes_array ? 1 : 0);
  if (auto problem = host_memory_problem(arrays * n * sizeof(T)); !problem.empty()) return skip_case(state, problem);
  auto x = untouched_array<T>(n);
  auto y = info.inputs == 2 ? untouched_array<T>(n) : nullptr;
  auto z = info.writes_array ? untouched_array<T>(n) : nullptr;
  fill_elementwise_inputs(x.get(), y.get(), n, c.threads);
  double sum = 0;
  run_elementwise_op_cpu(c.op, z.get(), &sum, x.get(), y.get(), n, c.threads);  // also first-touches z
  if (auto problem = check_elementwise_output(c.op, z.get(), sum, n); !problem.empty())
    return invalidate_case(state, problem);
  mark_validated(state);

  const auto start = WallClock::now();
  for (auto _ : state) {
    run_elementwise_op_cpu(c.op, z.get(), &sum, x.get(), y.get(), n, c.threads);
    benchmark::DoNotOptimize(sum);
    benchmark::ClobberMemory();
  }
  report_host_seconds(state, std::chrono::duration<double>(WallClock::now() - start).count());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * info.arrays_moved * n * sizeof(T)));
}

}  // namespace

void run_elementwise_cpu(benchmark::State& state, const ElementwiseCase& c) {
  if (c.type == ElementType::fp32) run_elementwise_cpu_typed<float>(state, c);
  else run_elementwise_cpu_typed<double>(state, c);
}

void run_matmul_cpu(benchmark::State& state, const MatmulCase& c) {
  const std::size_t a_count = static_cast<std::size_t>(c.m) * c.k, b_count = static_cast<std::size_t>(c.k) * c.n,
                    c_count = static_cast<std::size_t>(c.m) * c.n;
  if (auto problem = host_memory_problem((a_count + b_count + c_count) * sizeof(float)); !problem.empty())
    return skip_case(state, problem);
  std::vector<float> a(a_count), b(b_count), out(c_count);
  fill_exact_matrix(a.data(), a_count, 1);
  fill_exact_matrix(b.data(), b_count, 2);
  // One thread count for the whole case, so the timed calls do not switch OpenBLAS's pool.
  BlasThreads threads(c.threads);
  cpu::matmul(out.data(), a.data(), b.data(), c.m, c.n, c.k, c.threads);
  if (auto problem = sampled_matmul_mismatches(out.data(), a.data(), b.data(), c.m, c.n, c.k,
                                               input_roundoff(GemmPrecision::fp32));
      !problem.empty())
    return invalidate_case(state, problem);
  mark_validated(state);

  const auto start = WallClock::now();
  for (auto _ : state) {
    cpu::matmul(out.data(), a.data(), b.data(), c.m, c.n, c.k, c.threads);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  report_host_seconds(state, std::chrono::duration<double>(WallClock::now() - start).count());
  set_flops_per_iteration(state, 2.0 * c.m * c.n * c.k);
}

}  // namespace offloadbench
