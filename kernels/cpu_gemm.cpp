#include "kernels/cpu_gemm.h"
#include "kernels/cpu_vector.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#if OFFLOADBENCH_HAVE_ONEDNN
#include <dnnl.hpp>

#include <map>
#include <tuple>
#include <unordered_map>
#endif

extern "C" char* openblas_get_config(void);
extern "C" int openblas_get_parallel(void);  // 0 sequential, 1 pthreads, 2 OpenMP

namespace offloadbench {

const char* to_string(CpuGemmLibrary library) {
  return library == CpuGemmLibrary::openblas ? "OpenBLAS" : "oneDNN";
}

const std::vector<CpuGemmLibrary>& cpu_gemm_libraries() {
  static const std::vector<CpuGemmLibrary> libraries {
    CpuGemmLibrary::openblas,
#if OFFLOADBENCH_HAVE_ONEDNN
        CpuGemmLibrary::onednn,
#endif
  };
  return libraries;
}

bool cpu_gemm_available(CpuGemmLibrary library) {
  for (auto l : cpu_gemm_libraries())
    if (l == library) return true;
  return false;
}

const char* openblas_threading() {
  switch (openblas_get_parallel()) {
    case 0:
      return "sequential";
    case 1:
      return "pthreads";
    case 2:
      return "OpenMP";
    default:
      return "unknown threading";
  }
}

std::string cpu_gemm_description(CpuGemmLibrary library) {
  if (library == CpuGemmLibrary::openblas)
    return fmt::format("{} ({})", openblas_get_config(), openblas_threading());
#if OFFLOADBENCH_HAVE_ONEDNN
  const dnnl_version_t* v = dnnl_version();
  const char* runtime = v->cpu_runtime == DNNL_RUNTIME_OMP   ? "OpenMP"
                        : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB"
                                                             : "other";
  return fmt::format("oneDNN {}.{}.{} ({})", v->major, v->minor, v->patch, runtime);
#else
  return "oneDNN (not in this build)";
#endif
}

std::string cpu_gemm_library_list() {
  std::string out;
  for (auto library : cpu_gemm_libraries())
    out += (out.empty() ? "" : " or ") + cpu_gemm_description(library);
  return out;
}

#if OFFLOADBENCH_HAVE_ONEDNN
namespace {
// C = A·Bᵀ (a layer's forward pass, B the (out, in) weights) through oneDNN's matmul primitive,
// whose brgemm kernels beat its dnnl_sgemm at the MLP's forward shapes (1.1-2.5x on one thread) but
// not at one row (4x slower) nor on the weight gradient's transposed A
// (lab/records/cpu-baseline.md), so only this form with at least 64 rows takes it. The epilogue
// goes in as the primitive's bias and ReLU post-op. A primitive is built once per shape, strides,
// epilogue and thread count, per thread, and kept.
bool onednn_forward_matmul(const CpuGemm& g) {
  if (g.trans_a || !g.trans_b || g.alpha != 1.0f || g.beta != 0.0f || g.M < 64) return false;
  using dnnl::memory;
  struct Prepared {
    dnnl::matmul primitive;
    memory a, b, c, bias;
    std::unordered_map<int, memory>
        args;  // handles to the four above, built once: no allocation per call
  };
  thread_local dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  thread_local dnnl::stream stream(engine);
  thread_local std::map<std::tuple<int, int, int, int, int, int, int, bool, bool>, Prepared>
      prepared;
  const bool has_bias = g.bias != nullptr;
  const auto key =
      std::make_tuple(g.M, g.N, g.K, g.lda, g.ldb, g.ldc, omp_get_max_threads(), has_bias, g.relu);
  auto found = prepared.find(key);
  if (found == prepared.end()) {
    const memory::desc a_md({g.M, g.K}, memory::data_type::f32, memory::dims{g.lda, 1});
    const memory::desc b_md({g.K, g.N}, memory::data_type::f32,
                            memory::dims{1, g.ldb});  // Bᵀ of (N,K) rows
    const memory::desc c_md({g.M, g.N}, memory::data_type::f32, memory::dims{g.ldc, 1});
    const memory::desc bias_md =
        has_bias ? memory::desc({1, g.N}, memory::data_type::f32, memory::dims{g.N, 1})
                 : memory::desc();
    dnnl::primitive_attr attr;
    if (g.relu) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      attr.set_post_ops(ops);
    }
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, bias_md, c_md), attr,
                                          engine);
    Prepared made{dnnl::matmul(pd),
                  memory(a_md, engine, DNNL_MEMORY_NONE),
                  memory(b_md, engine, DNNL_MEMORY_NONE),
                  memory(c_md, engine, DNNL_MEMORY_NONE),
                  memory(bias_md, engine, DNNL_MEMORY_NONE),
                  {}};
    made.args = {{DNNL_ARG_SRC, made.a}, {DNNL_ARG_WEIGHTS, made.b}, {DNNL_ARG_DST, made.c}};
    if (has_bias) made.args.emplace(DNNL_ARG_BIAS, made.bias);
    found = prepared.emplace(key, std::move(made)).first;
  }
  Prepared& p = found->second;
  p.a.set_data_handle(const_cast<float*>(g.A));
  p.b.set_data_handle(const_cast<float*>(g.B));
  p.c.set_data_handle(g.C);
  if (has_bias) p.bias.set_data_handle(const_cast<float*>(g.bias));
  p.primitive.execute(stream, p.args);
  stream.wait();
  return true;
}
}  // namespace
#endif

