// The catalogue entry of GCN (oracle/layers/gcn.h).
#include "oracle/layer_target_support.h"
#include "oracle/layers/gcn.h"

namespace gnncheck::oracle {

using namespace layers;
using namespace layer_catalogue;
using catalogue::make_target;

TargetDef gcn_target() {
  TargetSpec spec{
      "gcn", true, "GCN layer (Kipf & Welling): y = norm(A+I) · x · W + b",
      {kX, parameter("weight"), parameter("bias")},
      {kY},
      {in_features_attr(), out_features_attr(), bias_attr(),
       catalogue::coin_attribute("self_loops", true, "aggregate over A + I (true) or A (false)"),
       catalogue::drawn_as({"norm", std::string("symmetric"),
                            "degree normalization: symmetric (D_dst^-1/2 A D_src^-1/2) | row_mean (D_dst^-1 A)",
                            {std::string("symmetric"), std::string("row_mean")}},
                           AttributeDraw::one_of({std::string("symmetric"), std::string("row_mean")}),
                           {{{"norm", std::string("row_mean")}}}),
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
  // x's columns and the weights' in axis: only the projections contract them (TargetDef::contracted_axes).
  def.contracted_axes = {{"x", 1}, {"weight", 0}};
  // Kipf & Welling: hidden 16, lr 0.01, weight decay 5e-4 on the first layer, dropout 0.5.
  def.accuracy = AccuracyRecipe{.source = "Kipf & Welling"};
  return def;
}

}  // namespace gnncheck::oracle
