#include "oracle/layers/sage.h"

#include <fmt/format.h>

#include "core/error.h"

#include "oracle/degree_norm.h"
#include "oracle/layers/dense.h"
#include "oracle/layers/layer_config.h"
#include "oracle/layers/self_loops.h"

namespace gnncheck::oracle::layers {

SageConfig SageConfig::from_attributes(const Attributes& attrs) {
  SageConfig cfg;
  cfg.in_features = positive_attribute(attrs, "in_features", "sage");
  cfg.out_features = positive_attribute(attrs, "out_features", "sage");
  cfg.bias = attrs.get_bool("bias");
  const std::string aggr = attrs.get_string("aggr", "mean");
  if (aggr == "mean") {
    cfg.aggregation = SageAggregation::mean;
  } else if (aggr == "max") {
    cfg.aggregation = SageAggregation::max;
  } else {
    throw InputError(fmt::format("layer 'sage': attribute 'aggr' must be mean or max, got '{}'", aggr));
  }
  cfg.project = attrs.get_bool("project", false);
  return cfg;
}

namespace {

template <class T>
void check_inputs(const Graph& g, const SageConfig& cfg, const DenseTensor<T>& x, const SageParameters<T>& p) {
  require_destinations_are_sources(g, "sage");
  require_shape(x, {g.n_src(), cfg.in_features}, "sage: x");
  require_matrix(p.weight_self, cfg.in_features, cfg.out_features, "sage: weight_self");
  require_matrix(p.weight_neigh, cfg.in_features, cfg.out_features, "sage: weight_neigh");
  if (cfg.bias) require_shape(p.bias, {cfg.out_features}, "sage: bias");
  if (cfg.project) {
    require_matrix(p.weight_pool, cfg.in_features, cfg.in_features, "sage: weight_pool");
    require_shape(p.bias_pool, {cfg.in_features}, "sage: bias_pool");
  }
}

template <class T>
DenseTensor<T> max_aggregate(const Graph& g, const DenseTensor<T>& messages, KinkSide side) {
  DenseTensor<T> agg({g.n_dst(), messages.row_size()});
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t f = 0; f < messages.row_size(); ++f)
      if (const index_t e = sage_selected_edge(g, messages, i, f, side); e >= 0) agg.at(i, f) = messages.at(g.col_idx()[e], f);
  return agg;
}

template <class T>
DenseTensor<T> aggregate(const Graph& g, const SageConfig& cfg, const DenseTensor<T>& messages) {
  return cfg.aggregation == SageAggregation::mean ? normalized_spmm_forward(g, DegreeNorm::row_mean, messages)
                                                  : max_aggregate(g, messages, cfg.kink_side);
}

}  // namespace

template <class T>
index_t sage_selected_edge(const Graph& g, const DenseTensor<T>& messages, index_t i, index_t f, KinkSide side) {
  const auto row_ptr = g.row_ptr();
  const auto col = g.col_idx();
  index_t selected = -1;
  for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
    const T v = messages.at(col[e], f);
    if (selected < 0) {
      selected = e;
      continue;
    }
    const T best = messages.at(col[selected], f);
    if (v > best || (side == KinkSide::right && v == best)) selected = e;
  }
  return selected;
}

template <class T>
DenseTensor<T> sage_messages(const SageConfig& cfg, const DenseTensor<T>& x, const SageParameters<T>& p, DenseTensor<T>* z) {
  if (!cfg.project) return x;
  DenseTensor<T> pre = matmul(x, p.weight_pool);
  add_bias(pre, p.bias_pool);
  DenseTensor<T> out = relu(pre);
  if (z) *z = std::move(pre);
  return out;
}

template <class T>
DenseTensor<T> sage_forward(const Graph& g, const SageConfig& cfg, const DenseTensor<T>& x, const SageParameters<T>& p) {
  check_inputs(g, cfg, x, p);
  DenseTensor<T> y = matmul(first_rows(x, g.n_dst()), p.weight_self);
  add_scaled(y, T(1), matmul(aggregate(g, cfg, sage_messages(cfg, x, p)), p.weight_neigh));
  if (cfg.bias) add_bias(y, p.bias);
  return y;
}

template <class T>
SageGrads<T> sage_backward(const Graph& g, const SageConfig& cfg, const DenseTensor<T>& x, const SageParameters<T>& p,
                           const DenseTensor<T>& grad_y) {
  check_inputs(g, cfg, x, p);
  require_shape(grad_y, {g.n_dst(), cfg.out_features}, "sage: grad_y");
  DenseTensor<T> z;
  const DenseTensor<T> messages = sage_messages(cfg, x, p, &z);
  SageGrads<T> grads;
  grads.grad.weight_self = matmul_at_b(first_rows(x, g.n_dst()), grad_y);
  grads.grad.weight_neigh = matmul_at_b(aggregate(g, cfg, messages), grad_y);
  if (cfg.bias) grads.grad.bias = column_sums(grad_y);
  const DenseTensor<T> grad_agg = matmul_a_bt(grad_y, p.weight_neigh);
  DenseTensor<T> grad_messages;
  if (cfg.aggregation == SageAggregation::mean) {
    grad_messages = normalized_spmm_backward(g, DegreeNorm::row_mean, grad_agg);
  } else {
    grad_messages = DenseTensor<T>({g.n_src(), cfg.in_features});
    for (index_t i = 0; i < g.n_dst(); ++i)
      for (index_t f = 0; f < cfg.in_features; ++f)
        if (const index_t e = sage_selected_edge(g, messages, i, f, cfg.kink_side); e >= 0)
          grad_messages.at(g.col_idx()[e], f) += grad_agg.at(i, f);
  }
  if (cfg.project) {
    const DenseTensor<T> grad_z = relu_backward(z, grad_messages, cfg.kink_side, cfg.kink_flips.at(0));
    grads.grad.weight_pool = matmul_at_b(x, grad_z);
    grads.grad.bias_pool = column_sums(grad_z);
    grads.grad_x = matmul_a_bt(grad_z, p.weight_pool);
  } else {
    grads.grad_x = std::move(grad_messages);
  }
  add_into_first_rows(grads.grad_x, T(1), matmul_a_bt(grad_y, p.weight_self));
  return grads;
}

#define GNNCHECK_INSTANTIATE(T)                                                                                   \
  template DenseTensor<T> sage_forward(const Graph&, const SageConfig&, const DenseTensor<T>&,                    \
                                       const SageParameters<T>&);                                                 \
  template SageGrads<T> sage_backward(const Graph&, const SageConfig&, const DenseTensor<T>&,                     \
                                      const SageParameters<T>&, const DenseTensor<T>&);                           \
  template DenseTensor<T> sage_messages(const SageConfig&, const DenseTensor<T>&, const SageParameters<T>&,       \
                                        DenseTensor<T>*);                                                         \
  template index_t sage_selected_edge(const Graph&, const DenseTensor<T>&, index_t, index_t, KinkSide);
GNNCHECK_INSTANTIATE(double)
GNNCHECK_INSTANTIATE(float)
#undef GNNCHECK_INSTANTIATE

}  // namespace gnncheck::oracle::layers
