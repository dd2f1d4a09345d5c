// The catalogue entries of the oracle's layers (oracle/layers/*.h).
//
// Every layer takes the node features "x" (kind src_nodes) and produces "y" (kind dst_nodes); its
// learnable parameters are inputs of kind `parameter`, named as in the layer's Parameters struct.
// A bias is optional: with bias = false it is listed in the spec but absent from input_shapes(),
// which is the exact set of tensors a case must carry. GIN's eps is always a parameter (whether a
// model learns it is the training driver's choice).
#include <type_traits>

#include "oracle/catalogue_support.h"
#include "oracle/kink_arguments.h"
#include "oracle/layers/agnn.h"
#include "oracle/layers/gat.h"
#include "oracle/layers/gatv2.h"
#include "oracle/layers/gcn.h"
#include "oracle/layers/dropout.h"
#include "oracle/layers/gin.h"
#include "oracle/layers/sage.h"
#include "oracle/targets.h"

namespace gnncheck::oracle {
namespace {

using namespace layers;
using catalogue::make_target;
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

// The float32 evaluation of one generic lambda (a layer's evaluation at the other side of its kinks).
template <class Fn>
EvaluateFn<float> in_float32(Fn evaluate) {
  return [evaluate](const Graph& g, const Attributes& a, const TensorMapOf<float>& in, const TensorMapOf<float>& go) {
    return evaluate(g, a, in, go);
  };
}

// The receptive field of a layer that reads destination i's own features as source i.
ReceptiveField reads_own_features(const Attributes&) { return {.own_features = true}; }

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
       {"norm", std::string("symmetric"), "degree normalization: symmetric (D_dst^-1/2 A D_src^-1/2) | row_mean (D_dst^-1 A)",
        {std::string("symmetric"), std::string("row_mean")}},
       source_degree_attribute(), zero_degree_attribute()},
      false};
  spec.formula =
      "Ã = A + I (self_loops) or A;  d_dst(i) = row length of i in Ã,  d_src(j) = column length of j in Ã "
      "(source_degree = out) or row length of j in Ã (source_degree = in; 0 for j ≥ n_dst)\n"
      "y[i] = Σ_{e ∈ row i of Ã} ŵ_e · (x · weight)[col_e] + bias,  ŵ_e = 1 / sqrt(d_dst(i) · d_src(col_e)) (norm = "
      "symmetric) or 1 / d_dst(i) (norm = row_mean)";
  spec.conventions = {
      "Self-loops: edge (i, i) is appended to every destination row i, on a non-square graph too (destination i's own "
      "source row is x[i]); an existing self-loop is kept, so (i, i) then appears twice.",
      "Degrees are those of the aggregated graph Ã, duplicates counted: a destination's in-degree (its row length) and, "
      "with source_degree = out, a source's out-degree (its column length); with source_degree = in (PyG's gcn_norm, "
      "GNNAdvisor: one degree per node) a source's own in-degree as a destination, 0 for sources j ≥ n_dst. With "
      "self-loops on a non-square graph, sources j ≥ n_dst get no loop.",
      "A source of degree 0 (source_degree = in: j ≥ n_dst, or an in-degree of 0 without self-loops) is the convention "
      "zero_degree: factor 0, so it sends nothing (zero, PyG's gcn_norm), or its degree taken as 1 (one, GNNAdvisor).",
      "A node of degree 0 (possible only without self-loops) contributes and receives nothing: an empty row gives y[i] = bias.",
      "weight is [in_features, out_features] (x · weight: torch's nn.Linear stores the transpose); bias is [out_features], "
      "added to every destination row, and absent from the case with bias = false.",
      "With self-loops n_dst ≤ n_src is required (the destinations are the first n_dst sources); without them any shape works.",
      "Backward: g = Âᵀ · grad_y;  grad_weight = xᵀ · g;  grad_x = g · weightᵀ;  grad_bias = Σ_i grad_y[i]."};
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
  spec.gpu = {.device_resident = true, .reads_edge_perm = false};
  TargetDef def = make_target(std::move(spec), inputs, outputs, evaluate);
  // The self-loops of A + I become explicit edges of the neighbourhood; the symmetric norm reads
  // each source's whole column.
  def.receptive_field = [](const Attributes& a) {
    ReceptiveField field;
    if (a.get_bool("self_loops")) field.self_loops_attribute = "self_loops";
    if (a.get_string("norm") == "symmetric")
      field.source_degrees = a.get_string("source_degree") == "in" ? SourceDegrees::own_in_degree : SourceDegrees::out_degree;
    return field;
  };
  return def;
}