namespace {
// A one-row or one-column product as OpenBLAS's sgemv. OpenBLAS 0.3.21 (Debian 12) runs such a GEMM
// through its blocked path, packing all of op(B), which at the MLP's batch-1 shapes is 5-7x slower
// than its sgemv (lab/records/cpu-baseline.md). OpenBLAS 0.3.27 forwards these to GEMV itself
// (GEMM_GEMV_FORWARD).
void openblas_gemm_as_gemv(const CpuGemm& g) {
  const bool row = g.M == 1;  // C is 1 x N (else M x 1)
  const int length = row ? g.N : g.M, c_stride = row ? 1 : g.ldc;
  if (g.beta == 0.0f)  // beta 0 ignores what C held, NaN included, whatever sgemv's scaling does
    for (int i = 0; i < length; ++i) g.C[static_cast<std::ptrdiff_t>(i) * c_stride] = 0.0f;
  if (row) {  // c[n] = alpha Σ_k a[k] op(B)[k][n] + beta c[n]; op(B) is K x N
    const int a_stride = g.trans_a ? g.lda : 1;
    if (g.trans_b)  // B is stored N x K
      cblas_sgemv(CblasRowMajor, CblasNoTrans, g.N, g.K, g.alpha, g.B, g.ldb, g.A, a_stride, g.beta,
                  g.C, 1);
    else  // B is stored K x N
      cblas_sgemv(CblasRowMajor, CblasTrans, g.K, g.N, g.alpha, g.B, g.ldb, g.A, a_stride, g.beta,
                  g.C, 1);
  } else {  // c[m] = alpha Σ_k op(A)[m][k] b[k] + beta c[m]; op(A) is M x K
    const int b_stride = g.trans_b ? 1 : g.ldb;
    if (g.trans_a)  // A is stored K x M
      cblas_sgemv(CblasRowMajor, CblasTrans, g.K, g.M, g.alpha, g.A, g.lda, g.B, b_stride, g.beta,
                  g.C, g.ldc);
    else  // A is stored M x K
      cblas_sgemv(CblasRowMajor, CblasNoTrans, g.M, g.K, g.alpha, g.A, g.lda, g.B, b_stride, g.beta,
                  g.C, g.ldc);
  }
}
}  // namespace

namespace {
OFFLOADBENCH_VECTOR_CLONES void epilogue_rows(float* __restrict c, int ldc,
                                              const float* __restrict bias, bool relu, int rows,
                                              int N) {
  for (int i = 0; i < rows; ++i) {
    float* row = c + static_cast<std::ptrdiff_t>(i) * ldc;
    if (bias) {
#pragma omp simd
      for (int n = 0; n < N; ++n) row[n] += bias[n];
    }
    if (relu) {  // branch-free: a ReLU's sign is a coin flip
#pragma omp simd
      for (int n = 0; n < N; ++n) row[n] = row[n] > 0.0f ? row[n] : 0.0f;
    }
  }
}

void product(CpuGemmLibrary library, const CpuGemm& g);
}  // namespace

void sgemm(CpuGemmLibrary library, const CpuGemm& g) {
#if OFFLOADBENCH_HAVE_ONEDNN
  if (library == CpuGemmLibrary::onednn && onednn_forward_matmul(g))
    return;  // the epilogue included
#endif
  product(library, g);
  if (!g.bias && !g.relu) return;
  // Serial below a million elements: a fork costs microseconds (as the MLP's other passes).
  for_each_chunk(g.M, (std::int64_t{1} << 20) / std::max(g.N, 1),
                 [&](std::int64_t begin, std::int64_t end) {
                   epilogue_rows(g.C + begin * g.ldc, g.ldc, g.bias, g.relu,
                                 static_cast<int>(end - begin), g.N);
                 });
}

