// Elementwise ops (BabelStream's set, add-a-scalar and axpby), each defined once below as a small
// struct: its name, inputs, BabelStream byte weight, scalars and per-element math, which runs on
// the host and the device. The CPU twin (elementwise_cpu.cpp, OpenMP) and the CUDA kernel
// (elementwise.cu) are generic over the op and instantiated for every op in ElementwiseOps, for
// float and double; cpu::elementwise / gpu::elementwise pick one by op and type. The inputs the
// benchmarks start from and the check of their outputs (elementwise_check.cpp) use the same math in
// double as the reference. Adding an op: its enum value, its struct, its place in ElementwiseOps.
#pragma once
#include <array>
#include <cstddef>
#include <string>

#ifdef __CUDACC__
#define OFFLOADBENCH_HOST_DEVICE __host__ __device__
#else
#define OFFLOADBENCH_HOST_DEVICE
#endif

struct CUstream_st;  // cudaStream_t without the CUDA headers, so CPU-only code can include this

namespace offloadbench {

enum class ElementwiseOp { copy, scale, add, triad, dot, add_scalar, axpby };

struct ElementwiseOpInfo {
  ElementwiseOp op;
  const char* name;
  int inputs;         // arrays read: 1 (x) or 2 (x, y)
  bool writes_array;  // false for a reduction (dot): its output is one double, Σ apply(x[i], y[i])
                      // summed in double
  int arrays_moved;   // BabelStream's weight: bytes = arrays_moved · n · sizeof(T)
  double a, b;        // the op's scalars (0 where unused), rounded to T where it runs
};

// ---- the ops: z[i] = apply(x[i], y[i], a, b); one-input ops never read y ----
// In BabelStream's terms in the comments; in our buffers every op reads x (and y) and writes z.

struct CopyOp {  // c = a
  static constexpr ElementwiseOpInfo info{ElementwiseOp::copy, "copy", 1, true, 2, 0, 0};
  template <typename T>
  OFFLOADBENCH_HOST_DEVICE static T apply(T x, T, T, T) {
    return x;
  }
};

struct ScaleOp {  // b = s·c
  static constexpr ElementwiseOpInfo info{ElementwiseOp::scale, "scale", 1, true, 2, 0.4, 0};
  template <typename T>
  OFFLOADBENCH_HOST_DEVICE static T apply(T x, T, T a, T) {
    return a * x;
  }
};

struct AddOp {  // c = a + b
  static constexpr ElementwiseOpInfo info{ElementwiseOp::add, "add", 2, true, 3, 0, 0};
  template <typename T>
  OFFLOADBENCH_HOST_DEVICE static T apply(T x, T y, T, T) {
    return x + y;
  }
};

struct TriadOp {  // a = b + s·c
  static constexpr ElementwiseOpInfo info{ElementwiseOp::triad, "triad", 2, true, 3, 0.4, 0};
  template <typename T>
  OFFLOADBENCH_HOST_DEVICE static T apply(T x, T y, T a, T) {
    return x + a * y;
  }
};

// sum = Σ a·b, each term rounded once in T, summed in double (a float accumulator cannot sum 2^28
// terms); the CPU's fp32 loop first sums runs of kDotFp32TermsPerLane terms per lane in fp32
// (elementwise_cpu.cpp, bounded in tolerance.h). Not the exact product in double: widening both
// inputs took two conversions per element and held the CPU loop at 59 GB/s from L2 against 88 with
// one (numpy's sdot: 91-100; AVX-512).
struct DotOp {
  static constexpr ElementwiseOpInfo info{ElementwiseOp::dot, "dot", 2, false, 2, 0, 0};
  template <typename T>
  OFFLOADBENCH_HOST_DEVICE static double apply(T x, T y, T, T) {
    return static_cast<double>(x * y);
  }
};

struct AddScalarOp {  // y = x + 10
  static constexpr ElementwiseOpInfo info{
      ElementwiseOp::add_scalar, "add_scalar", 1, true, 2, 10.0, 0};
  template <typename T>
  OFFLOADBENCH_HOST_DEVICE static T apply(T x, T, T a, T) {
    return x + a;
  }
};

// z = a·x + b·y: the shape of an optimizer's update (p ← p − lr·g) and of a scaled residual; not in
// BabelStream. Scalars exact in fp32, so the benchmarks' inputs give exact outputs.
struct AxpbyOp {
  static constexpr ElementwiseOpInfo info{ElementwiseOp::axpby, "axpby", 2, true, 3, 0.75, -1.25};
  template <typename T>
  OFFLOADBENCH_HOST_DEVICE static T apply(T x, T y, T a, T b) {
    return a * x + b * y;
  }
};

template <typename... Ops>
struct ElementwiseOpList {};
// Every op, in the enum's order (checked below): the twins, the tables and the checks are made from
// it.
using ElementwiseOps =
    ElementwiseOpList<CopyOp, ScaleOp, AddOp, TriadOp, DotOp, AddScalarOp, AxpbyOp>;

template <typename Make, typename... Ops>
constexpr auto per_op_of(ElementwiseOpList<Ops...>, Make make) {
  return std::array{make(Ops{})...};
}
// make(Op{}) for every op, indexed by ElementwiseOp: how the cpu::, gpu:: and check tables are
// built.
template <typename Make>
constexpr auto per_elementwise_op(Make make) {
  return per_op_of(ElementwiseOps{}, make);
}

inline constexpr auto kElementwiseOpInfos =
    per_elementwise_op([](auto op) { return decltype(op)::info; });

constexpr bool in_enum_order(const decltype(kElementwiseOpInfos)& ops) {
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (static_cast<std::size_t>(ops[i].op) != i) return false;
  return true;
}
static_assert(in_enum_order(kElementwiseOpInfos),
              "ElementwiseOps must list the ops in ElementwiseOp's order");

// The op's row; throws std::out_of_range for a value outside the enum.
inline const ElementwiseOpInfo& op_info(ElementwiseOp op) {
  return kElementwiseOpInfos.at(static_cast<std::size_t>(op));
}

// One call's operands. Every array has n elements; z is overwritten (=), never accumulated into; y
// is read by two-input ops only; a reduction writes *sum instead of z (on the GPU: one device
// double, zeroed by the launcher). The GPU functions take device pointers.
template <typename T>
struct ElementwiseArgs {
  T* z = nullptr;
  double* sum = nullptr;
  const T* x = nullptr;
  const T* y = nullptr;
  T a = 0, b = 0;
  std::size_t n = 0;
};

// The operands of `op` with its own scalars (its info's a and b, rounded to T).
template <typename T>
ElementwiseArgs<T> elementwise_args(ElementwiseOp op, T* z, double* sum, const T* x, const T* y,
                                    std::size_t n) {
  const auto& info = op_info(op);
  return {z, sum, x, y, static_cast<T>(info.a), static_cast<T>(info.b), n};
}

namespace cpu {
// Below this many elements an op runs on one thread whatever `threads` says: a fork costs
// microseconds, as long as the whole op there (2 threads made 1Ki-element ops 1.2-1.7x slower than
// numpy's one thread). The same grain as PyTorch's parallel_for (at::internal::GRAIN_SIZE).
inline constexpr std::size_t kElementwiseParallelGrain = 32768;
// Runs on `threads` OpenMP threads, one contiguous chunk each (one thread: no OpenMP runtime
// involved).
template <typename T>
using ElementwiseFunction = void (*)(const ElementwiseArgs<T>& args, int threads);
template <typename T>
ElementwiseFunction<T> elementwise(ElementwiseOp op);
}  // namespace cpu

// How the CUDA kernel walks the arrays, grid-strided: one element a thread per step (each access a
// coalesced 4- or 8-byte load), or four consecutive ones (16-byte loads and stores in fp32, two in
// fp64; the tail, and arrays not 16-byte aligned, one at a time). Both are tested against the CPU
// twin; the compute suite measures both (series "" and "four_per_thread").
enum class ElementwiseKernel { one_per_thread, four_per_thread };
inline const char* to_string(ElementwiseKernel kernel) {
  return kernel == ElementwiseKernel::four_per_thread ? "four_per_thread" : "one_per_thread";
}

namespace gpu {
// Enqueues on `stream`; the twin of cpu::elementwise(op).
template <typename T>
using ElementwiseFunction = void (*)(const ElementwiseArgs<T>& args, CUstream_st* stream);
template <typename T>
ElementwiseFunction<T> elementwise(ElementwiseOp op,
                                   ElementwiseKernel kernel = ElementwiseKernel::one_per_thread);
}  // namespace gpu

// ---- the benchmarks' inputs and the check of their outputs (elementwise_check.cpp) ----

// Inputs every elementwise case starts from, exact in fp32 (so the reference sees exactly the
// inputs the kernel saw). Filled with `threads` threads and a static schedule: each thread
// first-touches the chunk it later streams.
double elementwise_input_x(std::size_t i);
double elementwise_input_y(std::size_t i);
template <typename T>
void fill_elementwise_inputs(T* x, T* y, std::size_t n, int threads);
// "" when z (or, for a reduction, sum) is what `op` gives on those inputs, else what differs. The
// inputs repeat every 8633 elements; with period_stride k > 1 only every k-th such period of z is
// checked (and the last), for a process that runs code another process already checked in full.
template <typename T>
std::string check_elementwise_output(ElementwiseOp op, const T* z, double sum, std::size_t n,
                                     std::size_t period_stride = 1);

}  // namespace offloadbench
