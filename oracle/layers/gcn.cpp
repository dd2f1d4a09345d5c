#include "oracle/layers/gcn.h"

#include "oracle/layers/dense.h"
#include "oracle/layers/layer_config.h"
#include "oracle/layers/self_loops.h"

namespace gnncheck::oracle::layers {

GcnConfig GcnConfig::from_attributes(const Attributes& attrs) {
  GcnConfig cfg;
  cfg.in_features = positive_attribute(attrs, "in_features", "gcn");
  cfg.out_features = positive_attribute(attrs, "out_features", "gcn");
  cfg.self_loops = attrs.get_bool("self_loops");
  cfg.bias = attrs.get_bool("bias");
  cfg.norm = parse_degree_norm(attrs.get_string("norm"));
  cfg.source_degree = parse_source_degree(attrs.get_string("source_degree"));
  cfg.zero_degree = parse_zero_degree(attrs.get_string("zero_degree"));
  return cfg;
}

namespace {

template <class T>
void check_inputs(const Graph& g, const GcnConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& weight,
                  const DenseTensor<T>& bias) {
  require_shape(x, {g.n_src(), cfg.in_features}, "gcn: x");
  require_matrix(weight, cfg.in_features, cfg.out_features, "gcn: weight");
  if (cfg.bias) require_shape(bias, {cfg.out_features}, "gcn: bias");
}

// The graph the layer aggregates over: A, or A + I with self-loops.
AggregationGraph aggregation_graph(const Graph& g, const GcnConfig& cfg) {
  if (cfg.self_loops) require_destinations_are_sources(g, "gcn");
  return AggregationGraph(g, cfg.self_loops);
}

}  // namespace

template <class T>
DenseTensor<T> gcn_forward(const Graph& g, const GcnConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& weight,
                           const DenseTensor<T>& bias) {
  check_inputs(g, cfg, x, weight, bias);
  const AggregationGraph a = aggregation_graph(g, cfg);
  DenseTensor<T> y = normalized_spmm_forward(*a, cfg.norm, matmul(x, weight), cfg.source_degree, cfg.zero_degree);
  if (cfg.bias) add_bias(y, bias);
  return y;
}

template <class T>
GcnGrads<T> gcn_backward(const Graph& g, const GcnConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& weight,
                         const DenseTensor<T>& bias, const DenseTensor<T>& grad_y) {
  check_inputs(g, cfg, x, weight, bias);
  require_shape(grad_y, {g.n_dst(), cfg.out_features}, "gcn: grad_y");
  const AggregationGraph a = aggregation_graph(g, cfg);
  const DenseTensor<T> grad_xw = normalized_spmm_backward(*a, cfg.norm, grad_y, cfg.source_degree, cfg.zero_degree);  // Âᵀ · grad_y
  GcnGrads<T> grads;
  grads.grad_weight = matmul_at_b(x, grad_xw);
  grads.grad_x = matmul_a_bt(grad_xw, weight);
  if (cfg.bias) grads.grad_bias = column_sums(grad_y);
  return grads;
}

template DenseTensor<double> gcn_forward(const Graph&, const GcnConfig&, const Tensor&, const Tensor&, const Tensor&);
template DenseTensor<float> gcn_forward(const Graph&, const GcnConfig&, const TensorF&, const TensorF&, const TensorF&);
template GcnGrads<double> gcn_backward(const Graph&, const GcnConfig&, const Tensor&, const Tensor&, const Tensor&,
                                       const Tensor&);
template GcnGrads<float> gcn_backward(const Graph&, const GcnConfig&, const TensorF&, const TensorF&, const TensorF&,
                                      const TensorF&);

}  // namespace gnncheck::oracle::layers
