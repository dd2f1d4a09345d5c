// The catalogue entries of the oracle's layers (oracle/layers/*.h).
//
// Every layer takes the node features "x" (kind src_nodes) and produces "y" (kind dst_nodes); its
// learnable parameters are inputs of kind `parameter`, named as in the layer's Parameters struct.
// A bias is optional: with bias = false it is listed in the spec but absent from input_shapes(),
// which is the exact set of tensors a case must carry. GIN's eps is always a parameter (whether a
// model learns it is the training driver's choice).
#include <type_traits>

#include "oracle/layers/agnn.h"
#include "oracle/layers/gat.h"
#include "oracle/layers/gcn.h"
#include "oracle/layers/gin.h"
#include "oracle/layers/sage.h"
#include "oracle/targets.h"

namespace gnncheck::oracle {
namespace {

using namespace layers;
using Shapes = std::map<std::string, std::vector<index_t>>;

template <class T>
const DenseTensor<T>& input(const TensorMapOf<T>& inputs, const std::string& name) {
  auto it = inputs.find(name);
  if (it == inputs.end()) throw InputError(fmt::format("layer input '{}' is missing", name));
  return it->second;
}

// An optional parameter: the tensor when enabled, an empty one otherwise.
template <class T>
DenseTensor<T> optional_input(const TensorMapOf<T>& inputs, const std::string& name, bool enabled) {
  return enabled ? input(inputs, name) : DenseTensor<T>{};
}

// Builds the float64 and float32 evaluations from one generic lambda.
template <class Fn>
TargetDef make_target(TargetSpec spec, ShapesFn inputs, ShapesFn outputs, Fn evaluate) {
  TargetDef def;
  def.spec = std::move(spec);
  def.input_shapes = std::move(inputs);
  def.output_shapes = std::move(outputs);
  def.evaluate_f64 = [evaluate](const Graph& g, const Attributes& a, const TensorMapOf<double>& in,
                                const TensorMapOf<double>& go) { return evaluate(g, a, in, go); };
  def.evaluate_f32 = [evaluate](const Graph& g, const Attributes& a, const TensorMapOf<float>& in,
                                const TensorMapOf<float>& go) { return evaluate(g, a, in, go); };
  return def;
}

const TensorSlot kX{"x", TensorKind::src_nodes, true};
const TensorSlot kY{"y", TensorKind::dst_nodes, true};
TensorSlot parameter(const std::string& name) { return {name, TensorKind::parameter, true}; }

AttributeSpec in_features_attr() { return {"in_features", std::int64_t{8}, "width of the input features x"}; }
AttributeSpec out_features_attr() { return {"out_features", std::int64_t{4}, "width of the output y"}; }
AttributeSpec bias_attr() { return {"bias", true, "add a learnable bias (true|false)"}; }

TargetDef gcn_target() {
  TargetSpec spec{
      "gcn", true, "GCN layer (Kipf & Welling): y = norm(A+I) · x · W + b",
      {kX, parameter("weight"), parameter("bias")},
      {kY},
      {in_features_attr(), out_features_attr(), bias_attr(),
       {"self_loops", true, "aggregate over A + I (true) or A (false)"},
       {"norm", std::string("symmetric"), "degree normalization: symmetric (D_dst^-1/2 A D_src^-1/2) | row_mean (D_dst^-1 A)"},
       {"source_degree", std::string("out"), std::string(kSourceDegreeHelp)}},
      false};
  auto inputs = [](const Graph& g, const Attributes& a) {
    const auto cfg = GcnConfig::from_attributes(a);
    Shapes s{{"x", {g.n_src(), cfg.in_features}}, {"weight", {cfg.in_features, cfg.out_features}}};
    if (cfg.bias) s["bias"] = {cfg.out_features};
    return s;
  };
  auto outputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"y", {g.n_dst(), GcnConfig::from_attributes(a).out_features}}};
  };
  auto evaluate = [](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
    using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
    const auto cfg = GcnConfig::from_attributes(a);
    const auto bias = optional_input(in, "bias", cfg.bias);
    Evaluation<T> ev;
    ev.outputs["y"] = gcn_forward(g, cfg, input(in, "x"), input(in, "weight"), bias);
    if (!grad_out.empty()) {
      auto grads = gcn_backward(g, cfg, input(in, "x"), input(in, "weight"), bias, input(grad_out, "y"));
      ev.gradients["x"] = std::move(grads.grad_x);
      ev.gradients["weight"] = std::move(grads.grad_weight);
      if (cfg.bias) ev.gradients["bias"] = std::move(grads.grad_bias);
    }
    return ev;
  };
  return make_target(std::move(spec), inputs, outputs, evaluate);
}