// GIN, and GINE when `edge_messages` (its edge features in every message, through a ReLU).
TargetDef gin_family_target(bool edge_messages) {
  const std::string name = edge_messages ? "gine" : "gin";
  std::vector<TensorSlot> inputs{kX};
  if (edge_messages) inputs.push_back({"edge_attr", TensorKind::edges, true});
  for (const char* p : {"weight1", "bias1", "weight2", "bias2", "eps"}) inputs.push_back(parameter(p));
  TargetSpec spec{
      name, true,
      edge_messages ? "GINE layer (Hu et al.; PyG's GINEConv): y = MLP((1+eps) x_i + sum_e ReLU(x_j + edge_attr_e)), "
                      "MLP = Linear-ReLU-Linear, eps a parameter [1]"
                    : "GIN layer (Xu et al.): y = MLP((1+eps) x_i + sum_j x_j), MLP = Linear-ReLU-Linear, eps a parameter [1]",
      inputs,
      {kY},
      {edge_messages ? AttributeSpec{"in_features", std::int64_t{8}, "width of the input features x and of edge_attr"}
                     : in_features_attr(),
       {"hidden_features", std::int64_t{8}, "width of the MLP's hidden layer"},
       out_features_attr(),
       bias_attr(),
       {"aggr", std::string("sum"), "the messages' aggregation per feature: sum (the paper's) | mean | max",
        {std::string("sum"), std::string("mean"), std::string("max")}, true, !edge_messages}},
      false};
  spec.formula = edge_messages ? "h[i] = (1 + eps) · x[i] + agg_{e ∈ row i} ReLU(x[col_e] + edge_attr[e])\n"
                                 "y = ReLU(h · weight1 + bias1) · weight2 + bias2,  agg = Σ (aggr = sum), Σ / in_degree(i) "
                                 "(mean) or the maximum per feature (max)"
                               : "h[i] = (1 + eps) · x[i] + agg_{e ∈ row i} x[col_e]\n"
                                 "y = ReLU(h · weight1 + bias1) · weight2 + bias2,  agg = Σ (aggr = sum), Σ / in_degree(i) "
                                 "(mean) or the maximum per feature (max)";
  spec.conventions = {
      "Destination i's own features are x[i], the i-th source row (the destinations are the first n_dst sources): "
      "n_dst ≤ n_src is required.",
      edge_messages ? "The sum runs over every edge of A, duplicates and self-loops included, each with its own edge_attr "
                      "row; no self-loops are added ((1 + eps) · x[i] is the node's own term). An empty row gives "
                      "h[i] = (1 + eps) · x[i]."
                    : "The sum counts every edge of A, duplicates and self-loops included; no self-loops are added ((1 + eps) · x[i] is "
                      "the node's own term). An empty row gives h[i] = (1 + eps) · x[i].",
      "aggr = mean divides by the row's edge count; aggr = max takes each feature's largest message, and at a tie (two "
      "or more edges hold it) the oracle sends the gradient to the first in edge-id order; any tied edge, or any split "
      "among them (torch.scatter_reduce's even split), is as valid and no check fails a system for its choice "
      "(checks/kinks-and-ties.md). An empty row aggregates 0 under every aggr (PyG's convention).",
      "eps is a parameter of shape [1] and always gets its gradient. weight1 [in_features, hidden_features], bias1 "
      "[hidden_features], weight2 [hidden_features, out_features], bias2 [out_features]; bias = false removes both biases.",
      edge_messages ? "ReLU'(0), at the messages and in the MLP: the oracle takes 0; 1 (the other one-sided derivative) is as "
                      "valid, and no check fails a system for either choice (checks/kinks-and-ties.md). No activation after "
                      "the second linear map."
                    : "ReLU'(0): the oracle takes 0; 1 (the other one-sided derivative) is as valid, and no check fails a system for "
                      "either choice (checks/kinks-and-ties.md). No activation after the second linear map."};
  if (edge_messages)
    spec.conventions.push_back(
        "edge_attr is [E, in_features] in edge-id order (PyG's GINEConv with edge_dim = None; with edge_dim, its Linear "
        "on edge_attr is a dense map outside this layer). Backward: grad_edge_attr[e] = ReLU'(m_e) ⊙ grad_h[row_e] with "
        "m_e = x[col_e] + edge_attr[e], and x's gradient gathers those at col_e.");
  auto input_shapes = [edge_messages](const Graph& g, const Attributes& a) {
    const auto cfg = GinConfig::from_attributes(a);
    Shapes s{{"x", {g.n_src(), cfg.in_features}},
             {"weight1", {cfg.in_features, cfg.hidden_features}},
             {"weight2", {cfg.hidden_features, cfg.out_features}},
             {"eps", {1}}};
    if (edge_messages) s["edge_attr"] = {g.num_edges(), cfg.in_features};
    if (cfg.bias) {
      s["bias1"] = {cfg.hidden_features};
      s["bias2"] = {cfg.out_features};
    }
    return s;
  };
  auto outputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"y", {g.n_dst(), GinConfig::from_attributes(a).out_features}}};
  };
  auto evaluate_at = [edge_messages](KinkSide side) {
    return [side, edge_messages](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
      using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
      auto cfg = GinConfig::from_attributes(a);
      cfg.kink_side = side;
      cfg.edge_messages = edge_messages;
      const GinParameters<T> p{input(in, "weight1"), optional_input(in, "bias1", cfg.bias), input(in, "weight2"),
                               optional_input(in, "bias2", cfg.bias), input(in, "eps")};
      const auto edge_attr = optional_input(in, "edge_attr", edge_messages);
      Evaluation<T> ev;
      ev.outputs["y"] = gin_forward(g, cfg, input(in, "x"), p, edge_attr);
      if (!grad_out.empty()) {
        auto grads = gin_backward(g, cfg, input(in, "x"), p, input(grad_out, "y"), edge_attr);
        ev.gradients["x"] = std::move(grads.grad_x);
        if (edge_messages) ev.gradients["edge_attr"] = std::move(grads.grad_edge_attr);
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
  };
  TargetDef def = make_target(std::move(spec), input_shapes, outputs, evaluate_at(KinkSide::left));
  def.kinks = {edge_messages ? gine_kink_arguments : gin_kink_arguments, in_float32(evaluate_at(KinkSide::right))};
  def.receptive_field = reads_own_features;
  return def;
}

TargetDef gin_target() { return gin_family_target(false); }
TargetDef gine_target() { return gin_family_target(true); }

// The attributes GAT and GATv2 share: widths, heads and how they are joined, bias, self-loops and
// the LeakyReLU's slope (`slope_help` says what it is applied to), then `extra`.
std::vector<AttributeSpec> attention_layer_attributes(const char* slope_help, std::vector<AttributeSpec> extra = {}) {
  std::vector<AttributeSpec> attributes{
      in_features_attr(),
      {"out_features", std::int64_t{4}, "channels per head (C)"},
      {"heads", std::int64_t{2}, "number of attention heads (H)"},
      {"concat", true, "concatenate the heads, y [n_dst, H*C] (true), or average them, y [n_dst, C] (false)"},
      bias_attr(),
      {"self_loops", true, "attend over A + I (true) or A (false)"},
      {"negative_slope", 0.2, slope_help}};
  for (auto& a : extra) attributes.push_back(std::move(a));
  return attributes;
}

TargetDef gat_target() {
  TargetSpec spec{
      "gat", true, "GAT layer (Velickovic et al.): multi-head attention, LeakyReLU(0.2) logits, edge softmax",
      {kX, parameter("weight"), parameter("att_src"), parameter("att_dst"), parameter("bias")},
      {kY},
      attention_layer_attributes(
          "slope of the LeakyReLU applied to the logits",
          {{"attn_dropout", 0.0, "attention dropout probability in [0, 1); the mask is a function of dropout_seed"},
           {"dropout_seed", std::int64_t{0}, "seed of the deterministic attention-dropout mask"}}),
      false};
  spec.formula =
      "h = x · weight  [n_src, heads·C], C = out_features;  Ã = A + I (self_loops) or A\n"
      "s_src[j, k] = Σ_c h[j, k·C + c] · att_src[k, c],  s_dst[i, k] = Σ_c h[i, k·C + c] · att_dst[k, c]\n"
      "alpha[e, k] = softmax over e ∈ row i of Ã of LeakyReLU(s_dst[i, k] + s_src[col_e, k], negative_slope)\n"
      "out[i, k·C + c] = Σ_{e ∈ row i of Ã} alpha[e, k] · mask[e, k] · h[col_e, k·C + c]\n"
      "y = out + bias (concat)  or  y[i, c] = (1 / heads) · Σ_k out[i, k·C + c] + bias (mean)";
  spec.conventions = {
      "att_dst pairs with the destination (s_dst[i] uses h[i], destination i's own source row), att_src with the source "
      "of each edge: the logit of edge (i ← j) is s_dst[i] + s_src[j].",
      "Self-loops: edge (i, i) is appended to every destination row i, on a non-square graph too; an existing self-loop "
      "is kept, so (i, i) can appear twice. n_dst ≤ n_src is required.",
      "The softmax runs over each destination's in-edges of Ã, per head; without self-loops an empty row gives out[i] = 0, "
      "so y[i] = bias.",
      "weight is [in_features, heads·C] with head-major columns; att_src and att_dst are [heads, C]; bias is [heads·C] "
      "with concat = true and [C] with concat = false, added after the heads are joined, and absent with bias = false.",
      "Attention dropout: mask[e, k] = 1 / (1 − attn_dropout) where layers/dropout.h keeps element e·heads + k for "
      "dropout_seed (e: the edge id in Ã), else 0; attn_dropout = 0 means mask = 1 (evaluation mode)."};
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
  auto evaluate_at = [](KinkSide side) {
    return [side](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
      using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
      auto cfg = GatConfig::from_attributes(a);
      cfg.kink_side = side;
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
  };
  // The measured model's normwise floor misses the rounding a near one-hot softmax row keeps in its
  // gradient; the layer adds that floor propagated into the attention, weight and x gradients.
  spec.tolerance = {ToleranceKind::measured, 0, {}, {ToleranceFloor::gat_attention}};
  spec.gpu = {.device_resident = true, .reads_edge_perm = true};
  TargetDef def = make_target(std::move(spec), inputs, outputs, evaluate_at(KinkSide::left));
  def.kinks = {gat_kink_arguments, in_float32(evaluate_at(KinkSide::right))};
  // Position q of row i is aggregated edge q + i with self-loops (each earlier row gained its loop
  // at its end: layers/self_loops.h), q without; its mask is elements (that edge)·H + h.
  def.dropout = {"attn_dropout", "dropout_seed", [](const Graph&, const Attributes& a, index_t row, index_t position) {
                   const double p = a.get_double("attn_dropout");
                   const auto heads = static_cast<std::uint64_t>(a.get_int("heads"));
                   const auto seed = static_cast<std::uint64_t>(a.get_int("dropout_seed"));
                   const auto aggregated = static_cast<std::uint64_t>(position + (a.get_bool("self_loops") ? row : 0));
                   std::vector<bool> kept(heads);
                   for (std::uint64_t h = 0; h < heads; ++h) kept[h] = dropout_keeps(seed, aggregated * heads + h, p);
                   return kept;
                 }};
  def.receptive_field = reads_own_features;
  return def;
}

TargetDef gatv2_target() {
  TargetSpec spec{
      "gatv2", true,
      "GATv2 layer (Brody et al.): attention after the LeakyReLU, per channel, separate source and destination weights",
      {kX, parameter("weight_src"), parameter("weight_dst"), parameter("att"), parameter("bias")},
      {kY},
      attention_layer_attributes("slope of the LeakyReLU applied to z, channel by channel"),
      false};
  spec.formula =
      "h_src = x · weight_src  [n_src, heads·C],  h_dst = x[:n_dst] · weight_dst  [n_dst, heads·C];  "
      "Ã = A + I (self_loops) or A\n"
      "z[e] = h_dst[i] + h_src[j]  for e = (i ← j) of Ã\n"
      "logit[e, k] = Σ_c att[k, c] · LeakyReLU(z[e, k·C + c], negative_slope)\n"
      "alpha[e, k] = softmax over e ∈ row i of Ã of logit[e, k]\n"
      "out[i, k·C + c] = Σ_{e ∈ row i of Ã} alpha[e, k] · h_src[col_e, k·C + c]\n"
      "y = out + bias (concat)  or  y[i, c] = (1 / heads) · Σ_k out[i, k·C + c] + bias (mean)";
  spec.conventions = {
      "weight_dst transforms the destination (h_dst[i] uses x[i], destination i's own source row), weight_src the "
      "source of each edge and the messages: PyG's GATv2Conv(share_weights=False) with lin_r = weight_dst and "
      "lin_l = weight_src, their own biases zero.",
      "The LeakyReLU is applied to every channel of z before the attention vector (GATv2's order); its derivative "
      "is taken at each channel's z, at z = 0 the slope (checks/kinks-and-ties.md).",
      "Self-loops: edge (i, i) is appended to every destination row i, on a non-square graph too; an existing "
      "self-loop is kept, so (i, i) can appear twice. n_dst ≤ n_src is required.",
      "The softmax runs over each destination's in-edges of Ã, per head; without self-loops an empty row gives "
      "out[i] = 0, so y[i] = bias. No attention dropout (the evaluation mode).",
      "weight_src and weight_dst are [in_features, heads·C] with head-major columns; att is [heads, C]; bias is "
      "[heads·C] with concat = true and [C] with concat = false, added after the heads are joined, and absent with "
      "bias = false."};
  auto inputs = [](const Graph& g, const Attributes& a) {
    const auto cfg = Gatv2Config::from_attributes(a);
    Shapes s{{"x", {g.n_src(), cfg.in_features}},
             {"weight_src", {cfg.in_features, cfg.heads * cfg.out_features}},
             {"weight_dst", {cfg.in_features, cfg.heads * cfg.out_features}},
             {"att", {cfg.heads, cfg.out_features}}};
    if (cfg.bias) s["bias"] = {cfg.output_width()};
    return s;
  };
  auto outputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"y", {g.n_dst(), Gatv2Config::from_attributes(a).output_width()}}};
  };
  auto evaluate_at = [](KinkSide side) {
    return [side](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
      using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
      auto cfg = Gatv2Config::from_attributes(a);
      cfg.kink_side = side;
      const Gatv2Parameters<T> p{input(in, "weight_src"), input(in, "weight_dst"), input(in, "att"),
                                 optional_input(in, "bias", cfg.bias)};
      Evaluation<T> ev;
      if (grad_out.empty()) {
        ev.outputs["y"] = gatv2_forward(g, cfg, input(in, "x"), p);
      } else {
        auto grads = gatv2_backward(g, cfg, input(in, "x"), p, input(grad_out, "y"));
        ev.outputs["y"] = std::move(grads.y);
        ev.gradients["x"] = std::move(grads.grad_x);
        ev.gradients["weight_src"] = std::move(grads.grad.weight_src);
        ev.gradients["weight_dst"] = std::move(grads.grad.weight_dst);
        ev.gradients["att"] = std::move(grads.grad.att);
        if (cfg.bias) ev.gradients["bias"] = std::move(grads.grad.bias);
      }
      return ev;
    };
  };
  // As GAT's: the measured model's normwise floor misses the rounding a near one-hot (or uniform,
  // cancelling) softmax row keeps in its gradient, carried here through every channel's LeakyReLU.
  spec.tolerance = {ToleranceKind::measured, 0, {}, {ToleranceFloor::gatv2_attention}};
  spec.gpu = {.device_resident = true, .reads_edge_perm = true};
  TargetDef def = make_target(std::move(spec), inputs, outputs, evaluate_at(KinkSide::left));
  def.kinks = {gatv2_kink_arguments, in_float32(evaluate_at(KinkSide::right))};
  def.receptive_field = reads_own_features;
  return def;
}

