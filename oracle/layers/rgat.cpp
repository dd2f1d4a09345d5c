#include "oracle/layers/rgat.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "oracle/layers/dense.h"
#include "oracle/layers/heads.h"
#include "oracle/layers/layer_config.h"
#include "oracle/layers/self_loops.h"

namespace gnncheck::oracle::layers {

RgatConfig RgatConfig::from_attributes(const Attributes& attrs) {
  RgatConfig cfg;
  cfg.in_features = positive_attribute(attrs, "in_features", "rgat");
  cfg.out_features = positive_attribute(attrs, "out_features", "rgat");
  cfg.heads = positive_attribute(attrs, "heads", "rgat");
  cfg.relations = positive_attribute(attrs, "relations", "rgat");
  cfg.concat = attrs.get_bool("concat", true);
  cfg.bias = attrs.get_bool("bias", true);
  cfg.negative_slope = attrs.get_double("negative_slope", 0.2);
  return cfg;
}

namespace {

template <class T>
std::vector<index_t> checked_types(const Graph& g, const RgatConfig& cfg, const DenseTensor<T>& x,
                                   const DenseTensor<T>& types, const RgatParameters<T>& p) {
  require_destinations_are_sources(g, "rgat");
  require_shape(x, {g.n_src(), cfg.in_features}, "rgat: x");
  require_shape(types, {g.num_edges()}, "rgat: edge_type (one relation per edge)");
  require_shape(p.weight, {cfg.relations, cfg.in_features, cfg.width()}, "rgat: weight");
  require_matrix(p.q, cfg.width(), cfg.heads, "rgat: q");
  require_matrix(p.k, cfg.width(), cfg.heads, "rgat: k");
  if (cfg.bias) require_shape(p.bias, {cfg.output_width()}, "rgat: bias");
  std::vector<index_t> type(static_cast<std::size_t>(g.num_edges()));
  for (index_t e = 0; e < g.num_edges(); ++e) {
    const double t = static_cast<double>(types[e]);
    if (!(t >= 0 && t < static_cast<double>(cfg.relations)) || t != static_cast<double>(static_cast<index_t>(t)))
      throw InputError(
          fmt::format("rgat: edge {} has relation {:.17g}; relations are integers in [0, {})", e, t, cfg.relations));
    type[static_cast<std::size_t>(e)] = static_cast<index_t>(t);
  }
  return type;
}

// Per edge (i ← j) of relation r: out_i = x[i] · W_r and out_j = x[j] · W_r, [E, H·C] each.
template <class T>
struct Projections {
  DenseTensor<T> out_i, out_j;
};

template <class T>
Projections<T> project(const Graph& g, const RgatConfig& cfg, const DenseTensor<T>& x, const std::vector<index_t>& type,
                       const DenseTensor<T>& weight) {
  const index_t in = cfg.in_features, width = cfg.width();
  Projections<T> pr{DenseTensor<T>({g.num_edges(), width}), DenseTensor<T>({g.num_edges(), width})};
  const auto row = g.row_of_edge();
  const auto col = g.col_idx();
  for (index_t e = 0; e < g.num_edges(); ++e) {
    const T* w = weight.data() + type[static_cast<std::size_t>(e)] * in * width;
    const T* xi = x.row(row[e]);
    const T* xj = x.row(col[e]);
    for (index_t m = 0; m < width; ++m) {
      T si = T(0), sj = T(0);
      for (index_t f = 0; f < in; ++f) {
        si += xi[f] * w[f * width + m];
        sj += xj[f] * w[f * width + m];
      }
      pr.out_i.at(e, m) = si;
      pr.out_j.at(e, m) = sj;
    }
  }
  return pr;
}

// The edges of row i that share one softmax: all of them, or those of one relation.
template <class Fn>
void for_each_softmax_group(const Graph& g, const RgatConfig& cfg, const std::vector<index_t>& type, Fn&& fn) {
  std::vector<index_t> group;
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t begin = g.row_ptr()[i], end = g.row_ptr()[i + 1];
    if (begin == end) continue;
    const index_t groups = cfg.softmax == RgatSoftmax::across_relations ? 1 : cfg.relations;
    for (index_t r = 0; r < groups; ++r) {
      group.clear();
      for (index_t e = begin; e < end; ++e)
        if (groups == 1 || type[static_cast<std::size_t>(e)] == r) group.push_back(e);
      if (!group.empty()) fn(group);
    }
  }
}

// Softmax of the logits over each group, per head, with max subtraction, in edge-id order.
template <class T>
DenseTensor<T> grouped_softmax(const Graph& g, const RgatConfig& cfg, const std::vector<index_t>& type,
                               const DenseTensor<T>& logits) {
  DenseTensor<T> alpha(logits.shape());
  for_each_softmax_group(g, cfg, type, [&](const std::vector<index_t>& group) {
    for (index_t h = 0; h < cfg.heads; ++h) {
      T top = -INFINITY;
      for (index_t e : group) top = std::max(top, logits.at(e, h));
      T sum = T(0);
      for (index_t e : group) sum += (alpha.at(e, h) = std::exp(logits.at(e, h) - top));
      for (index_t e : group) alpha.at(e, h) /= sum;
    }
  });
  return alpha;
}

template <class T>
DenseTensor<T> grouped_softmax_backward(const Graph& g, const RgatConfig& cfg, const std::vector<index_t>& type,
                                        const DenseTensor<T>& alpha, const DenseTensor<T>& grad_alpha) {
  DenseTensor<T> grad(alpha.shape());
  for_each_softmax_group(g, cfg, type, [&](const std::vector<index_t>& group) {
    for (index_t h = 0; h < cfg.heads; ++h) {
      T dot = T(0);
      for (index_t e : group) dot += alpha.at(e, h) * grad_alpha.at(e, h);
      for (index_t e : group) grad.at(e, h) = alpha.at(e, h) * (grad_alpha.at(e, h) - dot);
    }
  });
  return grad;
}

template <class T>
struct RgatActivations {
  std::vector<index_t> type;
  Projections<T> pr;
  DenseTensor<T> z;      // [E, H]
  DenseTensor<T> alpha;  // [E, H]
};

template <class T>
RgatActivations<T> activations(const Graph& g, const RgatConfig& cfg, const DenseTensor<T>& x,
                               const DenseTensor<T>& types, const RgatParameters<T>& p) {
  RgatActivations<T> act;
  act.type = checked_types(g, cfg, x, types, p);
  act.pr = project(g, cfg, x, act.type, p.weight);
  act.z = matmul(act.pr.out_i, p.q);
  add_scaled(act.z, T(1), matmul(act.pr.out_j, p.k));
  act.alpha = grouped_softmax(g, cfg, act.type, leaky_relu(act.z, static_cast<T>(cfg.negative_slope)));
  return act;
}

template <class T>
DenseTensor<T> output(const Graph& g, const RgatConfig& cfg, const RgatActivations<T>& act, const RgatParameters<T>& p) {
  const index_t width = cfg.width(), C = cfg.out_features;
  DenseTensor<T> out({g.n_dst(), width});
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e)
      for (index_t m = 0; m < width; ++m) out.at(i, m) += act.alpha.at(e, m / C) * act.pr.out_j.at(e, m);
  DenseTensor<T> y = join_heads(out, cfg.concat, cfg.heads, C);
  if (cfg.bias) add_bias(y, p.bias);
  return y;
}

}  // namespace

