// gnncheck/oracle/layers/rgat.h — RGAT (Busbridge et al., 2019; PyG's RGATConv in its default
// configuration: additive self-attention, across-relation softmax, dim = 1, no edge features, no
// cardinality mod, no bases or blocks): a weight per relation, one attention softmax over all the
// in-edges of a destination whatever their relation.
//
//   per edge e = (i ← j) of relation r = type_e:
//   out_i[e] = x[i] · W_r,  out_j[e] = x[j] · W_r                 [E, H·C]  (W_r = weight[r])
//   z[e, h]  = Σ_m out_i[e, m] · q[m, h] + Σ_m out_j[e, m] · k[m, h]  (q and k [H·C, H]: every head's
//              query and key read all H·C channels)
//   alpha    = softmax over e ∈ row i of LeakyReLU(z, negative_slope), per head
//   out[i, h·C + c] = Σ_{e ∈ row i} alpha[e, h] · out_j[e, h·C + c]
//   y        = out + bias (concat)   or   mean_h out[:, h, :] + bias (mean)
// Destinations are the first n_dst sources (x[i] is row i of x: layers/self_loops.h); no self-loops
// are added (RGATConv adds none). Backward is the chain rule through the same steps; LeakyReLU′(0)
// is the slope on KinkSide::left.
// Shapes: x [n_src, in], types [E], weight [R, in, H·C], q and k [H·C, H], bias [H·C] or [C].
//
//   RgatConfig cfg = RgatConfig::from_attributes(attrs);
//   Tensor y = rgat_forward(g, cfg, x, types, params);
#pragma once

#include "core/case.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "oracle/layers/kink_side.h"

namespace gnncheck::oracle::layers {

// Over which edges of a destination the attention is normalized. RGATConv's default, and the only
// one the catalogue checks, is across relations; within_relation (PyG's other mechanism) is here
// for the wrong variant that normalizes each relation apart.
enum class RgatSoftmax { across_relations, within_relation };

struct RgatConfig {
  index_t in_features = 8;
  index_t out_features = 4;  // C, per head
  index_t heads = 2;         // H
  index_t relations = 3;     // R
  bool concat = true;
  bool bias = true;
  double negative_slope = 0.2;
  RgatSoftmax softmax = RgatSoftmax::across_relations;  // not an attribute
  KinkSide kink_side = KinkSide::left;                  // not an attribute
  KinkFlips kink_flips;  // units taking the other side: site 0, z [E, heads]

  // Reads in_features, out_features, heads, relations, concat, bias, negative_slope.
  static RgatConfig from_attributes(const Attributes& attrs);
  index_t width() const { return heads * out_features; }
  index_t output_width() const { return concat ? width() : out_features; }
};

template <class T>
struct RgatParameters {
  DenseTensor<T> weight;  // [relations, in, H·C]
  DenseTensor<T> q;       // [H·C, H]
  DenseTensor<T> k;       // [H·C, H]
  DenseTensor<T> bias;    // [output_width()] (empty without bias)
};

template <class T>
struct RgatGrads {
  DenseTensor<T> y;  // the forward output (computed on the way; equal to rgat_forward's)
  DenseTensor<T> grad_x;
  RgatParameters<T> grad;
  DenseTensor<T> pre_activation;  // z [E, H]
  DenseTensor<T> alpha;           // [E, H]
};

// z = q·out_i + k·out_j per edge and head, [E, H]: the LeakyReLU's arguments (its kinks).
template <class T>
DenseTensor<T> rgat_pre_activation(const Graph& g, const RgatConfig& cfg, const DenseTensor<T>& x,
                                   const DenseTensor<T>& types, const RgatParameters<T>& p);
// `types` holds each edge's relation (an index tensor, oracle/targets.h), in edge-id order.
template <class T>
DenseTensor<T> rgat_forward(const Graph& g, const RgatConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& types,
                            const RgatParameters<T>& p);
template <class T>
RgatGrads<T> rgat_backward(const Graph& g, const RgatConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& types,
                           const RgatParameters<T>& p, const DenseTensor<T>& grad_y);

}  // namespace gnncheck::oracle::layers
