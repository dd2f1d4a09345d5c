#include "performance/reddit_models.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "gpu/aggregate.cuh"
#include "performance/head_products.cuh"
#include "gpu/degree_norm.cuh"
#include "gpu/edge_softmax.cuh"
#include "gpu/elementwise.cuh"
#include "gpu/layers/dense.h"
#include "gpu/sddmm.cuh"
#include "gpu/spmm.cuh"
#include "gpu/spmm_ve.cuh"
#include "gpu/training_kernels.cuh"
#include "core/error.h"
#include "core/splitmix64.h"

namespace gnncheck::perf {

using gpu::DeviceBuffer;
using gpu::DeviceGraph;
using gpu::GpuContext;
using gpu::MemoryCategory;
using gpu::MemoryCategoryScope;

std::string ModelSpec::name() const {
  switch (kind) {
    case ModelKind::gcn: return fmt::format("GCN (hidden {})", hidden);
    case ModelKind::gin: return fmt::format("GIN (hidden {})", hidden);
    case ModelKind::gat: return fmt::format("GAT-{} (hidden {})", heads, hidden);
  }
  return "?";
}

TrainingInputs::TrainingInputs(GpuContext& ctx, const std::vector<float>& host_features, index_t feature_width,
                               const std::vector<std::int32_t>& host_labels, const std::vector<std::uint8_t>& host_mask,
                               index_t n_classes)
    : width(feature_width), classes(n_classes) {
  if (feature_width <= 0 || host_features.size() % static_cast<size_t>(feature_width) != 0)
    throw InputError(fmt::format("training inputs: {} feature values do not form rows of {}", host_features.size(),
                                 feature_width));
  if (host_labels.size() != host_mask.size())
    throw InputError(fmt::format("training inputs: {} labels but {} mask entries", host_labels.size(), host_mask.size()));
  rows = static_cast<index_t>(host_features.size()) / feature_width;
  label_rows = static_cast<index_t>(host_labels.size());
  train_count = std::count(host_mask.begin(), host_mask.end(), std::uint8_t{1});
  MemoryCategoryScope tag(ctx.allocator, MemoryCategory::activations);
  features = DeviceBuffer<float>(ctx.allocator, static_cast<std::int64_t>(host_features.size()));
  features.upload(host_features, ctx.stream);
  labels = DeviceBuffer<std::int32_t>(ctx.allocator, label_rows);
  labels.upload(host_labels, ctx.stream);
  mask = DeviceBuffer<std::uint8_t>(ctx.allocator, label_rows);
  mask.upload(host_mask, ctx.stream);
  ctx.synchronize();
}

void prepare_graph(GpuContext& ctx, DeviceGraph& g, ModelKind kind) {
  MemoryCategoryScope tag(ctx.allocator, MemoryCategory::graph);
  g.ensure_csc(ctx);
  // GAT's attention gradient is a cusparseSDDMM call: 32-bit offsets.
  if (kind == ModelKind::gat && g.fits_cusparse()) g.cusparse_row_ptr(ctx);
  if (kind == ModelKind::gat) {
    g.row_of_edge(ctx);
    g.edge_perm(ctx);
  }
  ctx.synchronize();
}

namespace {

// How a parameter starts: Glorot uniform (PyG's GCNConv and GATConv linears and attention
// vectors), PyTorch's nn.Linear default (uniform ±1/√fan_in: the MLPs of GINConv), or zero (biases).
enum class Init { glorot, torch_linear, zero };

// A parameter with its gradient and Adam moments.
struct Param {
  Param(GpuContext& ctx, index_t rows, index_t cols, std::uint64_t seed, Init init) : size(rows * cols) {
    MemoryCategoryScope tag(ctx.allocator, MemoryCategory::parameters);
    value = DeviceBuffer<float>(ctx.allocator, size);
    grad = DeviceBuffer<float>(ctx.allocator, size);
    m = DeviceBuffer<float>(ctx.allocator, size);
    v = DeviceBuffer<float>(ctx.allocator, size);
    std::vector<float> host(static_cast<size_t>(size), 0.0f);
    if (init != Init::zero) {  // uniform in ±bound, from a counter-based hash of (seed, index)
      const float bound = init == Init::glorot ? std::sqrt(6.0f / static_cast<float>(rows + cols))
                                               : 1.0f / std::sqrt(static_cast<float>(rows));
      for (index_t k = 0; k < size; ++k) {
        const std::uint64_t z = mix64(seed * kSplitMix64Gamma + static_cast<std::uint64_t>(k) + 1);
        host[static_cast<size_t>(k)] = bound * (static_cast<float>(z >> 40) / 8388608.0f - 1.0f);
      }
    }
    value.upload(host, ctx.stream);
    m.zero(ctx.stream);
    v.zero(ctx.stream);
  }
  void adam(GpuContext& ctx, int step) {
    gpu::adam_step(ctx, gpu::AdamConfig{.learning_rate = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .epsilon = 1e-8f}, step,
                   size, value.data(), grad.data(), m.data(), v.data());
  }
  index_t size;
  DeviceBuffer<float> value, grad, m, v;
};

DeviceBuffer<float> buffer(GpuContext& ctx, MemoryCategory c, index_t count) {
  MemoryCategoryScope tag(ctx.allocator, c);
  return DeviceBuffer<float>(ctx.allocator, count);
}

// Scratch of the parallel column sums (bias and attention-vector gradients), shared by a model's layers.
struct Reductions {
  index_t max_width = 0;
  DeviceBuffer<float> partials;  // gpu::column_sum_slices · max_width
  void column_sums(GpuContext& ctx, index_t rows, index_t heads, index_t channels, const float* x, const float* w,
                   float* out) {
    if (heads * channels > max_width)
      throw InternalError(fmt::format("column sums of width {} exceed the model's reduction scratch ({})",
                                      heads * channels, max_width));
    gpu::weighted_column_sums(ctx, rows, heads, channels, x, w, partials.data(), out);
  }
};

class Layer {
 public:
  virtual ~Layer() = default;
  // Returns the output [n_dst, out_width] (owned by the layer, tagged `output_category`).
  virtual float* forward(OpTimeline& t, const float* x) = 0;
  // grad_x may be nullptr (the first layer: no gradient for the input features).
  virtual void backward(OpTimeline& t, const float* x, const float* grad_y, float* grad_x) = 0;
  virtual std::vector<Param*> params() = 0;
  // For snapshots: the names of params() in the same order (the oracle target's names) and the
  // output buffer forward() returns.
  virtual std::vector<std::string> param_names() const = 0;
  virtual const DeviceBuffer<float>& output() const = 0;
};

// ---- GCN ----------------------------------------------------------------------------------------
class GcnLayer final : public Layer {
 public:
  GcnLayer(GpuContext& ctx, DeviceGraph& g, index_t in, index_t out, Reductions& reductions,
           MemoryCategory output_category, std::uint64_t seed)
      : ctx_(ctx), g_(g), in_(in), out_(out), reductions_(reductions), weight_(ctx, in, out, seed, Init::glorot),
        bias_(ctx, 1, out, 0, Init::zero) {
    {
      // The degree factors are graph storage (gpu/device_graph.h counts 2V for GCN), computed once.
      MemoryCategoryScope tag(ctx.allocator, MemoryCategory::graph);
      factors_ = gpu::degree_factors(ctx, g, gpu::DegreeNorm::symmetric, gpu::SourceDegree::out);
    }
    xw_ = buffer(ctx, MemoryCategory::activations, g.n_src() * out);  // x·W, then its gradient
    y_ = buffer(ctx, output_category, g.n_dst() * out);
  }
  float* forward(OpTimeline& t, const float* x) override {
    t.region("dense", [&] { gpu::matmul(ctx_, g_.n_src(), in_, out_, x, weight_.value.data(), xw_.data()); });
    t.region("spmm", [&] {
      gpu::aggregate(ctx_, {g_.n_dst(), g_.row_ptr(), g_.col_idx()}, {}, {factors_.dst.data(), factors_.src.data()},
                     xw_.data(), out_, y_.data());
    });
    t.region("elementwise", [&] { gpu::add_bias(ctx_, g_.n_dst(), out_, bias_.value.data(), y_.data()); });
    return y_.data();
  }
  void backward(OpTimeline& t, const float* x, const float* gy, float* gx) override {
    t.region("bias_grad", [&] { reductions_.column_sums(ctx_, g_.n_dst(), 1, out_, gy, nullptr, bias_.grad.data()); });
    t.region("spmm_transposed", [&] {
      gpu::aggregate(ctx_, {g_.n_src(), g_.col_ptr(ctx_), g_.row_idx(ctx_)}, {},
                     {factors_.src.data(), factors_.dst.data()}, gy, out_, xw_.data());
    });
    t.region("dense", [&] {
      gpu::matmul_at_b(ctx_, g_.n_src(), in_, out_, x, xw_.data(), weight_.grad.data());
      if (gx) gpu::matmul_a_bt(ctx_, g_.n_src(), out_, in_, xw_.data(), weight_.value.data(), gx);
    });
  }
  std::vector<Param*> params() override { return {&weight_, &bias_}; }
  std::vector<std::string> param_names() const override { return {"weight", "bias"}; }
  const DeviceBuffer<float>& output() const override { return y_; }

