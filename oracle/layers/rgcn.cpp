#include "oracle/layers/rgcn.h"

#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "oracle/layers/dense.h"
#include "oracle/layers/layer_config.h"
#include "oracle/layers/self_loops.h"

namespace gnncheck::oracle::layers {

RgcnConfig RgcnConfig::from_attributes(const Attributes& attrs) {
  RgcnConfig cfg;
  cfg.in_features = positive_attribute(attrs, "in_features", "rgcn");
  cfg.out_features = positive_attribute(attrs, "out_features", "rgcn");
  cfg.relations = positive_attribute(attrs, "relations", "rgcn");
  cfg.bases = attrs.get_int("bases", 0);
  if (cfg.bases < 0) throw InputError(fmt::format("layer 'rgcn': attribute 'bases' must be 0 (none) or at least 1, got {}", cfg.bases));
  const std::string aggr = attrs.get_string("aggr", "mean");
  if (aggr == "mean") {
    cfg.aggregation = RgcnAggregation::mean;
  } else if (aggr == "sum") {
    cfg.aggregation = RgcnAggregation::sum;
  } else {
    throw InputError(fmt::format("layer 'rgcn': attribute 'aggr' must be mean or sum, got '{}'", aggr));
  }
  cfg.root_weight = attrs.get_bool("root_weight", true);
  cfg.bias = attrs.get_bool("bias", true);
  return cfg;
}

namespace {

template <class T>
std::vector<index_t> checked_types(const Graph& g, const RgcnConfig& cfg, const DenseTensor<T>& x,
                                   const DenseTensor<T>& types, const RgcnParameters<T>& p) {
  require_destinations_are_sources(g, "rgcn");
  require_shape(x, {g.n_src(), cfg.in_features}, "rgcn: x");
  require_shape(types, {g.num_edges()}, "rgcn: edge_type (one relation per edge)");
  const index_t matrices = cfg.bases > 0 ? cfg.bases : cfg.relations;
  require_shape(p.weight, {matrices, cfg.in_features, cfg.out_features}, "rgcn: weight");
  if (cfg.bases > 0) require_matrix(p.comp, cfg.relations, cfg.bases, "rgcn: comp");
  if (cfg.root_weight) require_matrix(p.root, cfg.in_features, cfg.out_features, "rgcn: root");
  if (cfg.bias) require_shape(p.bias, {cfg.out_features}, "rgcn: bias");
  std::vector<index_t> type(static_cast<std::size_t>(g.num_edges()));
  for (index_t e = 0; e < g.num_edges(); ++e) {
    const double t = static_cast<double>(types[e]);
    if (!(t >= 0 && t < static_cast<double>(cfg.relations)) || t != static_cast<double>(static_cast<index_t>(t)))
      throw InputError(fmt::format("rgcn: edge {} has relation {:.17g}; relations are integers in [0, {})", e, t, cfg.relations));
    type[static_cast<std::size_t>(e)] = static_cast<index_t>(t);
  }
  return type;
}

// W_r for every relation: weight[r], or Σ_b comp[r, b] · basis[b].
template <class T>
DenseTensor<T> relation_weights(const RgcnConfig& cfg, const RgcnParameters<T>& p) {
  if (cfg.bases == 0) return p.weight;
  const index_t size = cfg.in_features * cfg.out_features;
  DenseTensor<T> w({cfg.relations, cfg.in_features, cfg.out_features});
  for (index_t r = 0; r < cfg.relations; ++r)
    for (index_t v = 0; v < size; ++v) {
      T sum = T(0);
      for (index_t b = 0; b < cfg.bases; ++b) sum += p.comp.at(r, b) * p.weight[b * size + v];
      w[r * size + v] = sum;
    }
  return w;
}

// h[i, r] = (1 / c_{i,r}) Σ x[col_e] over row i's edges of relation r, as [n_dst · relations, in].
template <class T>
DenseTensor<T> aggregate(const Graph& g, const RgcnConfig& cfg, const DenseTensor<T>& x, const std::vector<index_t>& type,
                         std::vector<index_t>& count) {
  const index_t in = cfg.in_features;
  DenseTensor<T> h({g.n_dst() * cfg.relations, in});
  count.assign(static_cast<std::size_t>(g.n_dst() * cfg.relations), 0);
  const auto row_ptr = g.row_ptr();
  const auto col = g.col_idx();
  for (index_t i = 0; i < g.n_dst(); ++i) {
    for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
      const index_t slot = i * cfg.relations + type[static_cast<std::size_t>(e)];
      ++count[static_cast<std::size_t>(slot)];
      for (index_t f = 0; f < in; ++f) h[slot * in + f] += x.at(col[e], f);
    }
    if (cfg.aggregation == RgcnAggregation::mean)
      for (index_t r = 0; r < cfg.relations; ++r)
        if (const index_t c = count[static_cast<std::size_t>(i * cfg.relations + r)]; c > 1)
          for (index_t f = 0; f < in; ++f) h[(i * cfg.relations + r) * in + f] /= static_cast<T>(c);
  }
  return h;
}

}  // namespace

