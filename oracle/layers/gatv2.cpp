#include "oracle/layers/gatv2.h"

#include "oracle/edge_softmax.h"
#include "oracle/layers/dense.h"
#include "oracle/layers/heads.h"
#include "oracle/layers/layer_config.h"
#include "oracle/layers/self_loops.h"
#include "oracle/sddmm.h"
#include "oracle/spmm_ve.h"

namespace gnncheck::oracle::layers {

Gatv2Config Gatv2Config::from_attributes(const Attributes& attrs) {
  Gatv2Config cfg;
  cfg.in_features = positive_attribute(attrs, "in_features", "gatv2");
  cfg.out_features = positive_attribute(attrs, "out_features", "gatv2");
  cfg.heads = positive_attribute(attrs, "heads", "gatv2");
  cfg.concat = attrs.get_bool("concat");
  cfg.bias = attrs.get_bool("bias");
  cfg.self_loops = attrs.get_bool("self_loops");
  cfg.negative_slope = attrs.get_double("negative_slope");
  return cfg;
}

namespace {

template <class T>
void check_inputs(const Graph& g, const Gatv2Config& cfg, const DenseTensor<T>& x, const Gatv2Parameters<T>& p) {
  require_destinations_are_sources(g, "gatv2");
  require_shape(x, {g.n_src(), cfg.in_features}, "gatv2: x");
  require_matrix(p.weight_src, cfg.in_features, cfg.heads * cfg.out_features, "gatv2: weight_src");
  require_matrix(p.weight_dst, cfg.in_features, cfg.heads * cfg.out_features, "gatv2: weight_dst");
  require_matrix(p.att, cfg.heads, cfg.out_features, "gatv2: att");
  if (cfg.bias) require_shape(p.bias, {cfg.output_width()}, "gatv2: bias");
}

template <class T>
struct Gatv2Activations {
  AggregationGraph graph;  // the graph aggregated over (with self-loops when configured)
  DenseTensor<T> h_src;    // x · W_src
  DenseTensor<T> z;        // h_dst[i] + h_src[j] per edge, [E, H·C]
  DenseTensor<T> alpha;    // edge softmax of the logits, [E, H]
};

template <class T>
Gatv2Activations<T> gatv2_activations(const Graph& g, const Gatv2Config& cfg, const DenseTensor<T>& x,
                                      const Gatv2Parameters<T>& p) {
  Gatv2Activations<T> act{AggregationGraph(g, cfg.self_loops), {}, {}, {}};
  act.h_src = matmul(x, p.weight_src);
  const DenseTensor<T> h_dst = matmul(first_rows(x, g.n_dst()), p.weight_dst);
  act.z = sddmm_add_forward(*act.graph, h_dst, act.h_src);
  const DenseTensor<T> logits = head_scores(leaky_relu(act.z, static_cast<T>(cfg.negative_slope)), p.att,
                                            act.graph->num_edges(), cfg.heads, cfg.out_features);
  act.alpha = edge_softmax_forward(*act.graph, logits);
  return act;
}

template <class T>
DenseTensor<T> gatv2_output(const Gatv2Config& cfg, const Gatv2Activations<T>& act, const Gatv2Parameters<T>& p) {
  DenseTensor<T> y =
      join_heads(spmm_ve_forward(*act.graph, act.alpha, act.h_src), cfg.concat, cfg.heads, cfg.out_features);
  if (cfg.bias) add_bias(y, p.bias);
  return y;
}

}  // namespace

template <class T>
DenseTensor<T> gatv2_forward(const Graph& g, const Gatv2Config& cfg, const DenseTensor<T>& x,
                             const Gatv2Parameters<T>& p) {
  check_inputs(g, cfg, x, p);
  return gatv2_output(cfg, gatv2_activations(g, cfg, x, p), p);
}

template <class T>
Gatv2Grads<T> gatv2_backward(const Graph& g, const Gatv2Config& cfg, const DenseTensor<T>& x,
                             const Gatv2Parameters<T>& p, const DenseTensor<T>& grad_y) {
  check_inputs(g, cfg, x, p);
  require_shape(grad_y, {g.n_dst(), cfg.output_width()}, "gatv2: grad_y");
  const index_t heads = cfg.heads, channels = cfg.out_features;
  const T slope = static_cast<T>(cfg.negative_slope);
  Gatv2Activations<T> act = gatv2_activations(g, cfg, x, p);
  Gatv2Grads<T> grads;
  grads.y = gatv2_output(cfg, act, p);
  if (cfg.bias) grads.grad.bias = column_sums(grad_y);

  const DenseTensor<T> grad_out = join_heads_backward(grad_y, cfg.concat, heads, channels);
  SpmmVeGrads<T> aggregation = spmm_ve_backward(*act.graph, act.alpha, act.h_src, grad_out);
  grads.grad_logits = edge_softmax_backward(*act.graph, act.alpha, aggregation.grad_edge_values);

  // Through the scores: att meets LeakyReLU(z), z meets att (each channel's own derivative).
  DenseTensor<T> grad_activated(act.z.shape());
  grads.grad.att = DenseTensor<T>({heads, channels});
  head_scores_backward(leaky_relu(act.z, slope), p.att, grads.grad_logits, heads, channels, grad_activated,
                       grads.grad.att);
  const DenseTensor<T> grad_z = leaky_relu_backward(act.z, slope, grad_activated, cfg.kink_side, cfg.kink_flips.at(0));
  const SddmmGrads<T> sides = sddmm_add_backward(*act.graph, grad_z);  // grad_u: h_dst, grad_v: h_src

  DenseTensor<T> grad_h_src = std::move(aggregation.grad_x);
  add_scaled(grad_h_src, T(1), sides.grad_v);
  grads.grad.weight_src = matmul_at_b(x, grad_h_src);
  grads.grad.weight_dst = matmul_at_b(first_rows(x, g.n_dst()), sides.grad_u);
  grads.grad_x = matmul_a_bt(grad_h_src, p.weight_src);
  add_into_first_rows(grads.grad_x, T(1), matmul_a_bt(sides.grad_u, p.weight_dst));
  grads.pre_activation = std::move(act.z);
  grads.alpha = std::move(act.alpha);
  return grads;
}

template DenseTensor<double> gatv2_forward(const Graph&, const Gatv2Config&, const Tensor&,
                                           const Gatv2Parameters<double>&);
template DenseTensor<float> gatv2_forward(const Graph&, const Gatv2Config&, const TensorF&,
                                          const Gatv2Parameters<float>&);
template Gatv2Grads<double> gatv2_backward(const Graph&, const Gatv2Config&, const Tensor&,
                                           const Gatv2Parameters<double>&, const Tensor&);
template Gatv2Grads<float> gatv2_backward(const Graph&, const Gatv2Config&, const TensorF&,
                                          const Gatv2Parameters<float>&, const TensorF&);

}  // namespace gnncheck::oracle::layers
