// gnncheck/oracle/layers/gcn.h — the graph convolution of Kipf & Welling (ICLR 2017).
//
//   y = Â · (x · W) + b,   Â = D_dst^-½ (A + I) D_src^-½   (norm = symmetric, self_loops = true)
//                          Â = D_dst^-1 (A + I)            (norm = row_mean)
// Self-loops and bias are optional; the degrees are those of the graph actually aggregated over
// (A + I with self-loops). D_src is source_degree's convention (oracle/degree_norm.h): each
// source's out-degree (out, the default) or its own in-degree (in: PyG's GCNConv/gcn_norm and
// GNNAdvisor, one degree per node). Composed from the oracle's ops: dense product, normalized_spmm, bias; the
// backward is the chain of their backwards:
//   g = Âᵀ · grad_y,  grad_W = xᵀ · g,  grad_x = g · Wᵀ,  grad_b = Σ_i grad_y[i].
// Shapes: x [n_src, in], W [in, out], b [out] -> y [n_dst, out]. Non-square graphs are allowed;
// with self-loops the destinations must be the first n_dst sources (layers/self_loops.h).
//
//   GcnConfig cfg{.in_features = 1433, .out_features = 16};
//   Tensor y = gcn_forward(g, cfg, x, weight, bias);
//   GcnGrads<double> grads = gcn_backward(g, cfg, x, weight, bias, grad_y);
#pragma once

#include "core/case.h"
#include "oracle/degree_norm.h"
#include "core/graph.h"
#include "core/tensor.h"

namespace gnncheck::oracle::layers {

struct GcnConfig {
  index_t in_features = 8;
  index_t out_features = 4;
  bool self_loops = true;
  bool bias = true;
  DegreeNorm norm = DegreeNorm::symmetric;
  SourceDegree source_degree = SourceDegree::out;
  ZeroDegree zero_degree = ZeroDegree::zero;

  // Reads in_features, out_features, self_loops, bias, norm, source_degree, zero_degree.
  static GcnConfig from_attributes(const Attributes& attrs);
};

template <class T>
struct GcnGrads {
  DenseTensor<T> grad_x;       // [n_src, in]
  DenseTensor<T> grad_weight;  // [in, out]
  DenseTensor<T> grad_bias;    // [out]; empty when the layer has no bias
};

// `bias` is ignored (and may be empty) when cfg.bias is false.
template <class T>
DenseTensor<T> gcn_forward(const Graph& g, const GcnConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& weight,
                           const DenseTensor<T>& bias);
template <class T>
GcnGrads<T> gcn_backward(const Graph& g, const GcnConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& weight,
                         const DenseTensor<T>& bias, const DenseTensor<T>& grad_y);

}  // namespace gnncheck::oracle::layers