template <class T>
DenseTensor<T> rgcn_forward(const Graph& g, const RgcnConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& types,
                            const RgcnParameters<T>& p) {
  const std::vector<index_t> type = checked_types(g, cfg, x, types, p);
  const DenseTensor<T> w = relation_weights(cfg, p);
  std::vector<index_t> count;
  const DenseTensor<T> h = aggregate(g, cfg, x, type, count);
  const index_t in = cfg.in_features, out = cfg.out_features;
  DenseTensor<T> y({g.n_dst(), out});
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t o = 0; o < out; ++o) {
      T sum = T(0);
      for (index_t r = 0; r < cfg.relations; ++r)
        for (index_t f = 0; f < in; ++f) sum += h[(i * cfg.relations + r) * in + f] * w[(r * in + f) * out + o];
      y.at(i, o) = sum;
    }
  if (cfg.root_weight) add_scaled(y, T(1), matmul(first_rows(x, g.n_dst()), p.root));
  if (cfg.bias) add_bias(y, p.bias);
  return y;
}

template <class T>
RgcnGrads<T> rgcn_backward(const Graph& g, const RgcnConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& types,
                           const RgcnParameters<T>& p, const DenseTensor<T>& grad_y) {
  const std::vector<index_t> type = checked_types(g, cfg, x, types, p);
  require_shape(grad_y, {g.n_dst(), cfg.out_features}, "rgcn: grad_y");
  const DenseTensor<T> w = relation_weights(cfg, p);
  std::vector<index_t> count;
  const DenseTensor<T> h = aggregate(g, cfg, x, type, count);
  const index_t in = cfg.in_features, out = cfg.out_features, size = in * out;
  RgcnGrads<T> grads;
  // grad_W_r[f, o] = Σ_i h[i, r, f] · grad_y[i, o]
  DenseTensor<T> grad_w({cfg.relations, in, out});
  for (index_t r = 0; r < cfg.relations; ++r)
    for (index_t f = 0; f < in; ++f)
      for (index_t o = 0; o < out; ++o) {
        T sum = T(0);
        for (index_t i = 0; i < g.n_dst(); ++i) sum += h[(i * cfg.relations + r) * in + f] * grad_y.at(i, o);
        grad_w[(r * in + f) * out + o] = sum;
      }
  // grad_x[col_e, f] += grad_h[i, type_e, f] / c, grad_h[i, r, f] = Σ_o grad_y[i, o] · W_r[f, o]
  grads.grad_x = DenseTensor<T>({g.n_src(), in});
  const auto row_ptr = g.row_ptr();
  const auto col = g.col_idx();
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
      const index_t r = type[static_cast<std::size_t>(e)];
      const index_t c = count[static_cast<std::size_t>(i * cfg.relations + r)];
      for (index_t f = 0; f < in; ++f) {
        T grad_h = T(0);
        for (index_t o = 0; o < out; ++o) grad_h += grad_y.at(i, o) * w[(r * in + f) * out + o];
        grads.grad_x.at(col[e], f) += cfg.aggregation == RgcnAggregation::mean && c > 1 ? grad_h / static_cast<T>(c) : grad_h;
      }
    }
  if (cfg.root_weight) {
    add_into_first_rows(grads.grad_x, T(1), matmul_a_bt(grad_y, p.root));
    grads.grad.root = matmul_at_b(first_rows(x, g.n_dst()), grad_y);
  }
  if (cfg.bias) grads.grad.bias = column_sums(grad_y);
  if (cfg.bases == 0) {
    grads.grad.weight = std::move(grad_w);
    return grads;
  }
  // W_r = Σ_b comp[r, b] · basis[b]
  grads.grad.weight = DenseTensor<T>({cfg.bases, in, out});
  grads.grad.comp = DenseTensor<T>({cfg.relations, cfg.bases});
  for (index_t b = 0; b < cfg.bases; ++b)
    for (index_t v = 0; v < size; ++v) {
      T sum = T(0);
      for (index_t r = 0; r < cfg.relations; ++r) sum += p.comp.at(r, b) * grad_w[r * size + v];
      grads.grad.weight[b * size + v] = sum;
    }
  for (index_t r = 0; r < cfg.relations; ++r)
    for (index_t b = 0; b < cfg.bases; ++b) {
      T sum = T(0);
      for (index_t v = 0; v < size; ++v) sum += grad_w[r * size + v] * p.weight[b * size + v];
      grads.grad.comp.at(r, b) = sum;
    }
  return grads;
}

#define GNNCHECK_INSTANTIATE(T)                                                                                         \
  template DenseTensor<T> rgcn_forward(const Graph&, const RgcnConfig&, const DenseTensor<T>&, const DenseTensor<T>&, \
                                       const RgcnParameters<T>&);                                                     \
  template RgcnGrads<T> rgcn_backward(const Graph&, const RgcnConfig&, const DenseTensor<T>&, const DenseTensor<T>&,  \
                                      const RgcnParameters<T>&, const DenseTensor<T>&);
GNNCHECK_INSTANTIATE(double)
GNNCHECK_INSTANTIATE(float)
#undef GNNCHECK_INSTANTIATE

}  // namespace gnncheck::oracle::layers
