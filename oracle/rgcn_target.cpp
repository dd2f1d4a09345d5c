// The catalogue entry of R-GCN (oracle/layers/rgcn.h): a layer over a typed graph, its edges'
// relations an index tensor (TensorSlot::index_range).
#include "oracle/layer_target_support.h"
#include "oracle/layers/rgcn.h"

namespace gnncheck::oracle {

using namespace layers;
using namespace layer_catalogue;
using catalogue::make_target;

TargetDef rgcn_target() {
  TargetSpec spec{"rgcn", true,
                  "R-GCN layer (Schlichtkrull et al.; PyG's RGCNConv): a weight per relation, each relation's neighbours "
                  "aggregated apart, optional basis decomposition",
                  {kX, {"edge_type", TensorKind::edges, false, "relations"}, parameter("weight"), parameter("comp"),
                   parameter("root"), parameter("bias")},
                  {kY},
                  {in_features_attr(), out_features_attr(),
                   catalogue::type_count_attribute("relations", "number of relations (edge types) R; ≥ 1", true),
                   // One weight per relation or 1–2 shared bases; the selfcheck tries fewer and more bases
                   // than relations.
                   catalogue::drawn_as({"bases", std::int64_t{0},
                                        "0: one weight matrix per relation; B ≥ 1: W_r = Σ_b comp[r, b] · weight[b] "
                                        "over B shared bases (PyG's num_bases)"},
                                       AttributeDraw::integers(0, 2),
                                       {{{"bases", std::int64_t{2}}}, {{"bases", std::int64_t{5}}, {"aggr", std::string("sum")}}},
                                       {{{"bases", std::int64_t{2}}}}),
                   catalogue::selfchecked_choices(
                       {"aggr", std::string("mean"), "each relation's neighbours per destination: mean (PyG's default) | sum",
                        {std::string("mean"), std::string("sum")}, true}),
                   catalogue::coin_attribute("root_weight", true, "add x[i] · root, the destination's own term (true|false)"),
                   bias_attr()},
                  false};
  spec.formula =
      "W_r = weight[r], or Σ_b comp[r, b] · weight[b] with bases ≥ 1\n"
      "y[i] = Σ_r (1 / c_{i,r}) Σ_{e ∈ row i, edge_type[e] = r} x[col_e] · W_r + x[i] · root + bias,  c_{i,r} = row "
      "i's edges of relation r (aggr = mean), 1 (aggr = sum)";
  spec.conventions = {
      "edge_type is [E] in edge-id order: edge e's relation, an integer in [0, relations) stored as a number (an index "
      "tensor: convert it to integers; it has no gradient). Relations may be empty, and may be one.",
      "Each relation is aggregated apart: with aggr = mean, row i's edges of relation r are averaged over their own "
      "count (PyG's RGCNConv with aggr='mean'); a relation row i has no edge of contributes 0. Duplicate edges count.",
      "Destination i's own features are x[i], the i-th source row (n_dst ≤ n_src): root is [in_features, "
      "out_features], absent with root_weight = false; no self-loops are added.",
      "weight is [relations, in_features, out_features], or the bases [bases, in_features, out_features] with bases ≥ "
      "1, when comp [relations, bases] is present too (PyG's weight and comp); bias is [out_features], absent with "
      "bias = false."};
  auto inputs = [](const Graph& g, const Attributes& a) {
    const auto cfg = RgcnConfig::from_attributes(a);
    Shapes s{{"x", {g.n_src(), cfg.in_features}},
             {"edge_type", {g.num_edges()}},
             {"weight", {cfg.bases > 0 ? cfg.bases : cfg.relations, cfg.in_features, cfg.out_features}}};
    if (cfg.bases > 0) s["comp"] = {cfg.relations, cfg.bases};
    if (cfg.root_weight) s["root"] = {cfg.in_features, cfg.out_features};
    if (cfg.bias) s["bias"] = {cfg.out_features};
    return s;
  };
  auto outputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"y", {g.n_dst(), RgcnConfig::from_attributes(a).out_features}}};
  };
  auto evaluate = [](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
    using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
    const auto cfg = RgcnConfig::from_attributes(a);
    const RgcnParameters<T> p{input(in, "weight"), optional_input(in, "comp", cfg.bases > 0),
                              optional_input(in, "root", cfg.root_weight), optional_input(in, "bias", cfg.bias)};
    Evaluation<T> ev;
    ev.outputs["y"] = rgcn_forward(g, cfg, input(in, "x"), input(in, "edge_type"), p);
    if (!grad_out.empty()) {
      auto grads = rgcn_backward(g, cfg, input(in, "x"), input(in, "edge_type"), p, input(grad_out, "y"));
      ev.gradients["x"] = std::move(grads.grad_x);
      ev.gradients["weight"] = std::move(grads.grad.weight);
      if (cfg.bases > 0) ev.gradients["comp"] = std::move(grads.grad.comp);
      if (cfg.root_weight) ev.gradients["root"] = std::move(grads.grad.root);
      if (cfg.bias) ev.gradients["bias"] = std::move(grads.grad.bias);
    }
    return ev;
  };
  // gpu/layers/rgcn_layer.cpp reads the graph through run.graph() only, and grad_x walks the CSC
  // with edge_perm to find each edge's relation.
  spec.gpu.device_resident = true;
  spec.gpu.reads_edge_perm = true;
  TargetDef def = make_target(std::move(spec), inputs, outputs, evaluate);
  // x's columns and the weights' in axis: only the projections contract them (TargetDef::contracted_axes).
  def.contracted_axes = {{"x", 1}, {"weight", 1}, {"root", 0}};
  return def;
}

}  // namespace gnncheck::oracle