TargetDef sage_target() {
  TargetSpec spec{"sage", true,
                  "GraphSAGE layer: y = x_i W_self + agg_j(p_j) W_neigh + b, agg mean or max, p = x or ReLU(x W_pool + b_pool)",
                  {kX, parameter("weight_self"), parameter("weight_neigh"), parameter("bias"), parameter("weight_pool"),
                   parameter("bias_pool")},
                  {kY},
                  {in_features_attr(), out_features_attr(), bias_attr(),
                   {"aggr", std::string("mean"), "the neighbours' aggregation per feature: mean | max",
                    {std::string("mean"), std::string("max")}, true, true},
                   {"project", false,
                    "aggregate p = ReLU(x · weight_pool + bias_pool) instead of x (GraphSAGE's pool aggregator; PyG's "
                    "project = true)",
                    {false, true}, true, true}},
                  false};
  spec.formula =
      "p[j] = x[j], or ReLU(x[j] · weight_pool + bias_pool) with project\n"
      "y[i] = x[i] · weight_self + agg_{e ∈ row i} p[col_e] · weight_neigh + bias,  agg = (1 / in_degree(i)) · Σ "
      "(aggr = mean) or the maximum per feature (aggr = max)";
  spec.conventions = {
      "Destination i's own features are x[i], the i-th source row (the destinations are the first n_dst sources): "
      "n_dst ≤ n_src is required; x[i] is never projected (the projection is the neighbours' side only, as PyG's).",
      "The aggregation is over destination i's in-edges in A, duplicates counted (the mean's denominator is the row "
      "length); no self-loops are added; an empty row aggregates 0 (mean and max alike, PyG's convention).",
      "Max at a tie (two or more sources hold a column's maximum): the oracle sends the gradient to the first such edge "
      "in edge-id order; any tied source, or any split among them (torch.scatter_reduce's even split), is as valid, and "
      "no check fails a system for its choice (checks/kinks-and-ties.md). Duplicate edges of one source are no tie.",
      "ReLU'(0) in the projection: the oracle takes 0; 1 is as valid.",
      "weight_self and weight_neigh are [in_features, out_features]; bias is [out_features], absent with bias = false; "
      "weight_pool [in_features, in_features] and bias_pool [in_features] are present only with project (PyG's "
      "projection always has its bias)."};
  auto inputs = [](const Graph& g, const Attributes& a) {
    const auto cfg = SageConfig::from_attributes(a);
    Shapes s{{"x", {g.n_src(), cfg.in_features}},
             {"weight_self", {cfg.in_features, cfg.out_features}},
             {"weight_neigh", {cfg.in_features, cfg.out_features}}};
    if (cfg.bias) s["bias"] = {cfg.out_features};
    if (cfg.project) {
      s["weight_pool"] = {cfg.in_features, cfg.in_features};
      s["bias_pool"] = {cfg.in_features};
    }
    return s;
  };
  auto outputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"y", {g.n_dst(), SageConfig::from_attributes(a).out_features}}};
  };
  auto evaluate_at = [](KinkSide side) {
    return [side](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
      using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
      auto cfg = SageConfig::from_attributes(a);
      cfg.kink_side = side;
      const SageParameters<T> p{input(in, "weight_self"), input(in, "weight_neigh"), optional_input(in, "bias", cfg.bias),
                                optional_input(in, "weight_pool", cfg.project), optional_input(in, "bias_pool", cfg.project)};
      Evaluation<T> ev;
      ev.outputs["y"] = sage_forward(g, cfg, input(in, "x"), p);
      if (!grad_out.empty()) {
        auto grads = sage_backward(g, cfg, input(in, "x"), p, input(grad_out, "y"));
        ev.gradients["x"] = std::move(grads.grad_x);
        ev.gradients["weight_self"] = std::move(grads.grad.weight_self);
        ev.gradients["weight_neigh"] = std::move(grads.grad.weight_neigh);
        if (cfg.bias) ev.gradients["bias"] = std::move(grads.grad.bias);
        if (cfg.project) {
          ev.gradients["weight_pool"] = std::move(grads.grad.weight_pool);
          ev.gradients["bias_pool"] = std::move(grads.grad.bias_pool);
        }
      }
      return ev;
    };
  };
  TargetDef def = make_target(std::move(spec), inputs, outputs, evaluate_at(KinkSide::left));
  def.kinks = {sage_kink_arguments, in_float32(evaluate_at(KinkSide::right))};
  def.receptive_field = reads_own_features;
  return def;
}