 private:
  GpuContext& ctx_;
  DeviceGraph& g_;
  index_t in_, out_;
  Reductions& reductions_;
  Param weight_, bias_;
  gpu::DegreeFactors factors_;
  DeviceBuffer<float> xw_, y_;
};

// ---- GIN ----------------------------------------------------------------------------------------
class GinLayer final : public Layer {
 public:
  GinLayer(GpuContext& ctx, DeviceGraph& g, index_t in, index_t hidden, index_t out, Reductions& reductions,
           MemoryCategory output_category, std::uint64_t seed)
      : ctx_(ctx), g_(g), in_(in), hidden_(hidden), out_(out), reductions_(reductions), w1_(ctx, in, hidden, seed, Init::torch_linear),
        b1_(ctx, 1, hidden, 0, Init::zero), w2_(ctx, hidden, out, seed + 1, Init::torch_linear),
        b2_(ctx, 1, out, 0, Init::zero) {
    p_ = buffer(ctx, MemoryCategory::activations, g.n_src() * hidden);  // x·W1, then its gradient
    r_ = buffer(ctx, MemoryCategory::saved_for_backward, g.n_dst() * hidden);
    gr_ = buffer(ctx, MemoryCategory::activations, g.n_dst() * hidden);  // r's gradient (r is still read)
    y_ = buffer(ctx, output_category, g.n_dst() * out);
  }
  float* forward(OpTimeline& t, const float* x) override {
    const index_t n_dst = g_.n_dst();
    t.region("dense", [&] { gpu::matmul(ctx_, g_.n_src(), in_, hidden_, x, w1_.value.data(), p_.data()); });
    // (A + I)·p by the reference's CSR row kernel: measured faster than cusparseSpMM on this graph
    // (docs/performance.md, kernel table).
    t.region("spmm", [&] { gpu::aggregate(ctx_, {g_.n_dst(), g_.row_ptr(), g_.col_idx()}, {}, {}, p_.data(), hidden_, r_.data()); });
    t.region("elementwise", [&] {
      gpu::add_bias(ctx_, n_dst, hidden_, b1_.value.data(), r_.data());
      gpu::relu_forward(ctx_, n_dst * hidden_, r_.data(), r_.data());
    });
    t.region("dense", [&] { gpu::matmul(ctx_, n_dst, hidden_, out_, r_.data(), w2_.value.data(), y_.data()); });
    t.region("elementwise", [&] { gpu::add_bias(ctx_, n_dst, out_, b2_.value.data(), y_.data()); });
    return y_.data();
  }
  void backward(OpTimeline& t, const float* x, const float* gy, float* gx) override {
    const index_t n_dst = g_.n_dst();
    t.region("bias_grad", [&] { reductions_.column_sums(ctx_, n_dst, 1, out_, gy, nullptr, b2_.grad.data()); });
    t.region("dense", [&] {
      gpu::matmul_at_b(ctx_, n_dst, hidden_, out_, r_.data(), gy, w2_.grad.data());
      gpu::matmul_a_bt(ctx_, n_dst, out_, hidden_, gy, w2_.value.data(), gr_.data());
    });
    t.region("elementwise", [&] { gpu::relu_backward(ctx_, n_dst * hidden_, r_.data(), gr_.data(), gr_.data()); });
    t.region("bias_grad",
             [&] { reductions_.column_sums(ctx_, n_dst, 1, hidden_, gr_.data(), nullptr, b1_.grad.data()); });
    t.region("spmm_transposed",
             [&] { gpu::spmm_backward(ctx_, g_, gr_.data(), hidden_, p_.data(), gpu::TransposeMethod::fused_csc_kernel); });
    t.region("dense", [&] {
      gpu::matmul_at_b(ctx_, g_.n_src(), in_, hidden_, x, p_.data(), w1_.grad.data());
      if (gx) gpu::matmul_a_bt(ctx_, g_.n_src(), hidden_, in_, p_.data(), w1_.value.data(), gx);
    });
  }
  std::vector<Param*> params() override { return {&w1_, &b1_, &w2_, &b2_}; }
  std::vector<std::string> param_names() const override { return {"weight1", "bias1", "weight2", "bias2"}; }
  const DeviceBuffer<float>& output() const override { return y_; }