template <class T>
DenseTensor<T> rgat_pre_activation(const Graph& g, const RgatConfig& cfg, const DenseTensor<T>& x,
                                   const DenseTensor<T>& types, const RgatParameters<T>& p) {
  return activations(g, cfg, x, types, p).z;
}

template <class T>
DenseTensor<T> rgat_forward(const Graph& g, const RgatConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& types,
                            const RgatParameters<T>& p) {
  return output(g, cfg, activations(g, cfg, x, types, p), p);
}

template <class T>
RgatGrads<T> rgat_backward(const Graph& g, const RgatConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& types,
                           const RgatParameters<T>& p, const DenseTensor<T>& grad_y) {
  RgatActivations<T> act = activations(g, cfg, x, types, p);
  require_shape(grad_y, {g.n_dst(), cfg.output_width()}, "rgat: grad_y");
  const index_t in = cfg.in_features, width = cfg.width(), C = cfg.out_features, E = g.num_edges();
  RgatGrads<T> grads;
  grads.y = output(g, cfg, act, p);
  if (cfg.bias) grads.grad.bias = column_sums(grad_y);

  // The aggregation: alpha meets out_j's head, out_j meets alpha.
  const DenseTensor<T> grad_out = join_heads_backward(grad_y, cfg.concat, cfg.heads, C);
  DenseTensor<T> grad_alpha({E, cfg.heads}), grad_out_j({E, width});
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e)
      for (index_t m = 0; m < width; ++m) {
        grad_alpha.at(e, m / C) += grad_out.at(i, m) * act.pr.out_j.at(e, m);
        grad_out_j.at(e, m) = act.alpha.at(e, m / C) * grad_out.at(i, m);
      }
  const DenseTensor<T> grad_logits = grouped_softmax_backward(g, cfg, act.type, act.alpha, grad_alpha);
  const DenseTensor<T> grad_z = leaky_relu_backward(act.z, static_cast<T>(cfg.negative_slope), grad_logits,
                                                    cfg.kink_side, cfg.kink_flips.at(0));

  // z = out_i · q + out_j · k.
  grads.grad.q = matmul_at_b(act.pr.out_i, grad_z);
  grads.grad.k = matmul_at_b(act.pr.out_j, grad_z);
  const DenseTensor<T> grad_out_i = matmul_a_bt(grad_z, p.q);
  add_scaled(grad_out_j, T(1), matmul_a_bt(grad_z, p.k));

  // out_i = x[i] · W_r, out_j = x[j] · W_r: each edge's two products, in edge-id order.
  grads.grad.weight = DenseTensor<T>(p.weight.shape());
  grads.grad_x = DenseTensor<T>({g.n_src(), in});
  const auto row = g.row_of_edge();
  const auto col = g.col_idx();
  for (index_t e = 0; e < E; ++e) {
    const index_t r = act.type[static_cast<std::size_t>(e)];
    const T* w = p.weight.data() + r * in * width;
    T* gw = grads.grad.weight.data() + r * in * width;
    const index_t i = row[e], j = col[e];
    for (index_t f = 0; f < in; ++f) {
      T gxi = T(0), gxj = T(0);
      for (index_t m = 0; m < width; ++m) {
        gw[f * width + m] += x.at(i, f) * grad_out_i.at(e, m) + x.at(j, f) * grad_out_j.at(e, m);
        gxi += grad_out_i.at(e, m) * w[f * width + m];
        gxj += grad_out_j.at(e, m) * w[f * width + m];
      }
      grads.grad_x.at(i, f) += gxi;
      grads.grad_x.at(j, f) += gxj;
    }
  }
  grads.pre_activation = std::move(act.z);
  grads.alpha = std::move(act.alpha);
  return grads;
}

#define GNNCHECK_INSTANTIATE(T)                                                                                         \
  template DenseTensor<T> rgat_pre_activation(const Graph&, const RgatConfig&, const DenseTensor<T>&,                  \
                                              const DenseTensor<T>&, const RgatParameters<T>&);                       \
  template DenseTensor<T> rgat_forward(const Graph&, const RgatConfig&, const DenseTensor<T>&, const DenseTensor<T>&, \
                                       const RgatParameters<T>&);                                                     \
  template RgatGrads<T> rgat_backward(const Graph&, const RgatConfig&, const DenseTensor<T>&, const DenseTensor<T>&,  \
                                      const RgatParameters<T>&, const DenseTensor<T>&);
GNNCHECK_INSTANTIATE(double)
GNNCHECK_INSTANTIATE(float)
#undef GNNCHECK_INSTANTIATE

}  // namespace gnncheck::oracle::layers