namespace {
void product(CpuGemmLibrary library, const CpuGemm& g) {
  if (library == CpuGemmLibrary::openblas && (g.M == 1 || g.N == 1) && g.K > 1)
    return openblas_gemm_as_gemv(g);
  if (library == CpuGemmLibrary::openblas && g.K == 1 &&
      std::int64_t{g.M} * g.N >= (std::int64_t{1} << 18)) {
    // A large outer product (a batch-1 weight gradient): OpenBLAS's sger runs it 1.3x faster than
    // its sgemm at one thread and about 3x at two (64x12288); not at 128x784, where sger is no
    // faster and its threads' wake-ups cost a 2-thread step 3x.
    for (int i = 0; i < g.M && g.beta != 1.0f; ++i) {
      float* row = g.C + static_cast<std::ptrdiff_t>(i) * g.ldc;
      if (g.beta == 0.0f)
        std::fill(row, row + g.N, 0.0f);  // beta 0 ignores what C held, NaN included
      else
        cblas_sscal(g.N, g.beta, row, 1);
    }
    cblas_sger(CblasRowMajor, g.M, g.N, g.alpha, g.A, g.trans_a ? 1 : g.lda, g.B,
               g.trans_b ? g.ldb : 1, g.C, g.ldc);
    return;
  }
  if (library == CpuGemmLibrary::openblas) {
    cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans,
                g.trans_b ? CblasTrans : CblasNoTrans, g.M, g.N, g.K, g.alpha, g.A, g.lda, g.B,
                g.ldb, g.beta, g.C, g.ldc);
    return;
  }
#if OFFLOADBENCH_HAVE_ONEDNN
  const dnnl_status_t status = dnnl_sgemm(g.trans_a ? 'T' : 'N', g.trans_b ? 'T' : 'N', g.M, g.N,
                                          g.K, g.alpha, g.A, g.lda, g.B, g.ldb, g.beta, g.C, g.ldc);
  if (status != dnnl_success)
    throw std::runtime_error(fmt::format("oneDNN dnnl_sgemm({}x{}x{}) failed with status {}", g.M,
                                         g.N, g.K, static_cast<int>(status)));
#else
  throw std::invalid_argument("this build has no oneDNN (install libdnnl-dev and configure again)");
#endif
}
}  // namespace

bool gemm_runs_alone_in_team(CpuGemmLibrary library) {
  return library != CpuGemmLibrary::openblas || openblas_get_parallel() != 1;
}

void sgemm_split_k(CpuGemmLibrary library, const CpuGemm& g) {
  const int threads = omp_get_max_threads();
  const bool small_output = std::int64_t{g.M} * g.N <= (std::int64_t{1} << 18);
  if (threads < 2 || g.K < 256 * threads || !small_output || !gemm_runs_alone_in_team(library) ||
      omp_in_parallel() || g.bias || g.relu)
    return sgemm(library, g);
  const std::size_t share = static_cast<std::size_t>(g.M) * g.N;
  thread_local std::vector<float> scratch;  // kept between calls: no allocation inside a step
  scratch.resize(share * (threads - 1));
  float* const shares =
      scratch.data();  // the caller's: inside the region `scratch` names each worker's own
  std::exception_ptr failure;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), count = omp_get_num_threads();
    const int k0 = static_cast<int>(std::int64_t{g.K} * t / count),
              k1 = static_cast<int>(std::int64_t{g.K} * (t + 1) / count);
    CpuGemm part = g;
    part.K = k1 - k0;
    part.A = g.A + static_cast<std::ptrdiff_t>(k0) * (g.trans_a ? g.lda : 1);
    part.B = g.B + static_cast<std::ptrdiff_t>(k0) * (g.trans_b ? 1 : g.ldb);
    if (t > 0) part.C = shares + share * (t - 1), part.ldc = g.N, part.beta = 0.0f;
    try {
      sgemm(library, part);  // inside the team: one thread each
    } catch (...) {
#pragma omp critical
      failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  for_each_chunk(g.M, 0, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
      for (int t = 1; t < threads; ++t) {
        float* __restrict row = g.C + i * g.ldc;
        const float* __restrict add = shares + share * (t - 1) + i * g.N;
#pragma omp simd
        for (int j = 0; j < g.N; ++j) row[j] += add[j];
      }
  });
}

bool runs_faster(const std::function<void()>& challenger, const std::function<void()>& incumbent,
                 int trials, double margin) {
  using Clock = std::chrono::steady_clock;
  auto time_calls = [](const std::function<void()>& work, int calls) {
    const auto start = Clock::now();
    for (int c = 0; c < calls; ++c) work();
    return std::chrono::duration<double>(Clock::now() - start).count() / calls;
  };
  const double once =
      std::max(time_calls(challenger, 1), time_calls(incumbent, 1));  // also the warm-up
  const int calls = static_cast<int>(std::clamp(2e-3 / std::max(once, 1e-9), 1.0, 1000.0));
  std::vector<double> a, b;
  for (int t = 0; t < std::max(trials, 1); ++t) {
    a.push_back(time_calls(challenger, calls));
    b.push_back(time_calls(incumbent, calls));
  }
  auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  return median(a) < (1.0 - margin) * median(b);
}

}  // namespace offloadbench
