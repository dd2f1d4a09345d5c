// Layer-level versions of the replica bugs (GCN, GIN, GAT, GATv2): the layer's backward re-derived from the
// oracle's ops with the one wrong step. Where only one step of a correct backward changes, the
// replica adds the difference (wrong step − right step) pushed through the rest of the chain to the
// base system's correct gradients, so the rest stays exactly the base's answer.
#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "adapters/replicas/replica_system.h"
#include "oracle/degree_norm.h"
#include "oracle/edge_softmax.h"
#include "oracle/eshuffle.h"
#include "oracle/layers/dense.h"
#include "oracle/layers/dropout.h"
#include "oracle/layers/gatv2.h"
#include "oracle/layers/self_loops.h"
#include "oracle/sddmm.h"
#include "oracle/spmm.h"
#include "oracle/spmm_ve.h"

namespace gnncheck::replicas {
namespace {

using oracle::layers::add_into_first_rows;
using oracle::layers::first_rows;
using oracle::layers::matmul;
using oracle::layers::matmul_a_bt;
using oracle::layers::matmul_at_b;

// The graph a GCN/GAT layer aggregates over: A + I with self-loops (the layer's own helper).
Graph aggregation_graph(const BugContext& ctx) {
  return ctx.attributes.get_bool("self_loops") ? oracle::layers::with_destination_self_loops(ctx.graph())
                                               : ctx.graph();
}

Tensor difference(const Tensor& a, const Tensor& b) {
  Tensor d = a;
  for (index_t i = 0; i < d.size(); ++i) d[i] -= b[i];
  return d;
}

void add_to(Tensor& target, const Tensor& delta) {
  for (index_t i = 0; i < target.size(); ++i) target[i] += delta[i];
}

// y = Â·(x·W) + b: a change δ of the aggregation backward's result g = Âᵀ·grad_y changes
// grad_W by xᵀ·δ and grad_x by δ·Wᵀ.
void push_through_gcn_weight(BugContext& ctx, const Tensor& delta) {
  const Tensor& x = ctx.input("x");
  const Tensor& weight = ctx.input("weight");
  add_to(ctx.result.gradients.at("weight"), matmul_at_b(x, delta));
  add_to(ctx.result.gradients.at("x"), matmul_a_bt(delta, weight));
}

// Edge values of the wrong-side normalization in backward (replica 4), over graph `g`.
Tensor wrong_side_values(const Graph& g, oracle::DegreeNorm norm) {
  Tensor values({g.num_edges(), 1});
  for (index_t e = 0; e < g.num_edges(); ++e) {
    const auto out_deg_entering = static_cast<double>(g.out_degree(g.row_of_edge()[e]));
    const auto in_deg_leaving = static_cast<double>(g.in_degree(g.col_idx()[e]));
    if (norm == oracle::DegreeNorm::symmetric)
      values[e] = out_deg_entering > 0 && in_deg_leaving > 0 ? 1.0 / std::sqrt(out_deg_entering * in_deg_leaving) : 0.0;
    else
      values[e] = in_deg_leaving > 0 ? 1.0 / in_deg_leaving : 0.0;
  }
  return values;
}

oracle::DegreeNorm norm_of(const BugContext& ctx) { return oracle::parse_degree_norm(ctx.attributes.get_string("norm")); }
oracle::SourceDegree source_degree_of(const BugContext& ctx) {
  return oracle::parse_source_degree(ctx.attributes.get_string("source_degree"));
}

// GAT's attention over its aggregation graph, recomputed from the case, with the layer's
// deterministic attention-dropout mask (oracle/layers/dropout.h) applied as the layer does.
struct GatAttention {
  Graph graph;
  Tensor h;         // x·W, [n_src, H·C]
  Tensor logits;    // s_dst[row] + s_src[col] before the LeakyReLU, [E', H]
  Tensor softmax;   // edge softmax of LeakyReLU(logits), [E', H]
  Tensor factor;    // attention-dropout factor per edge and head (all 1 without dropout), [E', H]
  Tensor alpha;     // the edge values aggregated with: softmax ⊙ factor, [E', H]
  Tensor grad_out;  // gradient of the per-head aggregation output, [n_dst, H·C]
};

GatAttention gat_attention(const BugContext& ctx) {
  const index_t heads = ctx.attributes.get_int("heads"), channels = ctx.attributes.get_int("out_features");
  const Graph& g = ctx.graph();
  GatAttention a{aggregation_graph(ctx), matmul(ctx.input("x"), ctx.input("weight")), {}, {}, {}, {}, {}};
  const auto scores = [&](const Tensor& att, index_t rows) {
    Tensor s({rows, heads});
    for (index_t j = 0; j < rows; ++j)
      for (index_t k = 0; k < heads; ++k)
        for (index_t c = 0; c < channels; ++c) s.at(j, k) += a.h.at(j, k * channels + c) * att.at(k, c);
    return s;
  };
  a.logits = oracle::sddmm_add_forward(a.graph, scores(ctx.input("att_dst"), g.n_dst()),
                                       scores(ctx.input("att_src"), g.n_src()));
  a.softmax = oracle::edge_softmax_forward(
      a.graph, oracle::layers::leaky_relu(a.logits, ctx.attributes.get_double("negative_slope")));
  a.factor = Tensor(a.softmax.shape(), 1.0);
  if (const double p = ctx.attributes.get_double("attn_dropout"); p > 0.0) {
    const auto seed = static_cast<std::uint64_t>(ctx.attributes.get_int("dropout_seed"));
    for (index_t i = 0; i < a.factor.size(); ++i)
      a.factor[i] = oracle::layers::dropout_keeps(seed, static_cast<std::uint64_t>(i), p) ? oracle::layers::dropout_scale(p) : 0.0;
  }
  a.alpha = a.softmax;
  for (index_t i = 0; i < a.alpha.size(); ++i) a.alpha[i] *= a.factor[i];
  if (!ctx.wants_gradients()) return a;  // forward only: no grad_out
  const Tensor& grad_y = ctx.output_gradient();
  if (ctx.attributes.get_bool("concat")) {
    a.grad_out = grad_y;
  } else {
    a.grad_out = Tensor({g.n_dst(), heads * channels});
    for (index_t i = 0; i < g.n_dst(); ++i)
      for (index_t k = 0; k < heads; ++k)
        for (index_t c = 0; c < channels; ++c) a.grad_out.at(i, k * channels + c) = grad_y.at(i, c) / heads;
  }
  return a;
}

}  // namespace

// 1. GCN: g = Â·grad_y instead of Âᵀ·grad_y.
void gcn_backward_uses_A(BugContext& ctx) {
  const Graph g = aggregation_graph(ctx);
  const oracle::DegreeNorm norm = norm_of(ctx);
  const Tensor& grad_y = ctx.output_gradient();
  const oracle::SourceDegree source_degree = source_degree_of(ctx);
  push_through_gcn_weight(ctx, difference(oracle::normalized_spmm_forward(g, norm, grad_y, source_degree),
                                          oracle::normalized_spmm_backward(g, norm, grad_y, source_degree)));
}

// 1. GIN: grad_x gets A·grad_h instead of Aᵀ·grad_h (the MLP's backward is recomputed for grad_h).
void gin_backward_uses_A(BugContext& ctx) {
  const Graph& g = ctx.graph();
  const bool bias = ctx.attributes.get_bool("bias");
  const Tensor& x = ctx.input("x");
  Tensor h = oracle::spmm_forward(g, x);
  oracle::layers::add_scaled(h, 1.0 + ctx.input("eps")[0], first_rows(x, g.n_dst()));
  Tensor z1 = matmul(h, ctx.input("weight1"));
  if (bias) oracle::layers::add_bias(z1, ctx.input("bias1"));
  const Tensor grad_z1 =
      oracle::layers::relu_backward(z1, matmul_a_bt(ctx.output_gradient(), ctx.input("weight2")));
  const Tensor grad_h = matmul_a_bt(grad_z1, ctx.input("weight1"));
  add_to(ctx.result.gradients.at("x"), difference(oracle::spmm_forward(g, grad_h), oracle::spmm_backward(g, grad_h)));
}

// 3. GCN: edges scaled by sqrt(d_dst·d_src) (row_mean: d_dst), forward and backward alike.
void gcn_sqrt_degree(BugContext& ctx) {
  const Graph g = aggregation_graph(ctx);
  const bool row_mean = norm_of(ctx) == oracle::DegreeNorm::row_mean;
  Tensor wrong_values({g.num_edges(), 1});
  for (index_t e = 0; e < g.num_edges(); ++e) {
    const auto d_dst = static_cast<double>(g.in_degree(g.row_of_edge()[e]));
    const auto d_src = static_cast<double>(g.out_degree(g.col_idx()[e]));
    wrong_values[e] = row_mean ? d_dst : std::sqrt(d_dst * d_src);
  }
  const Tensor& x = ctx.input("x");
  const Tensor& weight = ctx.input("weight");
  Tensor y = oracle::spmm_ve_forward(g, wrong_values, matmul(x, weight));
  if (ctx.attributes.get_bool("bias")) oracle::layers::add_bias(y, ctx.input("bias"));
  ctx.result.outputs.at(ctx.output_name()) = std::move(y);
  if (!ctx.wants_gradients()) return;
  const Tensor grad = oracle::spmm_ve_transposed_forward(g, wrong_values, ctx.output_gradient());
  ctx.result.gradients.at("weight") = matmul_at_b(x, grad);
  ctx.result.gradients.at("x") = matmul_a_bt(grad, weight);
}

// 4. GCN: the backward's normalization applied in the forward's order (wrong side).
void gcn_norm_backward_order(BugContext& ctx) {
  const Graph g = aggregation_graph(ctx);
  const Tensor& grad_y = ctx.output_gradient();
  push_through_gcn_weight(ctx, difference(oracle::spmm_ve_transposed_forward(g, wrong_side_values(g, norm_of(ctx)), grad_y),
                                          oracle::normalized_spmm_backward(g, norm_of(ctx), grad_y, source_degree_of(ctx))));
}

// GAT: y_heads = A_α·(x·W): a change δ of grad_h changes grad_W by xᵀ·δ and grad_x by δ·Wᵀ.
void push_through_gat_weight(BugContext& ctx, const Tensor& delta_h) {
  add_to(ctx.result.gradients.at("weight"), matmul_at_b(ctx.input("x"), delta_h));
  add_to(ctx.result.gradients.at("x"), matmul_a_bt(delta_h, ctx.input("weight")));
}

// 5. GAT: every backward step that needs the transposed (CSC-ordered) attention graph walks the
// forward's CSR instead, with the edge tensors in CSR order (no eShuffle). Two steps need it:
//   the aggregation backward  grad_h = A_αᵀ·grad_out        becomes A_α·grad_out;
//   the source-score gradient grad_s_src[j] = Σ_{e: col_e = j} grad_logits[e]  (a column sum)
//                             becomes Σ_{e ∈ row j} grad_logits[e]  (the row sum, = grad_s_dst[j]).
// The other steps (SDDMM for grad_α, softmax and LeakyReLU backward, the destination-score row
// sums) are edge- or row-parallel over the CSR and stay correct.
void gat_untransposed_attention(BugContext& ctx) {
  const GatAttention a = gat_attention(ctx);
  const index_t heads = ctx.attributes.get_int("heads"), channels = ctx.attributes.get_int("out_features");
  Tensor delta_h = difference(oracle::spmm_ve_forward(a.graph, a.alpha, a.grad_out),
                              oracle::spmm_ve_transposed_forward(a.graph, a.alpha, a.grad_out));

  // The edge gradient reaching the logits (correct: it needs no transpose).
  Tensor grad_alpha = oracle::sddmm_dot_forward(a.graph, a.grad_out, a.h, heads);
  for (index_t i = 0; i < grad_alpha.size(); ++i) grad_alpha[i] *= a.factor[i];
  const Tensor grad_logits = oracle::layers::leaky_relu_backward(
      a.logits, ctx.attributes.get_double("negative_slope"), oracle::edge_softmax_backward(a.graph, a.softmax, grad_alpha));
  const oracle::SddmmGrads<double> sums = oracle::sddmm_add_backward(a.graph, grad_logits);
  const Tensor delta_s_src = difference(sums.grad_u, sums.grad_v);  // row sums − column sums, [n, H]

  // s_src[j, k] = Σ_c h[j, k·C + c] · att_src[k, c]: push the score error into att_src and h.
  const Tensor& att_src = ctx.input("att_src");
  Tensor& grad_att_src = ctx.result.gradients.at("att_src");
  for (index_t j = 0; j < delta_s_src.rows(); ++j)
    for (index_t k = 0; k < heads; ++k)
      for (index_t c = 0; c < channels; ++c) {
        grad_att_src.at(k, c) += delta_s_src.at(j, k) * a.h.at(j, k * channels + c);
        delta_h.at(j, k * channels + c) += delta_s_src.at(j, k) * att_src.at(k, c);
      }
  push_through_gat_weight(ctx, delta_h);
}

// 6. GAT: no gradient through the attention: att_src/att_dst get zero and grad_h only A_αᵀ·grad_out.
void gat_no_attention_grad(BugContext& ctx) {
  const GatAttention a = gat_attention(ctx);
  const Tensor grad_h = oracle::spmm_ve_transposed_forward(a.graph, a.alpha, a.grad_out);
  ctx.result.gradients.at("weight") = matmul_at_b(ctx.input("x"), grad_h);
  ctx.result.gradients.at("x") = matmul_a_bt(grad_h, ctx.input("weight"));
  for (const char* att : {"att_src", "att_dst"}) {
    Tensor& grad = ctx.result.gradients.at(att);
    grad = Tensor(grad.shape(), 0.0);
  }
}

// 11. GAT: attention values read in CSR order by the CSC traversal of the aggregation backward.
void gat_missing_eshuffle(BugContext& ctx) {
  const GatAttention a = gat_attention(ctx);
  const Tensor unshuffled = oracle::eshuffle_inverse_forward(a.graph, a.alpha);
  push_through_gat_weight(ctx, difference(oracle::spmm_ve_transposed_forward(a.graph, unshuffled, a.grad_out),
                                          oracle::spmm_ve_transposed_forward(a.graph, a.alpha, a.grad_out)));
}

// GAT's whole backward from the given attention softmax (instead of the case's own): what a layer
// computes when its backward reads `softmax` from somewhere. Every gradient except the bias's is
// replaced; the bias gradient does not depend on the attention.
void gat_backward_with_softmax(BugContext& ctx, const GatAttention& a, const Tensor& softmax) {
  const index_t heads = ctx.attributes.get_int("heads"), channels = ctx.attributes.get_int("out_features");
  Tensor weights = softmax;
  for (index_t i = 0; i < weights.size(); ++i) weights[i] *= a.factor[i];
  Tensor grad_h = oracle::spmm_ve_transposed_forward(a.graph, weights, a.grad_out);
  Tensor grad_alpha = oracle::sddmm_dot_forward(a.graph, a.grad_out, a.h, heads);
  for (index_t i = 0; i < grad_alpha.size(); ++i) grad_alpha[i] *= a.factor[i];
  const Tensor grad_logits = oracle::layers::leaky_relu_backward(
      a.logits, ctx.attributes.get_double("negative_slope"), oracle::edge_softmax_backward(a.graph, softmax, grad_alpha));
  const oracle::SddmmGrads<double> sums = oracle::sddmm_add_backward(a.graph, grad_logits);
  // s_dst = h[:n_dst]·att_dst, s_src = h·att_src per head (oracle/layers/gat.cpp).
  const auto scores_backward = [&](const char* att_name, const Tensor& grad_score) {
    const Tensor& att = ctx.input(att_name);
    Tensor grad_att({heads, channels});
    for (index_t j = 0; j < grad_score.rows(); ++j)
      for (index_t k = 0; k < heads; ++k)
        for (index_t c = 0; c < channels; ++c) {
          grad_h.at(j, k * channels + c) += grad_score.at(j, k) * att.at(k, c);
          grad_att.at(k, c) += grad_score.at(j, k) * a.h.at(j, k * channels + c);
        }
    ctx.result.gradients.at(att_name) = std::move(grad_att);
  };
  scores_backward("att_src", sums.grad_v);
  scores_backward("att_dst", sums.grad_u);
  ctx.result.gradients.at("weight") = matmul_at_b(ctx.input("x"), grad_h);
  ctx.result.gradients.at("x") = matmul_a_bt(grad_h, ctx.input("weight"));
}

// 7. GAT: a forward-only call leaves its attention in one shared edge buffer; a later backward of
// the same shape computes its whole attention backward from that buffer instead of its own.
void gat_shared_edge_buffer(BugContext& ctx, Tensor& buffer) {
  const GatAttention a = gat_attention(ctx);
  if (!ctx.wants_gradients()) {
    buffer = a.softmax;
    return;
  }
  if (buffer.shape() != a.softmax.shape()) return;  // nothing stale of this shape: the own forward is used
  gat_backward_with_softmax(ctx, a, buffer);
}

// 8. GAT: the attention softmax without max subtraction, exp(s)/Σexp(s) in the base's precision:
// the forward's output and the backward both use it.
void gat_softmax_no_max(BugContext& ctx, const std::function<Tensor(const Graph&, const Tensor&)>& naive_softmax) {
  const GatAttention a = gat_attention(ctx);
  const index_t heads = ctx.attributes.get_int("heads"), channels = ctx.attributes.get_int("out_features");
  const Tensor softmax =
      naive_softmax(a.graph, oracle::layers::leaky_relu(a.logits, ctx.attributes.get_double("negative_slope")));
  Tensor weights = softmax;
  for (index_t i = 0; i < weights.size(); ++i) weights[i] *= a.factor[i];
  const Tensor out = oracle::spmm_ve_forward(a.graph, weights, a.h);
  Tensor y = out;
  if (!ctx.attributes.get_bool("concat")) {
    y = Tensor({ctx.graph().n_dst(), channels});
    for (index_t i = 0; i < y.rows(); ++i)
      for (index_t k = 0; k < heads; ++k)
        for (index_t c = 0; c < channels; ++c) y.at(i, c) += out.at(i, k * channels + c) / static_cast<double>(heads);
  }
  if (ctx.attributes.get_bool("bias")) oracle::layers::add_bias(y, ctx.input("bias"));
  ctx.result.outputs.at(ctx.output_name()) = std::move(y);
  if (ctx.wants_gradients()) gat_backward_with_softmax(ctx, a, softmax);
}

// 27. GATv2: the attention's gradient Σ_e grad_logit[e, k] · z[e, k·C + c] with the pre-activation z
// where the forward multiplied LeakyReLU(z); the oracle's float64 backward gives z and grad_logit.
void gatv2_att_grad_from_pre_activation(BugContext& ctx) {
  const auto cfg = oracle::layers::Gatv2Config::from_attributes(ctx.attributes);
  const oracle::layers::Gatv2Parameters<double> p{ctx.input("weight_src"), ctx.input("weight_dst"), ctx.input("att"),
                                                  cfg.bias ? ctx.input("bias") : Tensor()};
  const auto exact = oracle::layers::gatv2_backward(ctx.graph(), cfg, ctx.input("x"), p, ctx.output_gradient());
  Tensor wrong({cfg.heads, cfg.out_features});
  for (index_t e = 0; e < exact.grad_logits.rows(); ++e)
    for (index_t k = 0; k < cfg.heads; ++k)
      for (index_t c = 0; c < cfg.out_features; ++c)
        wrong.at(k, c) += exact.grad_logits.at(e, k) * exact.pre_activation.at(e, k * cfg.out_features + c);
  ctx.result.gradients.at("att") = std::move(wrong);
}

// 2. AGNN: the attention gradient from the output gradient with itself, ⟨ḡ[row], ḡ[col]⟩ instead
// of ⟨ḡ[row], x[col]⟩, and the aggregation backward through the untransposed attention, A_α·ḡ
// instead of A_αᵀ·ḡ; the rest of the layer's backward (softmax, β, cosine, row normalization) as
// in oracle/layers/agnn.cpp. The callers have checked that the graph is square.
void agnn_attention_grad(BugContext& ctx) {
  constexpr double kNormFloor = 1e-12;  // oracle/layers/agnn.cpp: a zero row stays zero
  const Graph& g = ctx.graph();
  const Graph graph = aggregation_graph(ctx);
  const Tensor& x = ctx.input("x");
  const double beta = ctx.input("beta")[0];
  const Tensor& grad_y = ctx.output_gradient();
  std::vector<double> divisor(static_cast<size_t>(x.rows()));
  Tensor normalized = x;
  for (index_t i = 0; i < x.rows(); ++i) {
    double sum = 0;
    for (index_t c = 0; c < x.row_size(); ++c) sum += x.at(i, c) * x.at(i, c);
    divisor[static_cast<size_t>(i)] = std::max(std::sqrt(sum), kNormFloor);
    for (index_t c = 0; c < x.row_size(); ++c) normalized.at(i, c) /= divisor[static_cast<size_t>(i)];
  }
  const Tensor cosine = oracle::sddmm_dot_forward(graph, first_rows(normalized, g.n_dst()), normalized, index_t{1});
  Tensor logits = cosine;
  for (double& v : logits.values()) v *= beta;
  const Tensor alpha = oracle::edge_softmax_forward(graph, logits);

  const Tensor grad_alpha = oracle::sddmm_dot_forward(graph, grad_y, grad_y, index_t{1});  // the bug: ḡ with ḡ
  Tensor grad_x = oracle::spmm_ve_forward(graph, alpha, grad_y);                          // the bug: A_α·ḡ
  const Tensor grad_logits = oracle::edge_softmax_backward(graph, alpha, grad_alpha);
  double grad_beta = 0;
  Tensor grad_cosine = grad_logits;
  for (index_t k = 0; k < grad_logits.size(); ++k) {
    grad_beta += grad_logits[k] * cosine[k];
    grad_cosine[k] *= beta;
  }
  const oracle::SddmmGrads<double> similarity =
      oracle::sddmm_dot_backward(graph, first_rows(normalized, g.n_dst()), normalized, index_t{1}, grad_cosine);
  Tensor grad_normalized = similarity.grad_v;
  add_into_first_rows(grad_normalized, 1.0, similarity.grad_u);
  for (index_t i = 0; i < x.rows(); ++i) {
    const double d = divisor[static_cast<size_t>(i)];
    double projection = 0;
    if (d > kNormFloor)
      for (index_t c = 0; c < x.row_size(); ++c) projection += normalized.at(i, c) * grad_normalized.at(i, c);
    for (index_t c = 0; c < x.row_size(); ++c)
      grad_x.at(i, c) += (grad_normalized.at(i, c) - projection * normalized.at(i, c)) / d;
  }
  ctx.result.gradients.at("x") = std::move(grad_x);
  ctx.result.gradients.at("beta") = Tensor({1}, std::vector<double>{grad_beta});
}

}  // namespace gnncheck::replicas
