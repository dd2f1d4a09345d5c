// The catalogue entries of GIN and GINE (oracle/layers/gin.h): one function makes both.
#include "oracle/layer_target_support.h"
#include "oracle/layers/gin.h"

namespace gnncheck::oracle {

using namespace layers;
using namespace layer_catalogue;
using catalogue::make_target;

namespace {

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
       catalogue::selfchecked_choices({"aggr", std::string("sum"),
                                       "the messages' aggregation per feature: sum (the paper's) | mean | max",
                                       {std::string("sum"), std::string("mean"), std::string("max")}, true,
                                       !edge_messages})},
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
  auto evaluate_at = [edge_messages](KinkSide side, KinkFlips flips = {}) {
    return [side, flips, edge_messages](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
      using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
      auto cfg = GinConfig::from_attributes(a);
      cfg.kink_side = side;
      cfg.kink_flips = flips;
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
  def.kinks = one_sided_kink_hooks(edge_messages ? gine_kink_arguments : gin_kink_arguments, evaluate_at);
  def.receptive_field = reads_own_features;
  // GIN: x's columns and weight1's in axis, only the first projection contracts them (GINE adds
  // edge_attr to x, so its axis would have to move too: not declared).
  if (!edge_messages) def.contracted_axes = {{"x", 1}, {"weight1", 0}};
  // GIN-0 (Xu et al.; ε frozen at 0), hidden 64, with GCN's optimizer settings and dropout.
  if (!edge_messages) def.accuracy = AccuracyRecipe{.source = "Xu et al. (GIN-0)", .hidden = 64, .frozen = {"eps"}};
  return def;
}

}  // namespace

TargetDef gin_target() { return gin_family_target(false); }
TargetDef gine_target() { return gin_family_target(true); }

}  // namespace gnncheck::oracle
