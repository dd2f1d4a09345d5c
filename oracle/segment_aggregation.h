// gnncheck/oracle/segment_aggregation.h — PyG's aggregations that are not a sum or an extreme, over
// each destination's segment of edge rows (torch_geometric.nn.aggr: VarAggregation, StdAggregation,
// MulAggregation, SoftmaxAggregation with a learnable t).
//
//   segment of row i: the edge rows k ∈ [row_ptr[i], row_ptr[i+1]) of x [E, F], n = its length
//   var      y[i, f] = (1/n)·Σ_k x[k, f]² − ((1/n)·Σ_k x[k, f])²         (0 on an empty segment)
//   std      y[i, f] = √var[i, f] where var[i, f] > 10⁻⁵, else 0          (0 on an empty segment)
//   mul      y[i, f] = Π_k x[k, f]                                         (1 on an empty segment)
//   softmax  y[i, f] = Σ_k α_k·x[k, f],  α_k = exp(t·x[k, f]) / Σ_l exp(t·x[l, f])   (0 on an empty segment)
//
// var is the population variance written as PyG computes it (mean of squares minus the squared
// mean): in float64 its cancellation error, u₆₄·mean(x²), is far below any float32 bound, and in
// float32 (the measured model's float32 evaluation) it carries the cancellation a one-pass
// implementation makes. std is PyG's var.clamp(min=1e-5).sqrt() with every value ≤ √10⁻⁵ set to
// 0: its value jumps from 0 to √10⁻⁵ at var = 10⁻⁵ (a kink of the catalogue entry). mul multiplies
// in edge-id order; an empty segment gives 1 (PyG's scatter 'mul' starts from ones). The softmax
// subtracts the segment's largest t·x before exp (the function is unchanged). Backward:
//   var      grad_x[k] = g·(2/n)·(x[k] − mean)
//   std      grad_x[k] = g·(x[k] − mean)/(n·std) where var > 10⁻⁵, else 0
//   mul      grad_x[k] = g·Π_{l≠k} x[l]   (prefix times suffix products: exact with zeros in the segment)
//   softmax  grad_x[k] = g·α_k·(1 + t·(x[k] − y)),  grad_t = Σ_{i,f} g·Σ_k α_k·x[k]·(x[k] − y)
// Every sum and product runs over the segment in edge-id order, so results are the same for any
// thread count.
//
//   SegmentAggregationConfig cfg{.aggr = SegmentAggregation::var, .features = 4};
//   Tensor y = segment_aggregation_forward(g, cfg, x, t);
#pragma once

#include <array>
#include <string_view>

#include "core/case.h"
#include "core/graph.h"
#include "core/tensor.h"

namespace gnncheck::oracle {

enum class SegmentAggregation { var, softmax, std, mul };
inline constexpr std::array<std::string_view, 4> kSegmentAggregationNames = {"var", "softmax", "std", "mul"};
// std and mul came after systems were written against var and softmax (AttributeSpec::opt_in_choices).
inline constexpr std::array<std::string_view, 2> kSegmentAggregationLaterNames = {"std", "mul"};
// PyG's StdAggregation: var.clamp(min=1e-5).sqrt(), then 0 wherever that is ≤ √10⁻⁵.
inline constexpr double kStdVarianceFloor = 1e-5;

struct SegmentAggregationConfig {
  SegmentAggregation aggr = SegmentAggregation::var;
  index_t features = 4;
  // Reads aggr and features (InputError naming the attribute otherwise).
  static SegmentAggregationConfig from_attributes(const Attributes& attrs);
  bool has_temperature() const { return aggr == SegmentAggregation::softmax; }
};

template <class T>
struct SegmentAggregationGrads {
  DenseTensor<T> grad_x;  // [E, F]
  DenseTensor<T> grad_t;  // [1] with softmax, else empty
};

// x [E, F]; t [1] with softmax (ignored otherwise; may be empty then).
template <class T>
DenseTensor<T> segment_aggregation_forward(const Graph& g, const SegmentAggregationConfig& cfg, const DenseTensor<T>& x,
                                           const DenseTensor<T>& t);
template <class T>
SegmentAggregationGrads<T> segment_aggregation_backward(const Graph& g, const SegmentAggregationConfig& cfg,
                                                        const DenseTensor<T>& x, const DenseTensor<T>& t,
                                                        const DenseTensor<T>& grad_y);

}  // namespace gnncheck::oracle
