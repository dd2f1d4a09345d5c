// The catalogue entries of GIN and GINE (oracle/layers/gin.h): one function makes both.
#include <fmt/format.h>

#include "oracle/layers/dense.h"
#include "oracle/spmm.h"
#include "oracle/layer_target_support.h"
#include "oracle/layers/gin.h"

namespace gnncheck::oracle {

using namespace layers;
using namespace layer_catalogue;
using catalogue::make_target;

namespace {

// GIN's and GINE's MLP ReLU at z₁ = h·W₁ + b₁, given h's aggregated part (A·x, or GINE's Σ ReLU(m))
// and the same on |inputs|, and how many terms and roundings each row of it carries.
void gin_mlp_kink_arguments(const Case& c, Tensor h, Tensor h_abs, const std::function<double(index_t)>& row_terms,
                            KinkArguments& k) {
  const Graph& g = *c.graph;
  const Tensor& x = tensor_of(c, "x");
  const Tensor& w1 = tensor_of(c, "weight1");
  const double eps = tensor_of(c, "eps")[0];
  const bool bias = c.parameters.count("bias1") || c.inputs.count("bias1");
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t f = 0; f < x.row_size(); ++f) {
      h.at(i, f) += (1 + eps) * x.at(i, f);
      h_abs.at(i, f) += (1 + std::abs(eps)) * std::abs(x.at(i, f));
    }
  Tensor z = matmul(h, w1), z_abs = matmul(h_abs, absolute(w1));
  if (bias) {
    layers::add_bias(z, tensor_of(c, "bias1"));
    layers::add_bias(z_abs, absolute(tensor_of(c, "bias1")));
  }
  const index_t width = z.row_size();
  const std::size_t first = k.offsets.size();
  for (index_t i = 0; i < z.rows(); ++i) {
    // Terms: the row's aggregated ones + 1, in_features products, the bias; roundings: the inputs,
    // (1+ε), each product.
    const double terms = row_terms(i) + static_cast<double>(1 + x.row_size() + 1 + 4);
    for (index_t f = 0; f < width; ++f) {
      k.offsets.push_back(z.at(i, f));
      k.abs_terms.push_back(z_abs.at(i, f));
      k.terms.push_back(terms);
      k.units.push_back({layers::kGinMlpSite, i * width + f});
    }
  }
  auto before = k.describe;
  k.describe = [width, first, before](std::size_t n) {
    if (n < first && before) return before(n);
    n -= first;
    return fmt::format("ReLU pre-activation z1[{}, {}]", static_cast<index_t>(n) / width, static_cast<index_t>(n) % width);
  };
}

// GIN's and GINE's kinks: GINE's message ReLUs, a max aggregation's ties, and the MLP's ReLU over
// h's aggregated part (computed for the case's aggregation, and on |inputs| for Σ|terms|).
void gin_family_kink_arguments(const Case& c, const Attributes& attrs, bool edge_messages, KinkArguments& k) {
  auto cfg = layers::GinConfig::from_attributes(attrs);
  cfg.edge_messages = edge_messages;
  const Graph& g = *c.graph;
  const Tensor& x = tensor_of(c, "x");
  const index_t width = x.row_size();
  const Tensor edge_attr = edge_messages ? tensor_of(c, "edge_attr") : Tensor();
  const auto col = g.col_idx();
  // Each edge's message on |inputs|: |x[col_e]| (+ |edge_attr[e]|), which bounds |its message|.
  Tensor v_abs({g.num_edges(), width});
  for (index_t e = 0; e < g.num_edges(); ++e)
    for (index_t f = 0; f < width; ++f)
      v_abs.at(e, f) = std::abs(x.at(col[e], f)) + (edge_messages ? std::abs(edge_attr.at(e, f)) : 0.0);
  struct Where {
    int kind;  // 0: a message's ReLU (edge, column), 1: a max's tie (row, column, edge, selected)
    index_t row, column, edge, selected;
  };
  auto where = std::make_shared<std::vector<Where>>();
  if (edge_messages) {
    // The messages' ReLU at m_e = x[col_e] + edge_attr[e]: one sum of two terms, each an input.
    const Tensor m = layers::gine_messages(g, x, edge_attr);
    for (index_t e = 0; e < g.num_edges(); ++e)
      for (index_t f = 0; f < width; ++f) {
        k.offsets.push_back(m.at(e, f));
        k.abs_terms.push_back(v_abs.at(e, f));
        k.terms.push_back(2 + 2);
        k.units.push_back({layers::kGineMessageSite, e * width + f});
        where->push_back({0, -1, f, e, -1});
      }
  }
  const Tensor v = layers::gin_edge_messages(g, cfg, x, edge_attr);
  const auto row_ptr = g.row_ptr();
  const bool max = cfg.aggregation == layers::GinAggregation::max;
  if (max)
    // A max's kink is a tie: per row and column, the selected edge's message against every other
    // edge's. GIN's edges from the selected edge's own source carry the same message to the same
    // row of x: no kink (an infinite offset keeps the count per edge fixed). GINE's messages are the
    // edges' own.
    for (index_t i = 0; i < g.n_dst(); ++i)
      for (index_t f = 0; f < width; ++f) {
        const index_t sel = layers::gin_selected_edge(g, v, i, f, layers::KinkSide::left);
        for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
          if (e == sel) continue;
          const bool same = !edge_messages && col[e] == col[sel];
          k.offsets.push_back(same ? std::numeric_limits<double>::infinity() : v.at(sel, f) - v.at(e, f));
          k.abs_terms.push_back(same ? 0.0 : v_abs.at(sel, f) + v_abs.at(e, f));
          k.terms.push_back(edge_messages ? 4 + 4 : 2);
          k.units.push_back({});  // a tie
          where->push_back({1, i, f, e, sel});
        }
      }
  // h's aggregated part and its |inputs| counterpart, and the terms each row of it carries.
  Tensor h({g.n_dst(), width}), h_abs({g.n_dst(), width});
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t d = row_ptr[i + 1] - row_ptr[i];
    for (index_t f = 0; f < width; ++f) {
      if (max) {
        if (const index_t sel = layers::gin_selected_edge(g, v, i, f, layers::KinkSide::left); sel >= 0) h.at(i, f) = v.at(sel, f);
        for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) h_abs.at(i, f) = std::max(h_abs.at(i, f), v_abs.at(e, f));
        continue;
      }
      for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
        h.at(i, f) += v.at(e, f);
        h_abs.at(i, f) += v_abs.at(e, f);
      }
      if (cfg.aggregation == layers::GinAggregation::mean && d > 0) {
        h.at(i, f) /= static_cast<double>(d);
        h_abs.at(i, f) /= static_cast<double>(d);
      }
    }
  }
  // Terms and roundings of a row of h's aggregated part: each message's (GINE: a sum and a ReLU), a
  // mean's division; a max passes one message through.
  const double per_message = edge_messages ? 2.0 : 1.0;
  const auto aggregation = cfg.aggregation;
  gin_mlp_kink_arguments(c, std::move(h), std::move(h_abs),
                         [&g, per_message, aggregation](index_t i) {
                           const double d = static_cast<double>(g.in_degree(i));
                           if (aggregation == layers::GinAggregation::max) return per_message;
                           return per_message * d + (aggregation == layers::GinAggregation::mean ? 1.0 : 0.0);
                         },
                         k);
  k.upstream = {"x", "weight1", "bias1", "eps"};
  if (edge_messages) {
    k.upstream.push_back("edge_attr");
    k.site_inputs[layers::kGineMessageSite] = {"x", "edge_attr"};
  }
  const std::size_t before = where->size();
  auto mlp = k.describe;
  k.describe = [where, before, mlp](std::size_t n) {
    if (n >= before) return mlp(n);
    const Where& w = (*where)[n];
    if (w.kind == 0)
      return fmt::format("message ReLU pre-activation x[col_e] + edge_attr[e] at e = {}, column {}", w.edge, w.column);
    return fmt::format("the max of row {}, column {}: edge {}'s message against the selected edge {}'s", w.row, w.column,
                       w.edge, w.selected);
  };
}

void gin_kink_arguments(const Case& c, const Attributes& attrs, KinkArguments& k) {
  gin_family_kink_arguments(c, attrs, false, k);
}

void gine_kink_arguments(const Case& c, const Attributes& attrs, KinkArguments& k) {
  gin_family_kink_arguments(c, attrs, true, k);
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