TargetDef agnn_target() {
  TargetSpec spec{"agnn", true, "AGNN layer: attention by cosine similarity scaled by a learnable beta",
                  {kX, parameter("beta")},
                  {kY},
                  {{"features", std::int64_t{8}, "width of x and y (the layer has no weight matrix)"},
                   {"self_loops", true, "attend over A + I (true) or A (false)"}},
                  false};
  spec.formula =
      "n[j] = x[j] / max(‖x[j]‖₂, 1e-12);  Ã = A + I (self_loops) or A\n"
      "alpha[e] = softmax over e ∈ row i of Ã of beta · ⟨n[i], n[col_e]⟩\n"
      "y[i] = Σ_{e ∈ row i of Ã} alpha[e] · x[col_e]";
  spec.conventions = {
      "Destination i's normalized row is n[i], from its own source row x[i] (the destinations are the first n_dst "
      "sources): n_dst ≤ n_src is required.",
      "A zero row of x stays zero (the 1e-12 floor of PyG's F.normalize): its cosines are 0, and at the floor the divisor "
      "is a constant, so the gradient through the normalization is grad_n / 1e-12.",
      "Self-loops: edge (i, i) is appended to every destination row i (an existing self-loop is kept); without them an "
      "empty row gives y[i] = 0.",
      "The aggregation uses x, not n. beta is a parameter of shape [1]; there is no weight matrix (in = out = features)."};
  spec.tolerance = {ToleranceKind::measured, 0, {}, {ToleranceFloor::agnn_attention}};
  auto inputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"x", {g.n_src(), AgnnConfig::from_attributes(a).features}}, {"beta", {1}}};
  };
  auto outputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"y", {g.n_dst(), AgnnConfig::from_attributes(a).features}}};
  };
  auto evaluate_at = [](KinkSide side) {
    return [side](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
      using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
      auto cfg = AgnnConfig::from_attributes(a);
      cfg.kink_side = side;
      Evaluation<T> ev;
      ev.outputs["y"] = agnn_forward(g, cfg, input(in, "x"), input(in, "beta"));
      if (!grad_out.empty()) {
        auto grads = agnn_backward(g, cfg, input(in, "x"), input(in, "beta"), input(grad_out, "y"));
        ev.gradients["x"] = std::move(grads.grad_x);
        ev.gradients["beta"] = std::move(grads.grad_beta);
      }
      return ev;
    };
  };
  TargetDef def = make_target(std::move(spec), inputs, outputs, evaluate_at(KinkSide::left));
  def.kinks = {agnn_kink_arguments, in_float32(evaluate_at(KinkSide::right))};
  def.receptive_field = reads_own_features;
  return def;
}

}  // namespace

std::vector<TargetDef> layer_targets() {
  return {gcn_target(), gin_target(), gat_target(), sage_target(), agnn_target(), gine_target(), gatv2_target()};
}

}  // namespace gnncheck::oracle
