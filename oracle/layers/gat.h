// gnncheck/oracle/layers/gat.h — the graph attention layer of Veličković et al. (ICLR 2018).
//
//   h        = x · W                                        [n_src, H·C]
//   s_src[j] = Σ_c h[j,h,c] · att_src[h,c],  s_dst[i] = Σ_c h[i,h,c] · att_dst[h,c]   (per head)
//   logits   = sddmm_add(s_dst, s_src)                      e = (i ← j): s_dst[i] + s_src[j]
//   alpha    = edge_softmax(LeakyReLU(logits, 0.2))         over each destination's in-edges
//   out      = spmm_ve(alpha ⊙ mask, h)                     [n_dst, H·C]
//   y        = out + b (concat)   or   mean_h out[:, h, :] + b (mean)
// Attention dropout (attn_dropout = p > 0) multiplies alpha by a deterministic mask
// (layers/dropout.h, seed dropout_seed, element index e·H + h over the aggregated graph's edge ids)
// scaled by 1/(1−p); p = 0 is the evaluation mode. Self-loops (default on, as in the paper) are
// appended to every row (layers/self_loops.h). Backward is the chain of the ops' backwards
// (spmm_ve, edge_softmax, LeakyReLU, sddmm_add, the score products and the dense product).
// Shapes: x [n_src, in], W [in, H·C], att_src/att_dst [H, C], b [H·C] (concat) or [C] (mean).
//
//   GatConfig cfg{.in_features = 1433, .out_features = 8, .heads = 8};
//   Tensor y = gat_forward(g, cfg, x, params);
#pragma once

#include <cstdint>

#include "core/case.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "oracle/layers/kink_side.h"

namespace gnncheck::oracle::layers {

struct GatConfig {
  index_t in_features = 8;
  index_t out_features = 4;  // C, per head
  index_t heads = 2;         // H
  bool concat = true;        // concatenate heads (y is [n_dst, H·C]) or average them ([n_dst, C])
  bool bias = true;
  bool self_loops = true;
  double negative_slope = 0.2;
  double attn_dropout = 0.0;
  std::uint64_t dropout_seed = 0;
  KinkSide kink_side = KinkSide::left;  // LeakyReLU′(0): the slope (left, the oracle's) or 1; not an attribute
  KinkFlips kink_flips;  // units taking the other side: site 0, the logits [E of Ã, heads]

  // Reads in_features, out_features, heads, concat, bias, self_loops, negative_slope,
  // attn_dropout, dropout_seed.
  static GatConfig from_attributes(const Attributes& attrs);
  index_t output_width() const { return concat ? heads * out_features : out_features; }
};

template <class T>
struct GatParameters {
  DenseTensor<T> weight;   // [in, H·C]
  DenseTensor<T> att_src;  // [H, C]
  DenseTensor<T> att_dst;  // [H, C]
  DenseTensor<T> bias;     // [output_width()] (empty without bias)
};

template <class T>
struct GatGrads {
  DenseTensor<T> y;  // the forward output (computed on the way; equal to gat_forward's)
  DenseTensor<T> grad_x;
  GatParameters<T> grad;
};

template <class T>
DenseTensor<T> gat_forward(const Graph& g, const GatConfig& cfg, const DenseTensor<T>& x, const GatParameters<T>& p);
template <class T>
GatGrads<T> gat_backward(const Graph& g, const GatConfig& cfg, const DenseTensor<T>& x, const GatParameters<T>& p,
                         const DenseTensor<T>& grad_y);

}  // namespace gnncheck::oracle::layers
