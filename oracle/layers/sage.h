// gnncheck/oracle/layers/sage.h — GraphSAGE with mean aggregation (Hamilton et al., NeurIPS 2017).
//
//   y = x_i · W_self + (mean_{j ∈ N(i)} x_j) · W_neigh + b
// The mean is the row-mean normalized SpMM D_dst^-1 A x (duplicate edges count; a destination with
// no in-edges gets a zero mean). Destinations are the first n_dst sources (layers/self_loops.h).
// Backward, chained through the ops:
//   grad_W_self = x_dstᵀ · grad_y,  grad_W_neigh = meanᵀ · grad_y,
//   grad_x = Aᵀ D_dst^-1 (grad_y · W_neighᵀ) + (grad_y · W_selfᵀ) on the first n_dst rows.
// Shapes: x [n_src, in], W_self, W_neigh [in, out], b [out] -> y [n_dst, out].
//
//   SageConfig cfg{.in_features = 1433, .out_features = 16};
//   Tensor y = sage_forward(g, cfg, x, params);
#pragma once

#include "core/case.h"
#include "core/graph.h"
#include "core/tensor.h"

namespace gnncheck::oracle::layers {

struct SageConfig {
  index_t in_features = 8;
  index_t out_features = 4;
  bool bias = true;

  // Reads in_features, out_features, bias.
  static SageConfig from_attributes(const Attributes& attrs);
};

template <class T>
struct SageParameters {
  DenseTensor<T> weight_self;   // [in, out]
  DenseTensor<T> weight_neigh;  // [in, out]
  DenseTensor<T> bias;          // [out] (empty without bias)
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

}  // namespace gnncheck::oracle::layers