TargetDef gin_target() {
  TargetSpec spec{
      "gin", true, "GIN layer (Xu et al.): y = MLP((1+eps) x_i + sum_j x_j), MLP = Linear-ReLU-Linear, eps a parameter [1]",
      {kX, parameter("weight1"), parameter("bias1"), parameter("weight2"), parameter("bias2"), parameter("eps")},
      {kY},
      {in_features_attr(),
       {"hidden_features", std::int64_t{8}, "width of the MLP's hidden layer"},
       out_features_attr(),
       bias_attr()},
      false};
  auto inputs = [](const Graph& g, const Attributes& a) {
    const auto cfg = GinConfig::from_attributes(a);
    Shapes s{{"x", {g.n_src(), cfg.in_features}},
             {"weight1", {cfg.in_features, cfg.hidden_features}},
             {"weight2", {cfg.hidden_features, cfg.out_features}},
             {"eps", {1}}};
    if (cfg.bias) {
      s["bias1"] = {cfg.hidden_features};
      s["bias2"] = {cfg.out_features};
    }
    return s;
  };
  auto outputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"y", {g.n_dst(), GinConfig::from_attributes(a).out_features}}};
  };
  auto evaluate = [](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
    using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
    const auto cfg = GinConfig::from_attributes(a);
    const GinParameters<T> p{input(in, "weight1"), optional_input(in, "bias1", cfg.bias), input(in, "weight2"),
                             optional_input(in, "bias2", cfg.bias), input(in, "eps")};
    Evaluation<T> ev;
    ev.outputs["y"] = gin_forward(g, cfg, input(in, "x"), p);
    if (!grad_out.empty()) {
      auto grads = gin_backward(g, cfg, input(in, "x"), p, input(grad_out, "y"));
      ev.gradients["x"] = std::move(grads.grad_x);
      ev.gradients["weight1"] = std::move(grads.grad.weight1);
      ev.gradients["weight2"] = std::move(grads.grad.weight2);
      if (cfg.bias) {
        ev.gradients["bias1"] = std::move(grads.grad.bias1);
        ev.gradients["bias2"] = std::move(grads.grad.bias2);
      }
      ev.gradients["eps"] = std::move(grads.grad.eps);
    }
    return ev;
  };
  return make_target(std::move(spec), inputs, outputs, evaluate);
}

TargetDef gat_target() {
  TargetSpec spec{
      "gat", true, "GAT layer (Velickovic et al.): multi-head attention, LeakyReLU(0.2) logits, edge softmax",
      {kX, parameter("weight"), parameter("att_src"), parameter("att_dst"), parameter("bias")},
      {kY},
      {in_features_attr(),
       {"out_features", std::int64_t{4}, "channels per head (C)"},
       {"heads", std::int64_t{2}, "number of attention heads (H)"},
       {"concat", true, "concatenate the heads, y [n_dst, H*C] (true), or average them, y [n_dst, C] (false)"},
       bias_attr(),
       {"self_loops", true, "attend over A + I (true) or A (false)"},
       {"negative_slope", 0.2, "slope of the LeakyReLU applied to the logits"},
       {"attn_dropout", 0.0, "attention dropout probability in [0, 1); the mask is a function of dropout_seed"},
       {"dropout_seed", std::int64_t{0}, "seed of the deterministic attention-dropout mask"}},
      false};
  auto inputs = [](const Graph& g, const Attributes& a) {
    const auto cfg = GatConfig::from_attributes(a);
    Shapes s{{"x", {g.n_src(), cfg.in_features}},
             {"weight", {cfg.in_features, cfg.heads * cfg.out_features}},
             {"att_src", {cfg.heads, cfg.out_features}},
             {"att_dst", {cfg.heads, cfg.out_features}}};
    if (cfg.bias) s["bias"] = {cfg.output_width()};
    return s;
  };
  auto outputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"y", {g.n_dst(), GatConfig::from_attributes(a).output_width()}}};
  };
  auto evaluate = [](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
    using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
    const auto cfg = GatConfig::from_attributes(a);
    const GatParameters<T> p{input(in, "weight"), input(in, "att_src"), input(in, "att_dst"),
                             optional_input(in, "bias", cfg.bias)};
    Evaluation<T> ev;
    if (grad_out.empty()) {
      ev.outputs["y"] = gat_forward(g, cfg, input(in, "x"), p);
    } else {
      // The backward computes the forward's activations and y on the way: one pass, not two.
      auto grads = gat_backward(g, cfg, input(in, "x"), p, input(grad_out, "y"));
      ev.outputs["y"] = std::move(grads.y);
      ev.gradients["x"] = std::move(grads.grad_x);
      ev.gradients["weight"] = std::move(grads.grad.weight);
      ev.gradients["att_src"] = std::move(grads.grad.att_src);
      ev.gradients["att_dst"] = std::move(grads.grad.att_dst);
      if (cfg.bias) ev.gradients["bias"] = std::move(grads.grad.bias);
    }
    return ev;
  };
  return make_target(std::move(spec), inputs, outputs, evaluate);
}

