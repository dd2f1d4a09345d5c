// gnncheck/oracle/layers/rgcn.h — R-GCN (Schlichtkrull et al., ESWC 2018; PyG's RGCNConv): a weight
// per relation of a typed graph, the neighbours of each relation aggregated apart, optionally with
// the weights decomposed over shared bases.
//
//   W_r = weight[r], or Σ_b comp[r, b] · basis[b] with bases = B ≥ 1 (then `weight` holds the B bases)
//   h[i, r] = (1 / c_{i,r}) Σ_{e ∈ row i, type_e = r} x[col_e]   c_{i,r} = the row's edges of type r
//             (aggr = mean; 1 with aggr = sum; a relation the row lacks contributes 0)
//   y[i] = Σ_r h[i, r] · W_r + x[i] · root + bias
// Destinations are the first n_dst sources (layers/self_loops.h), as PyG's root weight reads x[i].
// Backward, by the chain rule:
//   grad_h[i, r] = grad_y[i] · W_rᵀ;  grad_x[col_e] += grad_h[i, type_e] / c_{i,type_e};  grad_x[i] += grad_y[i] · rootᵀ
//   grad_W_r = Σ_i h[i, r]ᵀ · grad_y[i];  with bases: grad_basis[b] = Σ_r comp[r, b] · grad_W_r,
//   grad_comp[r, b] = Σ_{f,o} grad_W_r[f, o] · basis[b, f, o];  grad_root = x_dstᵀ · grad_y;  grad_bias = Σ_i grad_y[i].
// Every sum runs in a fixed order. Shapes: x [n_src, in], types [E], weight [R or B, in, out],
// comp [R, B], root [in, out], bias [out] -> y [n_dst, out].
//
//   RgcnConfig cfg = RgcnConfig::from_attributes(attrs);
//   Tensor y = rgcn_forward(g, cfg, x, types, params);
#pragma once

#include "core/case.h"
#include "core/graph.h"
#include "core/tensor.h"

namespace gnncheck::oracle::layers {

enum class RgcnAggregation { mean, sum };

struct RgcnConfig {
  index_t in_features = 8;
  index_t out_features = 4;
  index_t relations = 3;
  index_t bases = 0;  // 0: one weight matrix per relation
  RgcnAggregation aggregation = RgcnAggregation::mean;
  bool root_weight = true;
  bool bias = true;

  // Reads in_features, out_features, relations, bases, aggr, root_weight, bias.
  static RgcnConfig from_attributes(const Attributes& attrs);
};

template <class T>
struct RgcnParameters {
  DenseTensor<T> weight;  // [relations, in, out], or the bases [bases, in, out]
  DenseTensor<T> comp;    // [relations, bases] (empty without bases)
  DenseTensor<T> root;    // [in, out] (empty without root_weight)
  DenseTensor<T> bias;    // [out] (empty without bias)
};

template <class T>
struct RgcnGrads {
  DenseTensor<T> grad_x;
  RgcnParameters<T> grad;
};

// `types` holds each edge's relation (an index tensor, oracle/targets.h), in edge-id order.
template <class T>
DenseTensor<T> rgcn_forward(const Graph& g, const RgcnConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& types,
                            const RgcnParameters<T>& p);
template <class T>
RgcnGrads<T> rgcn_backward(const Graph& g, const RgcnConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& types,
                           const RgcnParameters<T>& p, const DenseTensor<T>& grad_y);

}  // namespace gnncheck::oracle::layers
