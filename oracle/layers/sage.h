// gnncheck/oracle/layers/sage.h — GraphSAGE (Hamilton et al., NeurIPS 2017) with mean or max
// aggregation, optionally over a projection of the neighbours (the pool aggregator; PyG's
// SAGEConv(aggr, project)).
//
//   p = x, or p = ReLU(x · W_pool + b_pool) with project
//   y = x_i · W_self + agg_{j ∈ N(i)} p_j · W_neigh + b,   agg ∈ {mean, max} per feature
// The mean is the row-mean normalized SpMM D_dst^-1 A p (duplicate edges count); the max is over
// destination i's in-edges per column. A destination with no in-edges aggregates 0 (PyG's
// convention). Destinations are the first n_dst sources (layers/self_loops.h); x_i is never
// projected (PyG projects only the neighbours' side).
// Backward, chained through the ops:
//   grad_W_self = x_dstᵀ · grad_y,  grad_W_neigh = aggᵀ · grad_y,  grad_agg = grad_y · W_neighᵀ,
//   grad_p = Aᵀ D_dst^-1 grad_agg (mean), or grad_agg[i, f] to the row of the selected edge's source
//   (max: the first edge of the row holding the maximum, in edge-id order; the last with
//   KinkSide::right — every choice among tied sources, or a split, is a valid subgradient),
//   with project: grad_z = ReLU'(z) ⊙ grad_p, grad_W_pool = xᵀ · grad_z, grad_b_pool = Σ grad_z,
//   grad_x = grad_z · W_poolᵀ (else grad_p), plus grad_y · W_selfᵀ on the first n_dst rows.
// Shapes: x [n_src, in], W_self, W_neigh [in, out], b [out], W_pool [in, in], b_pool [in] -> y [n_dst, out].
//
//   SageConfig cfg{.in_features = 1433, .out_features = 16, .aggregation = SageAggregation::max};
//   Tensor y = sage_forward(g, cfg, x, params);
#pragma once

#include "core/case.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "oracle/layers/kink_side.h"

namespace gnncheck::oracle::layers {

enum class SageAggregation { mean, max };

struct SageConfig {
  index_t in_features = 8;
  index_t out_features = 4;
  bool bias = true;
  SageAggregation aggregation = SageAggregation::mean;
  bool project = false;
  // Which tied source a max sends the gradient to, and ReLU'(0) in the projection: not an attribute.
  KinkSide kink_side = KinkSide::left;
  KinkFlips kink_flips;  // the projection's ReLU units taking the other side: site 0, z [n_src, in]

  // Reads in_features, out_features, bias, aggr, project.
  static SageConfig from_attributes(const Attributes& attrs);
};

template <class T>
struct SageParameters {
  DenseTensor<T> weight_self;   // [in, out]
  DenseTensor<T> weight_neigh;  // [in, out]
  DenseTensor<T> bias;          // [out] (empty without bias)
  DenseTensor<T> weight_pool;   // [in, in] (empty without project)
  DenseTensor<T> bias_pool;     // [in] (empty without project)
};

template <class T>
struct SageGrads {
  DenseTensor<T> grad_x;
  SageParameters<T> grad;
};

template <class T>
DenseTensor<T> sage_forward(const Graph& g, const SageConfig& cfg, const DenseTensor<T>& x, const SageParameters<T>& p);
template <class T>
SageGrads<T> sage_backward(const Graph& g, const SageConfig& cfg, const DenseTensor<T>& x, const SageParameters<T>& p,
                           const DenseTensor<T>& grad_y);

// The neighbours' side before aggregation: x, or ReLU(x · W_pool + b_pool) with project (z: the
// pre-activation, empty without project).
template <class T>
DenseTensor<T> sage_messages(const SageConfig& cfg, const DenseTensor<T>& x, const SageParameters<T>& p,
                             DenseTensor<T>* z = nullptr);

// The edge a max aggregation selects for destination i and column f of `messages` ([n_src, in]):
// the first in edge-id order holding the row's maximum (the last with KinkSide::right); -1 for an
// empty row.
template <class T>
index_t sage_selected_edge(const Graph& g, const DenseTensor<T>& messages, index_t i, index_t f, KinkSide side);

}  // namespace gnncheck::oracle::layers