TargetDef sage_target() {
  TargetSpec spec{"sage", true, "GraphSAGE-mean layer: y = x_i W_self + mean_j(x_j) W_neigh + b",
                  {kX, parameter("weight_self"), parameter("weight_neigh"), parameter("bias")},
                  {kY},
                  {in_features_attr(), out_features_attr(), bias_attr()},
                  false};
  auto inputs = [](const Graph& g, const Attributes& a) {
    const auto cfg = SageConfig::from_attributes(a);
    Shapes s{{"x", {g.n_src(), cfg.in_features}},
             {"weight_self", {cfg.in_features, cfg.out_features}},
             {"weight_neigh", {cfg.in_features, cfg.out_features}}};
    if (cfg.bias) s["bias"] = {cfg.out_features};
    return s;
  };
  auto outputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"y", {g.n_dst(), SageConfig::from_attributes(a).out_features}}};
  };
  auto evaluate = [](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
    using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
    const auto cfg = SageConfig::from_attributes(a);
    const SageParameters<T> p{input(in, "weight_self"), input(in, "weight_neigh"), optional_input(in, "bias", cfg.bias)};
    Evaluation<T> ev;
    ev.outputs["y"] = sage_forward(g, cfg, input(in, "x"), p);
    if (!grad_out.empty()) {
      auto grads = sage_backward(g, cfg, input(in, "x"), p, input(grad_out, "y"));
      ev.gradients["x"] = std::move(grads.grad_x);
      ev.gradients["weight_self"] = std::move(grads.grad.weight_self);
      ev.gradients["weight_neigh"] = std::move(grads.grad.weight_neigh);
      if (cfg.bias) ev.gradients["bias"] = std::move(grads.grad.bias);
    }
    return ev;
  };
  return make_target(std::move(spec), inputs, outputs, evaluate);
}

TargetDef agnn_target() {
  TargetSpec spec{"agnn", true, "AGNN layer: attention by cosine similarity scaled by a learnable beta",
                  {kX, parameter("beta")},
                  {kY},
                  {{"features", std::int64_t{8}, "width of x and y (the layer has no weight matrix)"},
                   {"self_loops", true, "attend over A + I (true) or A (false)"}},
                  false};
  auto inputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"x", {g.n_src(), AgnnConfig::from_attributes(a).features}}, {"beta", {1}}};
  };
  auto outputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"y", {g.n_dst(), AgnnConfig::from_attributes(a).features}}};
  };
  auto evaluate = [](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
    using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
    const auto cfg = AgnnConfig::from_attributes(a);
    Evaluation<T> ev;
    ev.outputs["y"] = agnn_forward(g, cfg, input(in, "x"), input(in, "beta"));
    if (!grad_out.empty()) {
      auto grads = agnn_backward(g, cfg, input(in, "x"), input(in, "beta"), input(grad_out, "y"));
      ev.gradients["x"] = std::move(grads.grad_x);
      ev.gradients["beta"] = std::move(grads.grad_beta);
    }
    return ev;
  };
  return make_target(std::move(spec), inputs, outputs, evaluate);
}

}  // namespace

std::vector<TargetDef> layer_targets() {
  return {gcn_target(), gin_target(), gat_target(), sage_target(), agnn_target()};
}

}  // namespace gnncheck::oracle
