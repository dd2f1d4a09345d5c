// gnncheck/oracle/layers/gatv2.h — GATv2 (Brody, Alon and Yahav, ICLR 2022; PyG's GATv2Conv with
// share_weights = False): the attention is applied after the nonlinearity, so every channel of
// every edge has its own LeakyReLU.
//
//   h_src    = x · W_src                                   [n_src, H·C]   (the messages)
//   h_dst    = x[:n_dst] · W_dst                           [n_dst, H·C]
//   z[e]     = h_dst[i] + h_src[j]                         e = (i ← j) of Ã, [E, H·C]
//   logit[e, k] = Σ_c att[k, c] · LeakyReLU(z[e, k·C + c], negative_slope)
//   alpha    = edge_softmax(logit)                         over each destination's in-edges
//   out      = spmm_ve(alpha, h_src)                       [n_dst, H·C]
//   y        = out + b (concat)   or   mean_k out[:, k, :] + b (mean)
// Self-loops (default on) are appended to every row (layers/self_loops.h). No attention dropout
// (the evaluation mode). Backward is the chain of the ops' backwards; the LeakyReLU's derivative is
// taken at the pre-activation z of each channel (not at the logit, as in GAT).
// Shapes: x [n_src, in], W_src and W_dst [in, H·C], att [H, C], b [H·C] (concat) or [C] (mean).
//
//   Gatv2Config cfg{.in_features = 16, .out_features = 8, .heads = 4};
//   Tensor y = gatv2_forward(g, cfg, x, params);
#pragma once

#include "core/case.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "oracle/layers/kink_side.h"

namespace gnncheck::oracle::layers {

struct Gatv2Config {
  index_t in_features = 8;
  index_t out_features = 4;  // C, per head
  index_t heads = 2;         // H
  bool concat = true;
  bool bias = true;
  bool self_loops = true;
  double negative_slope = 0.2;
  KinkSide kink_side = KinkSide::left;  // LeakyReLU′(0): the slope (left, the oracle's) or 1; not an attribute
  KinkFlips kink_flips;  // units taking the other side: site 0, z [E of Ã, heads·C]

  // Reads in_features, out_features, heads, concat, bias, self_loops, negative_slope.
  static Gatv2Config from_attributes(const Attributes& attrs);
  index_t output_width() const { return concat ? heads * out_features : out_features; }
};

template <class T>
struct Gatv2Parameters {
  DenseTensor<T> weight_src;  // [in, H·C]
  DenseTensor<T> weight_dst;  // [in, H·C]
  DenseTensor<T> att;         // [H, C]
  DenseTensor<T> bias;        // [output_width()] (empty without bias)
};

template <class T>
struct Gatv2Grads {
  DenseTensor<T> y;  // the forward output (computed on the way; equal to gatv2_forward's)
  DenseTensor<T> grad_x;
  Gatv2Parameters<T> grad;
  // Intermediates over the aggregated graph Ã, for the rounding floor and the replicas:
  DenseTensor<T> pre_activation;  // z [E(Ã), H·C]
  DenseTensor<T> alpha;           // [E(Ã), H]
  DenseTensor<T> grad_logits;     // the gradient at the logits, [E(Ã), H]
};

template <class T>
DenseTensor<T> gatv2_forward(const Graph& g, const Gatv2Config& cfg, const DenseTensor<T>& x,
                             const Gatv2Parameters<T>& p);
template <class T>
Gatv2Grads<T> gatv2_backward(const Graph& g, const Gatv2Config& cfg, const DenseTensor<T>& x,
                             const Gatv2Parameters<T>& p, const DenseTensor<T>& grad_y);

}  // namespace gnncheck::oracle::layers