 private:
  GpuContext& ctx_;
  DeviceGraph& g_;
  index_t in_, hidden_, out_;
  Reductions& reductions_;
  Param w1_, b1_, w2_, b2_;
  DeviceBuffer<float> p_, r_, y_, gr_;
};

// ---- GAT ----------------------------------------------------------------------------------------
// Two [E, H] scratch buffers shared by all GAT layers of a model: LeakyReLU scores (forward) and
// the attention gradient (backward) in the first, the logits' gradient in the second.
struct EdgeScratch {
  DeviceBuffer<float> first, second;
};

class GatLayer final : public Layer {
 public:
  GatLayer(GpuContext& ctx, DeviceGraph& g, index_t in, index_t heads, index_t channels, EdgeScratch& scratch,
           Reductions& reductions, MemoryCategory output_category, std::uint64_t seed)
      : ctx_(ctx), g_(g), in_(in), heads_(heads), channels_(channels), width_(heads * channels), scratch_(scratch),
        reductions_(reductions),
        weight_(ctx, in, heads * channels, seed, Init::glorot), att_src_(ctx, heads, channels, seed + 1, Init::glorot),
        att_dst_(ctx, heads, channels, seed + 2, Init::glorot), bias_(ctx, 1, heads * channels, 0, Init::zero) {
    const index_t e = g.num_edges() * heads;
    h_ = buffer(ctx, MemoryCategory::saved_for_backward, g.n_src() * width_);
    logits_ = buffer(ctx, MemoryCategory::saved_for_backward, e);
    alpha_ = buffer(ctx, MemoryCategory::saved_for_backward, e);
    s_src_ = buffer(ctx, MemoryCategory::activations, g.n_src() * heads);
    s_dst_ = buffer(ctx, MemoryCategory::activations, g.n_dst() * heads);
    grad_h_ = buffer(ctx, MemoryCategory::activations, g.n_src() * width_);
    y_ = buffer(ctx, output_category, g.n_dst() * width_);
  }
  float* forward(OpTimeline& t, const float* x) override {
    const index_t e = g_.num_edges() * heads_;
    t.region("dense", [&] { gpu::matmul(ctx_, g_.n_src(), in_, width_, x, weight_.value.data(), h_.data()); });
    t.region("elementwise", [&] {
      gpu::head_dot(ctx_, g_.n_src(), heads_, channels_, h_.data(), att_src_.value.data(), s_src_.data());
      gpu::head_dot(ctx_, g_.n_dst(), heads_, channels_, h_.data(), att_dst_.value.data(), s_dst_.data());
    });
    t.region("sddmm_add", [&] { gpu::sddmm_add_forward(ctx_, g_, s_dst_.data(), s_src_.data(), heads_, logits_.data()); });
    t.region("elementwise", [&] { gpu::leaky_relu_forward(ctx_, e, 0.2f, logits_.data(), scratch_.first.data()); });
    t.region("edge_softmax", [&] { gpu::edge_softmax_forward(ctx_, g_, scratch_.first.data(), heads_, alpha_.data()); });
    // SpMMve by the CSR row kernel, all heads in one pass (cuSPARSE needs one call and one copy of
    // the weights per head: measured slower, with an [E] workspace, on this graph).
    t.region("spmm_ve", [&] {
      gpu::aggregate(ctx_, {g_.n_dst(), g_.row_ptr(), g_.col_idx()}, {alpha_.data(), nullptr, heads_}, {}, h_.data(),
                     channels_, y_.data());
    });
    t.region("elementwise", [&] { gpu::add_bias(ctx_, g_.n_dst(), width_, bias_.value.data(), y_.data()); });
    return y_.data();
  }
  void backward(OpTimeline& t, const float* x, const float* gy, float* gx) override {
    const index_t e = g_.num_edges() * heads_;
    t.region("bias_grad",
             [&] { reductions_.column_sums(ctx_, g_.n_dst(), 1, width_, gy, nullptr, bias_.grad.data()); });
    // grad of alpha (SDDMM of gy and h) and of h (fused eShuffle + SpMMve over the CSC)
    // cusparseSDDMM where cuSPARSE takes the graph: 4-5× faster than the reference's warp-per-edge
    // kernel on this graph (kernel table); both are checked against the oracle by the GPU tests.
    t.region("sddmm_dot", [&] {
      if (g_.fits_cusparse()) gpu::sddmm_dot_cusparse(ctx_, g_, gy, h_.data(), heads_, channels_, scratch_.first.data());
      else gpu::sddmm_dot_forward(ctx_, g_, gy, h_.data(), heads_, channels_, scratch_.first.data());
    });
    t.region("eshuffle_spmm_ve", [&] {
      gpu::spmm_ve_transposed_forward(ctx_, g_, alpha_.data(), heads_, gy, channels_, grad_h_.data(),
                                      gpu::TransposeMethod::fused_csc_kernel);
    });
    t.region("edge_softmax", [&] {
      gpu::edge_softmax_backward(ctx_, g_, alpha_.data(), scratch_.first.data(), heads_, scratch_.second.data());
    });
    t.region("elementwise",
             [&] { gpu::leaky_relu_backward(ctx_, e, 0.2f, logits_.data(), scratch_.second.data(), scratch_.second.data()); });
    t.region("sddmm_backward",
             [&] { gpu::sddmm_add_backward(ctx_, g_, scratch_.second.data(), heads_, s_dst_.data(), s_src_.data()); });
    // Through the scores s = ⟨h, a⟩ (gpu::head_dot_backward's two halves, its serial grad_a replaced).
    t.region("elementwise", [&] {
      add_head_products(ctx_, g_.n_src(), heads_, channels_, s_src_.data(), att_src_.value.data(), grad_h_.data());
      add_head_products(ctx_, g_.n_dst(), heads_, channels_, s_dst_.data(), att_dst_.value.data(), grad_h_.data());
    });
    t.region("attention_grad", [&] {
      reductions_.column_sums(ctx_, g_.n_src(), heads_, channels_, h_.data(), s_src_.data(), att_src_.grad.data());
      reductions_.column_sums(ctx_, g_.n_dst(), heads_, channels_, h_.data(), s_dst_.data(), att_dst_.grad.data());
    });
    t.region("dense", [&] {
      gpu::matmul_at_b(ctx_, g_.n_src(), in_, width_, x, grad_h_.data(), weight_.grad.data());
      if (gx) gpu::matmul_a_bt(ctx_, g_.n_src(), width_, in_, grad_h_.data(), weight_.value.data(), gx);
    });
  }
  std::vector<Param*> params() override { return {&weight_, &att_src_, &att_dst_, &bias_}; }
  std::vector<std::string> param_names() const override { return {"weight", "att_src", "att_dst", "bias"}; }
  const DeviceBuffer<float>& output() const override { return y_; }

