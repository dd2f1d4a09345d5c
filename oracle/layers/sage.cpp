#include "oracle/layers/sage.h"

#include "oracle/degree_norm.h"
#include "oracle/layers/dense.h"
#include "oracle/layers/layer_config.h"
#include "oracle/layers/self_loops.h"

namespace gnncheck::oracle::layers {

SageConfig SageConfig::from_attributes(const Attributes& attrs) {
  SageConfig cfg;
  cfg.in_features = positive_attribute(attrs, "in_features", "sage");
  cfg.out_features = positive_attribute(attrs, "out_features", "sage");
  cfg.bias = attrs.get_bool("bias");
  return cfg;
}

namespace {

template <class T>
void check_inputs(const Graph& g, const SageConfig& cfg, const DenseTensor<T>& x, const SageParameters<T>& p) {
  require_destinations_are_sources(g, "sage");
  require_shape(x, {g.n_src(), cfg.in_features}, "sage: x");
  require_matrix(p.weight_self, cfg.in_features, cfg.out_features, "sage: weight_self");
  require_matrix(p.weight_neigh, cfg.in_features, cfg.out_features, "sage: weight_neigh");
  if (cfg.bias) require_shape(p.bias, {cfg.out_features}, "sage: bias");
}

}  // namespace

template <class T>
DenseTensor<T> sage_forward(const Graph& g, const SageConfig& cfg, const DenseTensor<T>& x, const SageParameters<T>& p) {
  check_inputs(g, cfg, x, p);
  DenseTensor<T> y = matmul(first_rows(x, g.n_dst()), p.weight_self);
  add_scaled(y, T(1), matmul(normalized_spmm_forward(g, DegreeNorm::row_mean, x), p.weight_neigh));
  if (cfg.bias) add_bias(y, p.bias);
  return y;
}

template <class T>
SageGrads<T> sage_backward(const Graph& g, const SageConfig& cfg, const DenseTensor<T>& x, const SageParameters<T>& p,
                           const DenseTensor<T>& grad_y) {
  check_inputs(g, cfg, x, p);
  require_shape(grad_y, {g.n_dst(), cfg.out_features}, "sage: grad_y");
  SageGrads<T> grads;
  grads.grad.weight_self = matmul_at_b(first_rows(x, g.n_dst()), grad_y);
  grads.grad.weight_neigh = matmul_at_b(normalized_spmm_forward(g, DegreeNorm::row_mean, x), grad_y);
  if (cfg.bias) grads.grad.bias = column_sums(grad_y);
  grads.grad_x = normalized_spmm_backward(g, DegreeNorm::row_mean, matmul_a_bt(grad_y, p.weight_neigh));
  add_into_first_rows(grads.grad_x, T(1), matmul_a_bt(grad_y, p.weight_self));
  return grads;
}

template DenseTensor<double> sage_forward(const Graph&, const SageConfig&, const Tensor&, const SageParameters<double>&);
template DenseTensor<float> sage_forward(const Graph&, const SageConfig&, const TensorF&, const SageParameters<float>&);
template SageGrads<double> sage_backward(const Graph&, const SageConfig&, const Tensor&, const SageParameters<double>&,
                                         const Tensor&);
template SageGrads<float> sage_backward(const Graph&, const SageConfig&, const TensorF&, const SageParameters<float>&,
                                        const TensorF&);

}  // namespace gnncheck::oracle::layers
