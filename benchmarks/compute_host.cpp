// The compute family's CPU views: the CPU twins from kernels/ with one thread or all of them, timed
// by the host wall clock. Arrays are first touched by the threads that later stream them.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "benchmarks/compute.h"
#include "harness/benchmark_case.h"
#include "harness/current_case.h"
#include "harness/injected_slowdown.h"
#include "harness/sizes.h"
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

// Page-aligned storage that is not touched here: the first write (by the case's own threads) places
// the pages. Large arrays ask for transparent huge pages, which makes that first touch much cheaper.
class UntouchedArray {
 public:
  explicit UntouchedArray(std::size_t bytes) {
    const std::size_t alignment = bytes >= kHugePage ? kHugePage : 64;
    bytes_ = round_up(std::max<std::size_t>(bytes, 1), alignment);
    data_ = std::aligned_alloc(alignment, bytes_);
    if (!data_) throw std::bad_alloc();
    if (alignment == kHugePage) madvise(data_, bytes_, MADV_HUGEPAGE);  // advice only: failure is harmless
  }
  ~UntouchedArray() { std::free(data_); }
  UntouchedArray(const UntouchedArray&) = delete;
  UntouchedArray& operator=(const UntouchedArray&) = delete;
  template <typename T> T* as() const { return static_cast<T*>(data_); }

 private:
  static constexpr std::size_t kHugePage = 2u << 20;
  static std::size_t round_up(std::size_t bytes, std::size_t to) { return (bytes + to - 1) / to * to; }
  void* data_;
  std::size_t bytes_;
};

}  // namespace

// x and y hold the inputs (never written by any op), z the output of whichever op ran last.
struct ElementwiseHostArrays {
  explicit ElementwiseHostArrays(std::size_t bytes) : x(bytes), y(bytes), z(bytes) {}
  UntouchedArray x, y, z;
};

std::shared_ptr<ReusedArrays<ElementwiseHostArrays>> make_elementwise_host_reuse() {
  return std::make_shared<ReusedArrays<ElementwiseHostArrays>>();
}

namespace {

template <typename T>
void run_elementwise_cpu_typed(benchmark::State& state, const ElementwiseCase& c,
                               ReusedArrays<ElementwiseHostArrays>& reuse) {
  const auto& info = op_info(c.op);
  const std::size_t n = c.elements;
  // parse_size caps --sizes at kMaxSize, so 3·n·sizeof(T) cannot wrap; a case built otherwise skips.
  if (n > kMaxSize) return skip_case(state, fmt::format("{} elements is more than any machine holds", n));
  if (auto problem = host_memory_problem(3 * n * sizeof(T)); !problem.empty()) return skip_case(state, problem);
  // Same type, size and threads: same arrays, first-touched and filled once by these threads.
  const auto key = fmt::format("{}/{}/threads:{}", to_string(c.type), n, c.threads);
  ElementwiseHostArrays& arrays = reuse.get(key, [&] {
    auto made = std::make_unique<ElementwiseHostArrays>(n * sizeof(T));
    fill_elementwise_inputs(made->x.as<T>(), made->y.as<T>(), n, c.threads);
    return made;
  });
  T *x = arrays.x.as<T>(), *y = arrays.y.as<T>(), *z = arrays.z.as<T>();
  double sum = 0;
  if (!reuse.checked(info.name)) {
    run_elementwise_op_cpu(c.op, z, &sum, x, y, n, c.threads);
    if (auto problem = check_elementwise_output(c.op, z, sum, n); !problem.empty())
      return invalidate_case(state, problem);
    reuse.set_checked(info.name);
  }
  mark_validated(state);

  SlowdownInjector injected(injected_slowdown_fraction(current_case_name()));  // regression self-test hook
  const auto start = WallClock::now();
  for (auto _ : state) {
    const InjectedSlowdown slowed(injected);
    run_elementwise_op_cpu(c.op, z, &sum, x, y, n, c.threads);
    benchmark::DoNotOptimize(sum);
    benchmark::ClobberMemory();
  }
  report_host_seconds(state, std::chrono::duration<double>(WallClock::now() - start).count());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * info.arrays_moved * n * sizeof(T)));
}

}  // namespace

void run_elementwise_cpu(benchmark::State& state, const ElementwiseCase& c,
                         ReusedArrays<ElementwiseHostArrays>& reuse) {
  if (c.type == ElementType::fp32) run_elementwise_cpu_typed<float>(state, c, reuse);
  else run_elementwise_cpu_typed<double>(state, c, reuse);
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

  SlowdownInjector injected(injected_slowdown_fraction(current_case_name()));  // regression self-test hook
  const auto start = WallClock::now();
  for (auto _ : state) {
    const InjectedSlowdown slowed(injected);
    cpu::matmul(out.data(), a.data(), b.data(), c.m, c.n, c.k, c.threads);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  report_host_seconds(state, std::chrono::duration<double>(WallClock::now() - start).count());
  set_flops_per_iteration(state, 2.0 * c.m * c.n * c.k);
}

}  // namespace offloadbench