 private:
  GpuContext& ctx_;
  DeviceGraph& g_;
  index_t in_, heads_, channels_, width_;
  EdgeScratch& scratch_;
  Reductions& reductions_;
  Param weight_, att_src_, att_dst_, bias_;
  DeviceBuffer<float> h_, logits_, alpha_, s_src_, s_dst_, grad_h_, y_;
};

// ---- the model ----------------------------------------------------------------------------------
class StackedModel final : public Model {
 public:
  StackedModel(GpuContext& ctx, const ModelSpec& spec, std::vector<DeviceGraph*> graphs, const TrainingInputs& in,
               std::uint64_t seed)
      : ctx_(ctx), in_(in) {
    const size_t layers = graphs.size();
    if (layers == 0) throw InputError("make_model: at least one graph (one per layer) is needed");
    if (graphs.front()->n_src() != in.rows)
      throw InputError(fmt::format("make_model: the first graph has {} sources but the features have {} rows",
                                   graphs.front()->n_src(), in.rows));
    if (graphs.back()->n_dst() != in.label_rows)
      throw InputError(fmt::format("make_model: the last graph has {} destinations but there are {} labels",
                                   graphs.back()->n_dst(), in.label_rows));
    for (size_t l = 0; l + 1 < layers; ++l)
      if (graphs[l]->n_dst() != graphs[l + 1]->n_src())
        throw InputError(fmt::format("make_model: layer {} produces {} rows but layer {} reads {}", l,
                                     graphs[l]->n_dst(), l + 1, graphs[l + 1]->n_src()));
    if (spec.kind == ModelKind::gat) {
      index_t most = 0;
      for (size_t l = 0; l < layers; ++l) most = std::max(most, graphs[l]->num_edges() * (l + 1 < layers ? spec.heads : 1));
      scratch_.first = buffer(ctx, MemoryCategory::activations, most);
      scratch_.second = buffer(ctx, MemoryCategory::activations, most);
    }
    reductions_.max_width = std::max({in.classes, spec.hidden, spec.hidden * spec.heads});
    reductions_.partials = buffer(ctx, MemoryCategory::workspace, gpu::column_sum_slices * reductions_.max_width);
    index_t width = in.width;
    for (size_t l = 0; l < layers; ++l) {
      const bool last = l + 1 == layers;
      const MemoryCategory out_cat = last ? MemoryCategory::activations : MemoryCategory::saved_for_backward;
      const std::uint64_t layer_seed = seed * 1000 + l * 10;
      DeviceGraph& g = *graphs[l];
      switch (spec.kind) {
        case ModelKind::gcn: {
          const index_t out = last ? in.classes : spec.hidden;
          layers_.push_back(std::make_unique<GcnLayer>(ctx, g, width, out, reductions_, out_cat, layer_seed));
          width = out;
          break;
        }
        case ModelKind::gin: {
          const index_t out = last ? in.classes : spec.hidden;
          layers_.push_back(std::make_unique<GinLayer>(ctx, g, width, spec.hidden, out, reductions_, out_cat,
                                                           layer_seed));
          width = out;
          break;
        }
        case ModelKind::gat: {
          const index_t heads = last ? 1 : spec.heads, channels = last ? in.classes : spec.hidden;
          layers_.push_back(std::make_unique<GatLayer>(ctx, g, width, heads, channels, scratch_, reductions_,
                                                           out_cat, layer_seed));
          width = heads * channels;
          break;
        }
      }
      if (l > 0) grad_inputs_.push_back(buffer(ctx, MemoryCategory::activations, g.n_src() * input_width_.back()));
      input_width_.push_back(width);
    }
    grad_logits_ = buffer(ctx, MemoryCategory::activations, in.label_rows * in.classes);
    {
      MemoryCategoryScope tag(ctx.allocator, MemoryCategory::activations);
      loss_sum_ = DeviceBuffer<double>(ctx.allocator, 1);
    }
    ctx.synchronize();
  }

