#include "kernels/mlp_packed.h"

#include <stdexcept>
#include <vector>

#if OFFLOADBENCH_HAVE_ONEDNN
#include <dnnl.hpp>
#endif

namespace offloadbench {

#if OFFLOADBENCH_HAVE_ONEDNN
namespace {
using dnnl::memory;
using Dims = memory::dims;
constexpr auto f32 = memory::data_type::f32;

// One fully connected layer out = in·Wᵀ + bias (optionally ReLU'd) with W (out_features,
// in_features) row-major reordered once into the layout the primitive chose. in and out are bound
// per call.
struct PackedLayer {
  PackedLayer(const dnnl::engine& engine, dnnl::stream& stream, const float* weight,
              const float* bias, memory::dim rows, memory::dim in_features,
              memory::dim out_features, bool relu) {
    const memory::desc in_md({rows, in_features}, f32, memory::format_tag::ab);
    const memory::desc any_weights({in_features, out_features}, f32, memory::format_tag::any);
    const memory::desc plain_weights({in_features, out_features}, f32,
                                     memory::format_tag::ba);  // (out, in) row-major
    const memory::desc bias_md({1, out_features}, f32, memory::format_tag::ab);
    const memory::desc out_md({rows, out_features}, f32, memory::format_tag::ab);
    dnnl::primitive_attr attr;
    if (relu) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      attr.set_post_ops(ops);
    }
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(in_md, any_weights, bias_md, out_md),
                                          attr, engine);
    memory user_weights(plain_weights, engine, const_cast<float*>(weight));
    weights = memory(pd.weights_desc(), engine);
    dnnl::reorder(user_weights, weights).execute(stream, user_weights, weights);
    this->bias = memory(bias_md, engine);
    memory user_bias(bias_md, engine, const_cast<float*>(bias));
    dnnl::reorder(user_bias, this->bias).execute(stream, user_bias, this->bias);
    stream.wait();  // the snapshot is taken before the constructor returns
    in = memory(in_md, engine, DNNL_MEMORY_NONE);
    out = memory(out_md, engine, DNNL_MEMORY_NONE);
    primitive = dnnl::matmul(pd);
  }
  void run(dnnl::stream& stream, const float* x, float* y) {
    in.set_data_handle(const_cast<float*>(x));
    out.set_data_handle(y);
    primitive.execute(stream, {{DNNL_ARG_SRC, in},
                               {DNNL_ARG_WEIGHTS, weights},
                               {DNNL_ARG_BIAS, bias},
                               {DNNL_ARG_DST, out}});
  }
  memory weights, bias, in, out;
  dnnl::matmul primitive;
};
}  // namespace

struct MlpPackedInference::Impl {
  explicit Impl(const MlpCpuModel& model)
      : engine(dnnl::engine::kind::cpu, 0),
        stream(engine),
        act1(static_cast<std::size_t>(model.batch) * static_cast<std::size_t>(model.shape.hidden)),
        layer1(engine, stream, model.params.data() + mlp_param_layout(model.shape).w1,
               model.params.data() + mlp_param_layout(model.shape).b1, model.batch,
               model.shape.inputs, model.shape.hidden, true),
        layer2(engine, stream, model.params.data() + mlp_param_layout(model.shape).w2,
               model.params.data() + mlp_param_layout(model.shape).b2, model.batch,
               model.shape.hidden, model.shape.classes, false) {}
  dnnl::engine engine;
  dnnl::stream stream;
  std::vector<float> act1;
  PackedLayer layer1, layer2;
};

bool MlpPackedInference::available() { return true; }

MlpPackedInference::MlpPackedInference(const MlpCpuModel& model)
    : impl_(std::make_unique<Impl>(model)) {}

void MlpPackedInference::run(const float* x, float* logits) {
  impl_->layer1.run(impl_->stream, x, impl_->act1.data());
  impl_->layer2.run(impl_->stream, impl_->act1.data(), logits);
  impl_->stream.wait();
}
#else
struct MlpPackedInference::Impl {};

bool MlpPackedInference::available() { return false; }

MlpPackedInference::MlpPackedInference(const MlpCpuModel&) {
  throw std::invalid_argument("this build has no oneDNN (install libdnnl-dev and configure again)");
}

void MlpPackedInference::run(const float*, float*) {}
#endif

MlpPackedInference::~MlpPackedInference() = default;

}  // namespace offloadbench
