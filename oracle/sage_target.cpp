// The catalogue entry of GraphSAGE (oracle/layers/sage.h).
#include <fmt/format.h>

#include "oracle/layers/dense.h"
#include "oracle/spmm.h"
#include "oracle/layer_target_support.h"
#include "oracle/layers/sage.h"

namespace gnncheck::oracle {

using namespace layers;
using namespace layer_catalogue;
using catalogue::make_target;

namespace {

void sage_kink_arguments(const Case& c, const Attributes& attrs, KinkArguments& k) {
  const auto cfg = layers::SageConfig::from_attributes(attrs);
  if (cfg.aggregation == layers::SageAggregation::mean && !cfg.project) return;  // a linear layer
  const Graph& g = *c.graph;
  const Tensor& x = tensor_of(c, "x");
  const index_t width = cfg.in_features;
  // The projection's pre-activation z = x·W_pool + b_pool and |x|·|W_pool| + |b_pool| (Σ|terms|).
  layers::SageParameters<double> p;
  Tensor z, z_abs;
  if (cfg.project) {
    p.weight_pool = tensor_of(c, "weight_pool");
    p.bias_pool = tensor_of(c, "bias_pool");
    z = matmul(x, p.weight_pool);
    layers::add_bias(z, p.bias_pool);
    z_abs = matmul(absolute(x), absolute(p.weight_pool));
    layers::add_bias(z_abs, absolute(p.bias_pool));
  }
  const Tensor messages = layers::sage_messages(cfg, x, p);
  const double projection_terms = cfg.project ? static_cast<double>(width + 2 + 4) : 0.0;
  auto magnitude = [&](index_t j, index_t f) { return cfg.project ? z_abs.at(j, f) : std::abs(x.at(j, f)); };
  struct Where {
    index_t row, column, edge, selected;  // row < 0: the projection's ReLU at source `edge`, column
  };
  auto where = std::make_shared<std::vector<Where>>();
  if (cfg.aggregation == layers::SageAggregation::max) {
    // A max's kink is a tie: per row and column, the selected edge's message against every other
    // edge's. An edge from the selected edge's own source carries the same message and sends the
    // gradient to the same row of x: no kink (an infinite offset keeps the count per edge fixed).
    const auto row_ptr = g.row_ptr();
    const auto col = g.col_idx();
    for (index_t i = 0; i < g.n_dst(); ++i)
      for (index_t f = 0; f < width; ++f) {
        const index_t sel = layers::sage_selected_edge(g, messages, i, f, layers::KinkSide::left);
        for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
          if (e == sel) continue;
          const bool same_source = col[e] == col[sel];
          k.offsets.push_back(same_source ? std::numeric_limits<double>::infinity()
                                          : messages.at(col[sel], f) - messages.at(col[e], f));
          k.abs_terms.push_back(same_source ? 0.0 : magnitude(col[sel], f) + magnitude(col[e], f));
          k.terms.push_back(2 + projection_terms);
          k.units.push_back({});  // a tie
          where->push_back({i, f, e, sel});
        }
      }
  }
  if (cfg.project) {
    // The projection's ReLU, at every source some edge reads.
    std::vector<char> read(static_cast<std::size_t>(g.n_src()), 0);
    for (const index_t j : g.col_idx()) read[static_cast<std::size_t>(j)] = 1;
    for (index_t j = 0; j < g.n_src(); ++j)
      if (read[static_cast<std::size_t>(j)])
        for (index_t f = 0; f < width; ++f) {
          k.offsets.push_back(z.at(j, f));
          k.abs_terms.push_back(z_abs.at(j, f));
          k.terms.push_back(projection_terms);
          k.units.push_back({0, j * width + f});
          where->push_back({-1, f, j, -1});
        }
  }
  k.upstream = {"x", "weight_pool", "bias_pool"};
  k.describe = [where](std::size_t n) {
    const Where& w = (*where)[n];
    if (w.row < 0) return fmt::format("the projection's ReLU pre-activation z[{}, {}]", w.edge, w.column);
    return fmt::format("the max of row {}, column {}: edge {}'s message against the selected edge {}'s", w.row, w.column,
                       w.edge, w.selected);
  };
}

}  // namespace

TargetDef sage_target() {
  TargetSpec spec{"sage", true,
                  "GraphSAGE layer: y = x_i W_self + agg_j(p_j) W_neigh + b, agg mean or max, p = x or ReLU(x W_pool + b_pool)",
                  {kX, parameter("weight_self"), parameter("weight_neigh"), parameter("bias"), parameter("weight_pool"),
                   parameter("bias_pool")},
                  {kY},
                  {in_features_attr(), out_features_attr(), bias_attr(),
                   catalogue::selfchecked_choices({"aggr", std::string("mean"),
                                                   "the neighbours' aggregation per feature: mean | max",
                                                   {std::string("mean"), std::string("max")}, true, true}),
                   // The projection alone and under the max (its two parameters reach y only through it).
                   catalogue::selfchecked({"project", false,
                                           "aggregate p = ReLU(x · weight_pool + bias_pool) instead of x (GraphSAGE's "
                                           "pool aggregator; PyG's project = true)",
                                           {false, true}, true, true},
                                          {{{"project", true}}, {{"project", true}, {"aggr", std::string("max")}}},
                                          {{{"project", true}, {"aggr", std::string("max")}}})},
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
  auto evaluate_at = [](KinkSide side, KinkFlips flips = {}) {
    return [side, flips](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
      using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
      auto cfg = SageConfig::from_attributes(a);
      cfg.kink_side = side;
      cfg.kink_flips = flips;
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
  def.kinks = one_sided_kink_hooks(sage_kink_arguments, evaluate_at);
  def.receptive_field = reads_own_features;
  // GraphSAGE-mean (Hamilton et al.), hidden 16, with GCN's optimizer settings and dropout.
  def.accuracy = AccuracyRecipe{.source = "Hamilton et al. (mean)"};
  return def;
}

}  // namespace gnncheck::oracle