  void train_step(OpTimeline& t) override {
    const size_t layers = layers_.size();
    std::vector<const float*> inputs{in_.features.data()};
    for (size_t l = 0; l < layers; ++l) {
      float* y = layers_[l]->forward(t, inputs.back());
      if (l + 1 < layers) {
        const index_t n = static_cast<index_t>(grad_inputs_[l].size());  // n_dst(l) · width(l)
        t.region("elementwise", [&] { gpu::relu_forward(ctx_, n, y, y); });
      }
      inputs.push_back(y);
    }
    t.region("loss", [&] {
      const float scale = in_.train_count > 0 ? 1.0f / static_cast<float>(in_.train_count) : 0.0f;
      gpu::softmax_cross_entropy(ctx_, in_.label_rows, in_.classes, inputs.back(), in_.labels.data(), in_.mask.data(),
                                 scale, loss_sum_.data(), grad_logits_.data());
    });
    const float* grad = grad_logits_.data();
    for (size_t l = layers; l-- > 0;) {
      float* grad_x = l > 0 ? grad_inputs_[l - 1].data() : nullptr;
      layers_[l]->backward(t, inputs[l], grad, grad_x);
      if (l > 0) {
        // Through the ReLU between layer l-1 and l: its output is positive exactly where its input was.
        const index_t n = static_cast<index_t>(grad_inputs_[l - 1].size());
        t.region("elementwise", [&] { gpu::relu_backward(ctx_, n, inputs[l], grad_x, grad_x); });
        grad = grad_x;
      }
    }
    ++step_;
    t.region("adam", [&] {
      for (auto& layer : layers_)
        for (Param* p : layer->params()) p->adam(ctx_, step_);
    });
  }

