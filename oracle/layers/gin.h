// gnncheck/oracle/layers/gin.h — the graph isomorphism network layer of Xu et al. (ICLR 2019), and
// GINE (Hu et al., ICLR 2020; PyG's GINEConv), whose messages carry the edge's features.
//
//   h = (1 + ε) · x_i + Σ_{j ∈ N(i)} x_j           (spmm: the sum of in-neighbors, duplicates counted)
//   GINE: h = (1 + ε) · x_i + Σ_{e ∈ row i} ReLU(x[col_e] + edge_attr[e])
//   y = ReLU(h · W1 + b1) · W2 + b2                 (a two-layer MLP; no activation after it)
// ε is the parameter "eps" of shape [1] and always gets its gradient; whether it is learned or held
// fixed (GIN-ε vs GIN-0) is the training driver's choice, not the layer's. Biases are optional (both
// or neither). The destinations are the first n_dst sources (layers/self_loops.h).
// Backward, chained through the ops:
//   grad_h = (ReLU'(z1) ⊙ (grad_y · W2ᵀ)) · W1ᵀ,
//   grad_x = Aᵀ · grad_h + (1 + ε) · grad_h on the first n_dst rows,  grad_ε = Σ grad_h ⊙ x_dst.
//   GINE: grad_m[e] = ReLU'(m_e) ⊙ grad_h[row_e] with m_e = x[col_e] + edge_attr[e];
//         grad_edge_attr[e] = grad_m[e],  grad_x[j] = Σ_{e: col_e = j} grad_m[e] + (1 + ε)·grad_h[j] (j < n_dst).
// Shapes: x [n_src, in], edge_attr [E, in] (edge-id order), W1 [in, hidden], b1 [hidden],
// W2 [hidden, out], b2 [out] -> y [n_dst, out].
//
//   GinConfig cfg{.in_features = 1433, .hidden_features = 64, .out_features = 64};
//   Tensor y = gin_forward(g, cfg, x, params);
#pragma once

#include "core/case.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "oracle/layers/kink_side.h"

namespace gnncheck::oracle::layers {

// How GIN and GINE aggregate the neighbours' messages per feature (PyG's aggr): sum (the paper's),
// mean (over the row's edges; an empty row gives 0) or max (an empty row gives 0; at a tie the first
// edge in edge-id order gets the gradient, the last with KinkSide::right).
enum class GinAggregation { sum, mean, max };

// GIN's and GINE's kink sites (KinkFlips): GINE's message ReLU at m = x[col_e] + edge_attr[e] ([E, in]),
// and the MLP's ReLU at z1 ([n_dst, hidden]).
inline constexpr int kGineMessageSite = 0;
inline constexpr int kGinMlpSite = 1;

struct GinConfig {
  index_t in_features = 8;
  index_t hidden_features = 8;
  index_t out_features = 4;
  bool bias = true;
  KinkSide kink_side = KinkSide::left;  // ReLU′(0): 0 (left, the oracle's) or 1, at every ReLU; not an attribute
  KinkFlips kink_flips;                 // units taking the other side: sites kGineMessageSite, kGinMlpSite
  bool edge_messages = false;           // GINE: messages ReLU(x_j + edge_attr); the target's, not an attribute
  GinAggregation aggregation = GinAggregation::sum;

  // Reads in_features, hidden_features, out_features, bias, aggr.
  static GinConfig from_attributes(const Attributes& attrs);
};

template <class T>
struct GinParameters {
  DenseTensor<T> weight1;  // [in, hidden]
  DenseTensor<T> bias1;    // [hidden] (empty without bias)
  DenseTensor<T> weight2;  // [hidden, out]
  DenseTensor<T> bias2;    // [out] (empty without bias)
  DenseTensor<T> eps;      // [1]
};

template <class T>
struct GinGrads {
  DenseTensor<T> grad_x;
  DenseTensor<T> grad_edge_attr;  // GINE only
  GinParameters<T> grad;  // the gradient of every parameter the layer has, same shapes
};

// edge_attr: GINE's edge features (cfg.edge_messages), ignored otherwise.
template <class T>
DenseTensor<T> gin_forward(const Graph& g, const GinConfig& cfg, const DenseTensor<T>& x, const GinParameters<T>& p,
                           const DenseTensor<T>& edge_attr = {});
template <class T>
GinGrads<T> gin_backward(const Graph& g, const GinConfig& cfg, const DenseTensor<T>& x, const GinParameters<T>& p,
                         const DenseTensor<T>& grad_y, const DenseTensor<T>& edge_attr = {});

// The message of every edge, [E, in]: x[col_e] (GIN) or ReLU(x[col_e] + edge_attr[e]) (GINE).
template <class T>
DenseTensor<T> gin_edge_messages(const Graph& g, const GinConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& edge_attr);

// The edge a max aggregation selects for destination i and column f of the edge messages: the first
// in edge-id order holding the row's maximum (the last with KinkSide::right); -1 for an empty row.
template <class T>
index_t gin_selected_edge(const Graph& g, const DenseTensor<T>& messages, index_t i, index_t f, KinkSide side);

// GINE's messages before their ReLU, m[e] = x[col_e] + edge_attr[e] ([E, in]), in T.
template <class T>
DenseTensor<T> gine_messages(const Graph& g, const DenseTensor<T>& x, const DenseTensor<T>& edge_attr);

}  // namespace gnncheck::oracle::layers
