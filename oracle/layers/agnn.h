// gnncheck/oracle/layers/agnn.h — the attention-based propagation layer of Thekumparampil et al. (2018).
//
//   n_i   = x_i / max(‖x_i‖₂, 1e-12)                          (row normalization, as PyG's AGNNConv)
//   cos   = sddmm_dot(n_dst, n_src)                           cosine similarity per edge
//   alpha = edge_softmax(β · cos)                             over each destination's in-edges
//   y     = spmm_ve(alpha, x)                                 [n_dst, F]
// β is the learnable parameter "beta" of shape [1]; there is no weight matrix (in = out = features).
// Self-loops (default on) are appended to every row, and the destinations are the first n_dst
// sources (layers/self_loops.h). Backward is the chain of the ops' backwards (spmm_ve,
// edge_softmax, sddmm_dot, the row normalization).
//
//   AgnnConfig cfg{.features = 16};
//   Tensor y = agnn_forward(g, cfg, x, beta);
#pragma once

#include "core/case.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "oracle/layers/kink_side.h"

namespace gnncheck::oracle::layers {

struct AgnnConfig {
  index_t features = 8;
  bool self_loops = true;
  KinkSide kink_side = KinkSide::left;  // at ‖x_i‖ = floor: the floor's side (left, the oracle's) or x/‖x‖'s; not an attribute

  // Reads features, self_loops.
  static AgnnConfig from_attributes(const Attributes& attrs);
};

template <class T>
struct AgnnGrads {
  DenseTensor<T> grad_x;     // [n_src, F]
  DenseTensor<T> grad_beta;  // [1]
};

template <class T>
DenseTensor<T> agnn_forward(const Graph& g, const AgnnConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& beta);
template <class T>
AgnnGrads<T> agnn_backward(const Graph& g, const AgnnConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& beta,
                           const DenseTensor<T>& grad_y);

}  // namespace gnncheck::oracle::layers
