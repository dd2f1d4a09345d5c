// Layer-level versions of the replica bugs (GCN, GIN, GAT): the layer's backward re-derived from the
// oracle's ops with the one wrong step. Where only one step of a correct backward changes, the
// replica adds the difference (wrong step − right step) pushed through the rest of the chain to the
// base system's correct gradients, so the rest stays exactly the base's answer.
#include <cmath>

#include <fmt/format.h>

#include "adapters/replicas/replica_system.h"
#include "oracle/degree_norm.h"
#include "oracle/edge_softmax.h"
#include "oracle/eshuffle.h"
#include "oracle/layers/dense.h"
#include "oracle/layers/dropout.h"
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

// GAT's attention over its aggregation graph, recomputed from the case, with the layer's
// deterministic attention-dropout mask (oracle/layers/dropout.h) applied as the layer does.
struct GatAttention {
  Graph graph;
  Tensor h;         // x·W, [n_src, H·C]
  Tensor alpha;     // the edge values aggregated with: softmax ⊙ dropout factor, [E', H]
  Tensor grad_out;  // gradient of the per-head aggregation output, [n_dst, H·C]
};

GatAttention gat_attention(const BugContext& ctx) {
  const index_t heads = ctx.attributes.get_int("heads"), channels = ctx.attributes.get_int("out_features");
  const Graph& g = ctx.graph();
  GatAttention a{aggregation_graph(ctx), matmul(ctx.input("x"), ctx.input("weight")), {}, {}};
  const auto scores = [&](const Tensor& att, index_t rows) {
    Tensor s({rows, heads});
    for (index_t j = 0; j < rows; ++j)
      for (index_t k = 0; k < heads; ++k)
        for (index_t c = 0; c < channels; ++c) s.at(j, k) += a.h.at(j, k * channels + c) * att.at(k, c);
    return s;
  };
  const Tensor logits = oracle::sddmm_add_forward(a.graph, scores(ctx.input("att_dst"), g.n_dst()),
                                                  scores(ctx.input("att_src"), g.n_src()));
  a.alpha = oracle::edge_softmax_forward(
      a.graph, oracle::layers::leaky_relu(logits, ctx.attributes.get_double("negative_slope")));
  if (const double p = ctx.attributes.get_double("attn_dropout"); p > 0.0) {
    const auto seed = static_cast<std::uint64_t>(ctx.attributes.get_int("dropout_seed"));
    for (index_t i = 0; i < a.alpha.size(); ++i)
      a.alpha[i] *= oracle::layers::dropout_keeps(seed, static_cast<std::uint64_t>(i), p) ? oracle::layers::dropout_scale(p) : 0.0;
  }
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
  push_through_gcn_weight(ctx, difference(oracle::normalized_spmm_forward(g, norm, grad_y),
                                          oracle::normalized_spmm_backward(g, norm, grad_y)));
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
                                          oracle::normalized_spmm_backward(g, norm_of(ctx), grad_y)));
}

// GAT: y_heads = A_α·(x·W): a change δ of grad_h changes grad_W by xᵀ·δ and grad_x by δ·Wᵀ.
void push_through_gat_weight(BugContext& ctx, const Tensor& delta_h) {
  add_to(ctx.result.gradients.at("weight"), matmul_at_b(ctx.input("x"), delta_h));
  add_to(ctx.result.gradients.at("x"), matmul_a_bt(delta_h, ctx.input("weight")));
}

// 5. GAT: the aggregation backward with A_α instead of A_αᵀ.
void gat_untransposed_attention(BugContext& ctx) {
  const GatAttention a = gat_attention(ctx);
  push_through_gat_weight(ctx, difference(oracle::spmm_ve_forward(a.graph, a.alpha, a.grad_out),
                                          oracle::spmm_ve_transposed_forward(a.graph, a.alpha, a.grad_out)));
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

}  // namespace gnncheck::replicas
