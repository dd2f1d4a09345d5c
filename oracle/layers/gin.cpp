#include "oracle/layers/gin.h"

#include <fmt/format.h>

#include "core/error.h"

#include "oracle/layers/dense.h"
#include "oracle/layers/layer_config.h"
#include "oracle/layers/self_loops.h"
#include "oracle/spmm.h"

namespace gnncheck::oracle::layers {

GinConfig GinConfig::from_attributes(const Attributes& attrs) {
  GinConfig cfg;
  cfg.in_features = positive_attribute(attrs, "in_features", "gin");
  cfg.hidden_features = positive_attribute(attrs, "hidden_features", "gin");
  cfg.out_features = positive_attribute(attrs, "out_features", "gin");
  cfg.bias = attrs.get_bool("bias");
  const std::string aggr = attrs.get_string("aggr", "sum");
  if (aggr == "sum") {
    cfg.aggregation = GinAggregation::sum;
  } else if (aggr == "mean") {
    cfg.aggregation = GinAggregation::mean;
  } else if (aggr == "max") {
    cfg.aggregation = GinAggregation::max;
  } else {
    throw InputError(fmt::format("layer 'gin': attribute 'aggr' must be sum, mean or max, got '{}'", aggr));
  }
  return cfg;
}

namespace {

template <class T>
void check_inputs(const Graph& g, const GinConfig& cfg, const DenseTensor<T>& x, const GinParameters<T>& p,
                  const DenseTensor<T>& edge_attr) {
  require_destinations_are_sources(g, "gin");
  require_shape(x, {g.n_src(), cfg.in_features}, "gin: x");
  if (cfg.edge_messages) require_shape(edge_attr, {g.num_edges(), cfg.in_features}, "gine: edge_attr");
  require_matrix(p.weight1, cfg.in_features, cfg.hidden_features, "gin: weight1");
  require_matrix(p.weight2, cfg.hidden_features, cfg.out_features, "gin: weight2");
  if (cfg.bias) {
    require_shape(p.bias1, {cfg.hidden_features}, "gin: bias1");
    require_shape(p.bias2, {cfg.out_features}, "gin: bias2");
  }
  require_shape(p.eps, {1}, "gin: eps");
}

// The intermediate values backward needs.
template <class T>
struct GinActivations {
  DenseTensor<T> x_dst;  // x's first n_dst rows
  DenseTensor<T> m;      // GINE: x[col_e] + edge_attr[e]
  DenseTensor<T> h;      // (1 + ε) x_dst + A x (GINE: + Σ_row ReLU(m))
  DenseTensor<T> z1;     // h W1 + b1
  DenseTensor<T> a1;     // ReLU(z1)
};

template <class T>
GinActivations<T> gin_activations(const Graph& g, const GinConfig& cfg, const DenseTensor<T>& x,
                                  const GinParameters<T>& p, const DenseTensor<T>& edge_attr) {
  GinActivations<T> act;
  act.x_dst = first_rows(x, g.n_dst());
  if (cfg.edge_messages) act.m = gine_messages(g, x, edge_attr);
  if (!cfg.edge_messages && cfg.aggregation == GinAggregation::sum) {
    act.h = spmm_forward(g, x);
  } else {
    // The messages of every edge, aggregated per row and feature.
    const DenseTensor<T> v = cfg.edge_messages ? relu(act.m) : gin_edge_messages(g, cfg, x, edge_attr);
    act.h = DenseTensor<T>({g.n_dst(), x.row_size()});
    const auto row_of = g.row_of_edge();
    if (cfg.aggregation == GinAggregation::max) {
      for (index_t i = 0; i < g.n_dst(); ++i)
        for (index_t f = 0; f < x.row_size(); ++f)
          if (const index_t e = gin_selected_edge(g, v, i, f, cfg.kink_side); e >= 0) act.h.at(i, f) = v.at(e, f);
    } else {
      for (index_t e = 0; e < g.num_edges(); ++e)
        for (index_t f = 0; f < x.row_size(); ++f) act.h.at(row_of[e], f) += v.at(e, f);
      if (cfg.aggregation == GinAggregation::mean)
        for (index_t i = 0; i < g.n_dst(); ++i)
          if (const index_t d = g.in_degree(i); d > 0)
            for (index_t f = 0; f < x.row_size(); ++f) act.h.at(i, f) /= static_cast<T>(d);
    }
  }
  add_scaled(act.h, T(1) + p.eps[0], act.x_dst);
  act.z1 = matmul(act.h, p.weight1);
  if (cfg.bias) add_bias(act.z1, p.bias1);
  act.a1 = relu(act.z1);
  return act;
}

}  // namespace

template <class T>
DenseTensor<T> gin_edge_messages(const Graph& g, const GinConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& edge_attr) {
  if (cfg.edge_messages) return relu(gine_messages(g, x, edge_attr));
  DenseTensor<T> v({g.num_edges(), x.row_size()});
  const auto col = g.col_idx();
  for (index_t e = 0; e < g.num_edges(); ++e)
    for (index_t f = 0; f < x.row_size(); ++f) v.at(e, f) = x.at(col[e], f);
  return v;
}

template <class T>
index_t gin_selected_edge(const Graph& g, const DenseTensor<T>& messages, index_t i, index_t f, KinkSide side) {
  const auto row_ptr = g.row_ptr();
  index_t selected = -1;
  for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e)
    if (selected < 0 || messages.at(e, f) > messages.at(selected, f) ||
        (side == KinkSide::right && messages.at(e, f) == messages.at(selected, f)))
      selected = e;
  return selected;
}

