#include "oracle/layers/gat.h"

#include <vector>

#include "oracle/edge_softmax.h"
#include "oracle/layers/dense.h"
#include "oracle/layers/dropout.h"
#include "oracle/layers/heads.h"
#include "oracle/layers/layer_config.h"
#include "oracle/layers/self_loops.h"
#include "oracle/sddmm.h"
#include "oracle/sparse_kernels.h"
#include "oracle/spmm_ve.h"

namespace gnncheck::oracle::layers {

GatConfig GatConfig::from_attributes(const Attributes& attrs) {
  GatConfig cfg;
  cfg.in_features = positive_attribute(attrs, "in_features", "gat");
  cfg.out_features = positive_attribute(attrs, "out_features", "gat");
  cfg.heads = positive_attribute(attrs, "heads", "gat");
  cfg.concat = attrs.get_bool("concat");
  cfg.bias = attrs.get_bool("bias");
  cfg.self_loops = attrs.get_bool("self_loops");
  cfg.negative_slope = attrs.get_double("negative_slope");
  cfg.attn_dropout = attribute_in_range(attrs, "attn_dropout", "gat", 0.0, 1.0);
  cfg.dropout_seed = static_cast<std::uint64_t>(attrs.get_int("dropout_seed"));
  return cfg;
}

namespace {

template <class T>
void check_inputs(const Graph& g, const GatConfig& cfg, const DenseTensor<T>& x, const GatParameters<T>& p) {
  require_destinations_are_sources(g, "gat");
  require_shape(x, {g.n_src(), cfg.in_features}, "gat: x");
  require_matrix(p.weight, cfg.in_features, cfg.heads * cfg.out_features, "gat: weight");
  require_matrix(p.att_src, cfg.heads, cfg.out_features, "gat: att_src");
  require_matrix(p.att_dst, cfg.heads, cfg.out_features, "gat: att_dst");
  if (cfg.bias) require_shape(p.bias, {cfg.output_width()}, "gat: bias");
}

// The attention-dropout factor of every edge and head: 0 or 1/(1−p). Only built when p > 0.
template <class T>
DenseTensor<T> dropout_factors(const GatConfig& cfg, index_t num_edges) {
  DenseTensor<T> factor({num_edges, cfg.heads});
  const T scale = static_cast<T>(dropout_scale(cfg.attn_dropout));
#pragma omp parallel for schedule(static) if (worth_parallel(factor.size()))
  for (index_t i = 0; i < factor.size(); ++i)
    factor[i] = dropout_keeps(cfg.dropout_seed, static_cast<std::uint64_t>(i), cfg.attn_dropout) ? scale : T(0);
  return factor;
}

template <class T>
struct GatActivations {
  AggregationGraph graph; // the graph aggregated over (with self-loops when configured)
  DenseTensor<T> h;       // x W
  DenseTensor<T> logits;  // s_dst[i] + s_src[j] per edge and head
  DenseTensor<T> alpha;   // edge softmax of LeakyReLU(logits)
  DenseTensor<T> factor;  // attention dropout factors (empty without dropout: all would be 1)
  DenseTensor<T> dropped; // alpha ⊙ factor (empty without dropout)
  // The edge values aggregated with: alpha ⊙ factor, or alpha itself without dropout (no copy: at
  // Reddit scale each edge tensor is 10^8 values).
  const DenseTensor<T>& weights() const { return factor.empty() ? alpha : dropped; }
};

template <class T>
GatActivations<T> gat_activations(const Graph& g, const GatConfig& cfg, const DenseTensor<T>& x,
                                  const GatParameters<T>& p) {
  GatActivations<T> act{AggregationGraph(g, cfg.self_loops), {}, {}, {}, {}, {}};
  const index_t heads = cfg.heads, channels = cfg.out_features;
  act.h = matmul(x, p.weight);
  const DenseTensor<T> score_src = head_scores(act.h, p.att_src, g.n_src(), heads, channels);
  const DenseTensor<T> score_dst = head_scores(act.h, p.att_dst, g.n_dst(), heads, channels);
  act.logits = sddmm_add_forward(*act.graph, score_dst, score_src);
  act.alpha = edge_softmax_forward(*act.graph, leaky_relu(act.logits, static_cast<T>(cfg.negative_slope)));
  if (cfg.attn_dropout > 0.0) {
    act.factor = dropout_factors<T>(cfg, act.graph->num_edges());
    act.dropped = act.alpha;
#pragma omp parallel for schedule(static) if (worth_parallel(act.dropped.size()))
    for (index_t i = 0; i < act.dropped.size(); ++i) act.dropped[i] *= act.factor[i];
  }
  return act;
}

// y from the activations: aggregate every head, concatenate or average the heads, add the bias.
template <class T>
DenseTensor<T> gat_output(const Graph&, const GatConfig& cfg, const GatActivations<T>& act, const GatParameters<T>& p) {
  DenseTensor<T> y = join_heads(spmm_ve_forward(*act.graph, act.weights(), act.h), cfg.concat, cfg.heads,
                                cfg.out_features);
  if (cfg.bias) add_bias(y, p.bias);
  return y;
}

}  // namespace

template <class T>
DenseTensor<T> gat_forward(const Graph& g, const GatConfig& cfg, const DenseTensor<T>& x, const GatParameters<T>& p) {
  check_inputs(g, cfg, x, p);
  return gat_output(g, cfg, gat_activations(g, cfg, x, p), p);
}

template <class T>
GatGrads<T> gat_backward(const Graph& g, const GatConfig& cfg, const DenseTensor<T>& x, const GatParameters<T>& p,
                         const DenseTensor<T>& grad_y) {
  check_inputs(g, cfg, x, p);
  require_shape(grad_y, {g.n_dst(), cfg.output_width()}, "gat: grad_y");
  const index_t heads = cfg.heads, channels = cfg.out_features;
  const GatActivations<T> act = gat_activations(g, cfg, x, p);
  GatGrads<T> grads;
  grads.y = gat_output(g, cfg, act, p);
  if (cfg.bias) grads.grad.bias = column_sums(grad_y);

  // Undo the head reduction: every head receives grad_y (concat) or grad_y / H (mean).
  const DenseTensor<T> grad_out = join_heads_backward(grad_y, cfg.concat, heads, channels);

  SpmmVeGrads<T> aggregation = spmm_ve_backward(*act.graph, act.weights(), act.h, grad_out);
  DenseTensor<T> grad_alpha = std::move(aggregation.grad_edge_values);
  if (!act.factor.empty()) {
#pragma omp parallel for schedule(static) if (worth_parallel(grad_alpha.size()))
    for (index_t i = 0; i < grad_alpha.size(); ++i) grad_alpha[i] *= act.factor[i];
  }
  const DenseTensor<T> grad_leaky = edge_softmax_backward(*act.graph, act.alpha, grad_alpha);
  const DenseTensor<T> grad_logits = leaky_relu_backward(act.logits, static_cast<T>(cfg.negative_slope), grad_leaky,
                                                             cfg.kink_side, cfg.kink_flips.at(0));
  const SddmmGrads<T> scores = sddmm_add_backward(*act.graph, grad_logits);  // grad_u: dst, grad_v: src

  DenseTensor<T> grad_h = std::move(aggregation.grad_x);
  grads.grad.att_src = DenseTensor<T>({heads, channels});
  grads.grad.att_dst = DenseTensor<T>({heads, channels});
  head_scores_backward(act.h, p.att_src, scores.grad_v, heads, channels, grad_h, grads.grad.att_src);
  head_scores_backward(act.h, p.att_dst, scores.grad_u, heads, channels, grad_h, grads.grad.att_dst);

  grads.grad.weight = matmul_at_b(x, grad_h);
  grads.grad_x = matmul_a_bt(grad_h, p.weight);
  return grads;
}

template DenseTensor<double> gat_forward(const Graph&, const GatConfig&, const Tensor&, const GatParameters<double>&);
template DenseTensor<float> gat_forward(const Graph&, const GatConfig&, const TensorF&, const GatParameters<float>&);
template GatGrads<double> gat_backward(const Graph&, const GatConfig&, const Tensor&, const GatParameters<double>&,
                                       const Tensor&);
template GatGrads<float> gat_backward(const Graph&, const GatConfig&, const TensorF&, const GatParameters<float>&,
                                      const TensorF&);

}  // namespace gnncheck::oracle::layers