  float loss() override {
    const double sum = loss_sum_.download(ctx_.stream)[0];
    return in_.train_count > 0 ? static_cast<float>(sum / static_cast<double>(in_.train_count)) : 0.0f;
  }

  ModelSnapshot snapshot() override {
    ModelSnapshot s;
    s.loss = loss();
    for (size_t l = 0; l < layers_.size(); ++l) {
      Layer& layer = *layers_[l];
      LayerSnapshot& ls = s.layers.emplace_back();
      ls.width = input_width_[l];
      ls.output = layer.output().download(ctx_.stream);
      ls.rows = static_cast<index_t>(ls.output.size()) / ls.width;
      // The gradient of layer l's output is the gradient of layer l+1's input after the ReLU's backward.
      ls.grad_output = (l + 1 < layers_.size() ? grad_inputs_[l] : grad_logits_).download(ctx_.stream);
      const std::vector<std::string> names = layer.param_names();
      const std::vector<Param*> params = layer.params();
      for (size_t k = 0; k < params.size(); ++k)
        ls.parameters.push_back({names[k], params[k]->value.download(ctx_.stream), params[k]->grad.download(ctx_.stream)});
    }
    return s;
  }

 private:
  GpuContext& ctx_;
  const TrainingInputs& in_;
  EdgeScratch scratch_;
  Reductions reductions_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<index_t> input_width_;
  std::vector<DeviceBuffer<float>> grad_inputs_;  // [l-1]: gradient of layer l's input
  DeviceBuffer<float> grad_logits_;
  DeviceBuffer<double> loss_sum_;  // Σ of the training rows' losses, of the last step
  int step_ = 0;
};

}  // namespace

std::unique_ptr<Model> make_model(GpuContext& ctx, const ModelSpec& spec, std::vector<DeviceGraph*> graphs,
                                  const TrainingInputs& inputs, std::uint64_t seed) {
  return std::make_unique<StackedModel>(ctx, spec, std::move(graphs), inputs, seed);
}

}  // namespace gnncheck::perf