template <class T>
DenseTensor<T> gine_messages(const Graph& g, const DenseTensor<T>& x, const DenseTensor<T>& edge_attr) {
  DenseTensor<T> m({g.num_edges(), x.row_size()});
  const auto col = g.col_idx();
  for (index_t e = 0; e < g.num_edges(); ++e)
    for (index_t f = 0; f < x.row_size(); ++f) m.at(e, f) = x.at(col[e], f) + edge_attr.at(e, f);
  return m;
}

template <class T>
DenseTensor<T> gin_forward(const Graph& g, const GinConfig& cfg, const DenseTensor<T>& x, const GinParameters<T>& p,
                           const DenseTensor<T>& edge_attr) {
  check_inputs(g, cfg, x, p, edge_attr);
  const GinActivations<T> act = gin_activations(g, cfg, x, p, edge_attr);
  DenseTensor<T> y = matmul(act.a1, p.weight2);
  if (cfg.bias) add_bias(y, p.bias2);
  return y;
}

template <class T>
GinGrads<T> gin_backward(const Graph& g, const GinConfig& cfg, const DenseTensor<T>& x, const GinParameters<T>& p,
                         const DenseTensor<T>& grad_y, const DenseTensor<T>& edge_attr) {
  check_inputs(g, cfg, x, p, edge_attr);
  require_shape(grad_y, {g.n_dst(), cfg.out_features}, "gin: grad_y");
  const GinActivations<T> act = gin_activations(g, cfg, x, p, edge_attr);
  GinGrads<T> grads;
  grads.grad.weight2 = matmul_at_b(act.a1, grad_y);
  const DenseTensor<T> grad_z1 = relu_backward(act.z1, matmul_a_bt(grad_y, p.weight2), cfg.kink_side,
                                                   cfg.kink_flips.at(kGinMlpSite));
  grads.grad.weight1 = matmul_at_b(act.h, grad_z1);
  if (cfg.bias) {
    grads.grad.bias2 = column_sums(grad_y);
    grads.grad.bias1 = column_sums(grad_z1);
  }
  const DenseTensor<T> grad_h = matmul_a_bt(grad_z1, p.weight1);
  if (!cfg.edge_messages && cfg.aggregation == GinAggregation::sum) {
    grads.grad_x = spmm_backward(g, grad_h);  // Aᵀ · grad_h
  } else {
    // Each message's gradient: its row's grad_h (sum), divided by the row's length (mean), or only
    // where its edge is the selected one (max); through GINE's ReLU it reaches the edge's features.
    // Then the messages' sources gather them (Aᵀ over the messages).
    DenseTensor<T> grad_v({g.num_edges(), cfg.in_features});
    const auto row_of = g.row_of_edge();
    const auto col = g.col_idx();
    if (cfg.aggregation == GinAggregation::max) {
      const DenseTensor<T> v = gin_edge_messages(g, cfg, x, edge_attr);
      for (index_t i = 0; i < g.n_dst(); ++i)
        for (index_t f = 0; f < cfg.in_features; ++f)
          if (const index_t e = gin_selected_edge(g, v, i, f, cfg.kink_side); e >= 0) grad_v.at(e, f) = grad_h.at(i, f);
    } else {
      for (index_t e = 0; e < g.num_edges(); ++e) {
        const T scale = cfg.aggregation == GinAggregation::mean ? T(1) / static_cast<T>(g.in_degree(row_of[e])) : T(1);
        for (index_t f = 0; f < cfg.in_features; ++f) grad_v.at(e, f) = grad_h.at(row_of[e], f) * scale;
      }
    }
    if (cfg.edge_messages) {
      grads.grad_edge_attr = relu_backward(act.m, grad_v, cfg.kink_side, cfg.kink_flips.at(kGineMessageSite));
      grad_v = grads.grad_edge_attr;
    }
    grads.grad_x = DenseTensor<T>({g.n_src(), cfg.in_features});
    for (index_t e = 0; e < g.num_edges(); ++e)
      for (index_t f = 0; f < cfg.in_features; ++f) grads.grad_x.at(col[e], f) += grad_v.at(e, f);
  }
  add_into_first_rows(grads.grad_x, T(1) + p.eps[0], grad_h);
  T grad_eps = 0;
  for (index_t k = 0; k < grad_h.size(); ++k) grad_eps += grad_h[k] * act.x_dst[k];
  grads.grad.eps = DenseTensor<T>({1}, std::vector<T>{grad_eps});
  return grads;
}

template DenseTensor<double> gin_forward(const Graph&, const GinConfig&, const Tensor&, const GinParameters<double>&,
                                         const Tensor&);
template DenseTensor<float> gin_forward(const Graph&, const GinConfig&, const TensorF&, const GinParameters<float>&,
                                        const TensorF&);
template GinGrads<double> gin_backward(const Graph&, const GinConfig&, const Tensor&, const GinParameters<double>&,
                                       const Tensor&, const Tensor&);
template GinGrads<float> gin_backward(const Graph&, const GinConfig&, const TensorF&, const GinParameters<float>&,
                                      const TensorF&, const TensorF&);
template Tensor gine_messages(const Graph&, const Tensor&, const Tensor&);
template Tensor gin_edge_messages(const Graph&, const GinConfig&, const Tensor&, const Tensor&);
template TensorF gin_edge_messages(const Graph&, const GinConfig&, const TensorF&, const TensorF&);
template index_t gin_selected_edge(const Graph&, const Tensor&, index_t, index_t, KinkSide);
template index_t gin_selected_edge(const Graph&, const TensorF&, index_t, index_t, KinkSide);
template TensorF gine_messages(const Graph&, const TensorF&, const TensorF&);

}  // namespace gnncheck::oracle::layers
