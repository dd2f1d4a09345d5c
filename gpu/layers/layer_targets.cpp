// The GPU layers (definitions: oracle/layers/*.h), forward and backward for the input features and
// every parameter, as targets of the `gpu` system. Each is the chain of gpu/ ops the oracle's
// layer is built from; dense products go through cuBLAS (gpu/layers/dense.h). R-GCN and RGAT are their
// own kernels (gpu/layers/rgcn.cuh, rgat.cuh): one thread per output element, fixed orders, no cuBLAS. Activations
// that a backward needs are kept on the device for the duration of the evaluation.
//
// Graph storage per layer: gpu/device_graph.h. Edge activations kept for the backward: GAT
// logits, LeakyReLU scores and alpha ([E, H] each, + the dropout factors and the dropped alpha
// when attn_dropout > 0); GATv2 z and LeakyReLU(z) ([E, H·C] each), alpha ([E, H]); AGNN cosine,
// logits and alpha ([E] each). R-GCN keeps per-destination ones only: c_{i,r} and h ([n_dst, R] and
// [n_dst, R, in]), and W_r ([R, in, out]) with bases. RGAT keeps out_i and out_j ([E, H·C] each), z
// and alpha ([E, H] each).
#include <fmt/format.h>

#include "gpu/degree_norm.cuh"
#include "gpu/edge_softmax.cuh"
#include "gpu/elementwise.cuh"
#include "gpu/gpu_targets.h"
#include "gpu/gsddmm.cuh"
#include "gpu/gspmm.cuh"
#include "gpu/layers/dense.h"
#include "gpu/layers/rgat.cuh"
#include "gpu/layers/rgcn.cuh"
#include "gpu/sddmm.cuh"
#include "gpu/spmm.cuh"
#include "gpu/spmm_ve.cuh"
#include "oracle/layers/agnn.h"
#include "oracle/layers/dropout.h"
#include "oracle/layers/gat.h"
#include "oracle/layers/gatv2.h"
#include "oracle/layers/gcn.h"
#include "oracle/layers/gin.h"
#include "oracle/layers/rgat.h"
#include "oracle/layers/rgcn.h"
#include "oracle/layers/sage.h"
#include "gpu/layers/self_loops.h"
#include "oracle/layers/self_loops.h"

namespace gnncheck::gpu {
namespace {

namespace ol = oracle::layers;

DegreeNorm to_gpu(oracle::DegreeNorm norm) {
  return norm == oracle::DegreeNorm::symmetric ? DegreeNorm::symmetric : DegreeNorm::row_mean;
}
SourceDegree to_gpu(oracle::SourceDegree d) { return d == oracle::SourceDegree::in ? SourceDegree::in : SourceDegree::out; }
ZeroDegree to_gpu(oracle::ZeroDegree d) { return d == oracle::ZeroDegree::one ? ZeroDegree::one : ZeroDegree::zero; }

// The graph a layer aggregates over: A, or A + I in the block convention.
Graph aggregation_graph(const Graph& g, bool self_loops, const std::string& layer) {
  if (!self_loops) return g;
  ol::require_destinations_are_sources(g, layer);
  return append_self_loops(g);
}

const float* bias_or_null(const TargetRun& run, bool bias) { return bias ? run.input("bias").data() : nullptr; }

// ---- GCN: y = Â · (x · W) + b ------------------------------------------------------------------
void gcn_layer(TargetRun& run) {
  const auto cfg = ol::GcnConfig::from_attributes(run.attributes);
  GpuContext& ctx = run.ctx;
  DeviceGraph& g = run.aggregation_graph(cfg.self_loops, "gcn");
  const index_t n_src = g.n_src(), n_dst = g.n_dst(), in = cfg.in_features, out = cfg.out_features;
  const DeviceTensor& x = run.input("x");
  const DeviceTensor& w = run.input("weight");

  DeviceTensor xw(ctx, {n_src, out});
  matmul(ctx, n_src, in, out, x.data(), w.data(), xw.data());
  DeviceTensor& y = run.new_output("y", {n_dst, out});
  normalized_spmm_forward(ctx, g, to_gpu(cfg.norm), to_gpu(cfg.source_degree), xw.data(), out, y.data(),
                          to_gpu(cfg.zero_degree));
  if (cfg.bias) add_bias(ctx, n_dst, out, bias_or_null(run, true), y.data());
  if (!run.backward()) return;

  const float* gy = run.grad_output("y").data();
  DeviceTensor grad_xw(ctx, {n_src, out});
  normalized_spmm_backward(ctx, g, to_gpu(cfg.norm), to_gpu(cfg.source_degree), gy, out, grad_xw.data(),
                           to_gpu(cfg.zero_degree));
  matmul_at_b(ctx, n_src, in, out, x.data(), grad_xw.data(), run.new_gradient("weight", {in, out}).data());
  matmul_a_bt(ctx, n_src, out, in, grad_xw.data(), w.data(), run.new_gradient("x", x.shape()).data());
  if (cfg.bias) column_sums(ctx, n_dst, out, gy, run.new_gradient("bias", {out}).data());
  ctx.synchronize();
}

// GINE's messages x[col_e] + edge_attr[e] and its sum over each row, as the generalized SDDMM and
// SpMM compute them (gpu/gsddmm.cuh, gpu/gspmm.cuh).
GsddmmShape gine_messages_shape(index_t width) {
  GsddmmShape s;
  s.features = width;
  s.op = ElementwiseOp::add;
  s.lhs_rows = OperandRows::u;
  s.rhs_rows = OperandRows::e;
  s.lhs = {OperandBroadcast::none, width};
  s.rhs = {OperandBroadcast::none, width};
  return s;
}
// The row aggregation of GIN's sources (copy_u) or GINE's edge messages (copy_e): sum, mean or max,
// as the oracle's aggr (max: the first extreme in edge-id order, 0 on an empty row).
GspmmShape gin_aggregation_shape(index_t width, bool edge_messages, ol::GinAggregation aggregation) {
  GspmmShape s;
  s.features = width;
  s.message = edge_messages ? ElementwiseOp::copy_rhs : ElementwiseOp::copy_lhs;
  s.reduce = aggregation == ol::GinAggregation::max    ? RowReduction::max
             : aggregation == ol::GinAggregation::mean ? RowReduction::mean
                                                       : RowReduction::sum;
  (edge_messages ? s.e : s.u) = {OperandBroadcast::none, width};
  return s;
}

// ---- GIN: y = ReLU(((1 + ε)·x_dst + A·x) · W1 + b1) · W2 + b2 ------------------------------------
// GINE (edge_messages): A·x becomes Σ_{e ∈ row} ReLU(x[col_e] + edge_attr[e]); aggr mean or max
// replaces the sum (gspmm's reductions).
void gin_family_layer(TargetRun& run, bool edge_messages) {
  const auto cfg = ol::GinConfig::from_attributes(run.attributes);
  ol::require_destinations_are_sources(run.host_graph, edge_messages ? "gine" : "gin");
  GpuContext& ctx = run.ctx;
  DeviceGraph& g = run.graph();
  const index_t n_dst = g.n_dst(), in = cfg.in_features, hidden = cfg.hidden_features, out = cfg.out_features;
  const DeviceTensor& x = run.input("x");
  const DeviceTensor& w1 = run.input("weight1");
  const DeviceTensor& w2 = run.input("weight2");
  const float one_plus_eps = static_cast<float>(1.0 + (*run.host_inputs.at("eps"))[0]);

  DeviceTensor h(ctx, {n_dst, in});
  DeviceTensor m, r;  // GINE's messages before and after their ReLU, [E, in]
  if (edge_messages) {
    const DeviceTensor& edge_attr = run.input("edge_attr");
    m = DeviceTensor(ctx, {g.num_edges(), in});
    r = DeviceTensor(ctx, {g.num_edges(), in});
    gsddmm_forward(ctx, g, gine_messages_shape(in), x.data(), edge_attr.data(), m.data());
    relu_forward(ctx, g.num_edges() * in, m.data(), r.data());
    gspmm_forward(ctx, g, gin_aggregation_shape(in, true, cfg.aggregation), nullptr, r.data(), h.data());
  } else if (cfg.aggregation == ol::GinAggregation::sum) {
    spmm_forward(ctx, g, x.data(), in, h.data(), ForwardMethod::row_kernel);
  } else {
    gspmm_forward(ctx, g, gin_aggregation_shape(in, false, cfg.aggregation), x.data(), nullptr, h.data());
  }
  axpby(ctx, n_dst * in, one_plus_eps, x.data(), 1.0f, h.data());  // first n_dst rows of x
  DeviceTensor z1(ctx, {n_dst, hidden});
  matmul(ctx, n_dst, in, hidden, h.data(), w1.data(), z1.data());
  if (cfg.bias) add_bias(ctx, n_dst, hidden, run.input("bias1").data(), z1.data());
  DeviceTensor a1(ctx, {n_dst, hidden});
  relu_forward(ctx, n_dst * hidden, z1.data(), a1.data());
  DeviceTensor& y = run.new_output("y", {n_dst, out});
  matmul(ctx, n_dst, hidden, out, a1.data(), w2.data(), y.data());
  if (cfg.bias) add_bias(ctx, n_dst, out, run.input("bias2").data(), y.data());
  if (!run.backward()) return;

  const float* gy = run.grad_output("y").data();
  matmul_at_b(ctx, n_dst, hidden, out, a1.data(), gy, run.new_gradient("weight2", {hidden, out}).data());
  if (cfg.bias) column_sums(ctx, n_dst, out, gy, run.new_gradient("bias2", {out}).data());
  DeviceTensor gz1(ctx, {n_dst, hidden});
  matmul_a_bt(ctx, n_dst, out, hidden, gy, w2.data(), gz1.data());
  relu_backward(ctx, n_dst * hidden, z1.data(), gz1.data(), gz1.data());
  matmul_at_b(ctx, n_dst, in, hidden, h.data(), gz1.data(), run.new_gradient("weight1", {in, hidden}).data());
  if (cfg.bias) column_sums(ctx, n_dst, hidden, gz1.data(), run.new_gradient("bias1", {hidden}).data());
  DeviceTensor gh(ctx, {n_dst, in});
  matmul_a_bt(ctx, n_dst, hidden, in, gz1.data(), w1.data(), gh.data());
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  if (edge_messages) {
    // Each message's gradient is its row's gh (the row sum's backward) through the message's ReLU;
    // the messages' sum's backward then gives edge_attr's and the sources' shares of x's.
    DeviceTensor& gm = run.new_gradient("edge_attr", {g.num_edges(), in});
    gspmm_backward(ctx, g, gin_aggregation_shape(in, true, cfg.aggregation), nullptr, r.data(), gh.data(), nullptr,
                   gm.data());
    relu_backward(ctx, g.num_edges() * in, m.data(), gm.data(), gm.data());
    gsddmm_backward(ctx, g, gine_messages_shape(in), x.data(), run.input("edge_attr").data(), gm.data(), gx.data(), nullptr);
  } else if (cfg.aggregation == ol::GinAggregation::sum) {
    spmm_backward(ctx, g, gh.data(), in, gx.data(), TransposeMethod::fused_csc_kernel);
  } else {
    gspmm_backward(ctx, g, gin_aggregation_shape(in, false, cfg.aggregation), x.data(), nullptr, gh.data(), gx.data(),
                   nullptr);
  }
  axpby(ctx, n_dst * in, one_plus_eps, gh.data(), 1.0f, gx.data());
  const float grad_eps = dot(ctx, n_dst * in, gh.data(), x.data());
  DeviceTensor& geps = run.new_gradient("eps", {1});
  GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(geps.data(), &grad_eps, sizeof(float), cudaMemcpyHostToDevice, ctx.stream));
  ctx.synchronize();
}

// ---- SAGE-mean: y = x_dst · W_self + (D_dst^-1 A x) · W_neigh + b ----------------------------------
void sage_layer(TargetRun& run) {
  const auto cfg = ol::SageConfig::from_attributes(run.attributes);
  ol::require_destinations_are_sources(run.host_graph, "sage");
  GpuContext& ctx = run.ctx;
  DeviceGraph& g = run.graph();
  const index_t n_dst = g.n_dst(), in = cfg.in_features, out = cfg.out_features;
  const DeviceTensor& x = run.input("x");
  const DeviceTensor& w_self = run.input("weight_self");
  const DeviceTensor& w_neigh = run.input("weight_neigh");
  const bool max = cfg.aggregation == ol::SageAggregation::max;

  // The neighbours' side p: x, or ReLU(x · W_pool + b_pool) with project.
  DeviceTensor z, projected;
  if (cfg.project) {
    z = DeviceTensor(ctx, {g.n_src(), in});
    projected = DeviceTensor(ctx, {g.n_src(), in});
    matmul(ctx, g.n_src(), in, in, x.data(), run.input("weight_pool").data(), z.data());
    add_bias(ctx, g.n_src(), in, run.input("bias_pool").data(), z.data());
    relu_forward(ctx, g.n_src() * in, z.data(), projected.data());
  }
  const float* messages = cfg.project ? projected.data() : x.data();
  // max: gspmm's copy_u max, which selects the first extreme of a row in edge-id order (the oracle's
  // choice at a tie) and gives an empty row 0.
  GspmmShape max_shape;
  max_shape.features = in;
  max_shape.message = ElementwiseOp::copy_lhs;
  max_shape.reduce = RowReduction::max;
  max_shape.u = {OperandBroadcast::none, in};
  DeviceTensor mean(ctx, {n_dst, in});  // the aggregation, mean or max
  if (max)
    gspmm_forward(ctx, g, max_shape, messages, nullptr, mean.data());
  else
    normalized_spmm_forward(ctx, g, DegreeNorm::row_mean, SourceDegree::out, messages, in, mean.data());
  DeviceTensor& y = run.new_output("y", {n_dst, out});
  matmul(ctx, n_dst, in, out, x.data(), w_self.data(), y.data());
  matmul(ctx, n_dst, in, out, mean.data(), w_neigh.data(), y.data(), 1.0f);
  if (cfg.bias) add_bias(ctx, n_dst, out, bias_or_null(run, true), y.data());
  if (!run.backward()) return;

  const float* gy = run.grad_output("y").data();
  matmul_at_b(ctx, n_dst, in, out, x.data(), gy, run.new_gradient("weight_self", {in, out}).data());
  matmul_at_b(ctx, n_dst, in, out, mean.data(), gy, run.new_gradient("weight_neigh", {in, out}).data());
  if (cfg.bias) column_sums(ctx, n_dst, out, gy, run.new_gradient("bias", {out}).data());
  DeviceTensor g_mean(ctx, {n_dst, in});
  matmul_a_bt(ctx, n_dst, out, in, gy, w_neigh.data(), g_mean.data());
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  DeviceTensor g_projected;
  float* g_messages = gx.data();
  if (cfg.project) {
    g_projected = DeviceTensor(ctx, {g.n_src(), in});
    g_messages = g_projected.data();
  }
  if (max)
    gspmm_backward(ctx, g, max_shape, messages, nullptr, g_mean.data(), g_messages, nullptr);
  else
    normalized_spmm_backward(ctx, g, DegreeNorm::row_mean, SourceDegree::out, g_mean.data(), in, g_messages);
  if (cfg.project) {
    relu_backward(ctx, g.n_src() * in, z.data(), g_projected.data(), g_projected.data());
    matmul_at_b(ctx, g.n_src(), in, in, x.data(), g_projected.data(), run.new_gradient("weight_pool", {in, in}).data());
    column_sums(ctx, g.n_src(), in, g_projected.data(), run.new_gradient("bias_pool", {in}).data());
    matmul_a_bt(ctx, g.n_src(), in, in, g_projected.data(), run.input("weight_pool").data(), gx.data());
  }
  matmul_a_bt(ctx, n_dst, out, in, gy, w_self.data(), gx.data(), 1.0f);  // first n_dst rows
  ctx.synchronize();
}

// The attention layers' y from out [n_dst, H·C]: out itself (concat) or its mean over the heads,
// plus the bias.
void join_heads(TargetRun& run, bool concat, bool bias, index_t heads, index_t channels, const DeviceTensor& out) {
  GpuContext& ctx = run.ctx;
  const index_t n_dst = out.shape()[0], width = concat ? heads * channels : channels;
  DeviceTensor& y = run.new_output("y", {n_dst, width});
  if (concat) GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(y.data(), out.data(), static_cast<std::size_t>(n_dst * width) * sizeof(float),
                                                  cudaMemcpyDeviceToDevice, ctx.stream));
  else mean_over_heads(ctx, n_dst, heads, channels, out.data(), y.data());
  if (bias) add_bias(ctx, n_dst, width, bias_or_null(run, true), y.data());
}

// Its backward: the bias's gradient, and the gradient at out — grad_y itself (concat) or grad_y / H
// for every head, kept in `storage`.
const float* join_heads_backward(TargetRun& run, bool concat, bool bias, index_t heads, index_t channels,
                                 DeviceTensor& storage) {
  GpuContext& ctx = run.ctx;
  const DeviceTensor& grad_y = run.grad_output("y");
  const index_t n_dst = grad_y.shape()[0], width = concat ? heads * channels : channels;
  if (bias) column_sums(ctx, n_dst, width, grad_y.data(), run.new_gradient("bias", {width}).data());
  if (concat) return grad_y.data();
  storage = DeviceTensor(ctx, {n_dst, heads * channels});
  mean_over_heads_backward(ctx, n_dst, heads, channels, grad_y.data(), storage.data());
  return storage.data();
}

// ---- GAT ------------------------------------------------------------------------------------------
void gat_layer(TargetRun& run) {
  const auto cfg = ol::GatConfig::from_attributes(run.attributes);
  run.require_destinations_are_sources("gat");
  GpuContext& ctx = run.ctx;
  DeviceGraph& g = run.aggregation_graph(cfg.self_loops, "gat");
  const index_t n_src = g.n_src(), n_dst = g.n_dst(), edges = g.num_edges();
  const index_t heads = cfg.heads, channels = cfg.out_features, width = heads * channels, in = cfg.in_features;
  const DeviceTensor& x = run.input("x");
  const DeviceTensor& w = run.input("weight");
  const DeviceTensor& att_src = run.input("att_src");
  const DeviceTensor& att_dst = run.input("att_dst");
  const float slope = static_cast<float>(cfg.negative_slope);

  DeviceTensor h(ctx, {n_src, width});
  matmul(ctx, n_src, in, width, x.data(), w.data(), h.data());
  DeviceTensor s_src(ctx, {n_src, heads}), s_dst(ctx, {n_dst, heads});
  head_dot(ctx, n_src, heads, channels, h.data(), att_src.data(), s_src.data());
  head_dot(ctx, n_dst, heads, channels, h.data(), att_dst.data(), s_dst.data());
  DeviceTensor logits(ctx, {edges, heads});
  sddmm_add_forward(ctx, g, s_dst.data(), s_src.data(), heads, logits.data());
  DeviceTensor scores(ctx, {edges, heads});
  leaky_relu_forward(ctx, edges * heads, slope, logits.data(), scores.data());
  DeviceTensor alpha(ctx, {edges, heads});
  edge_softmax_forward(ctx, g, scores.data(), heads, alpha.data());
  // Attention dropout: the same deterministic mask as the oracle (oracle/layers/dropout.h).
  DeviceTensor dropout, dropped;
  const float* attention = alpha.data();
  if (cfg.attn_dropout > 0.0) {
    std::vector<float> factors(static_cast<std::size_t>(edges * heads));
    const float scale = static_cast<float>(ol::dropout_scale(cfg.attn_dropout));
    for (std::size_t i = 0; i < factors.size(); ++i)
      factors[i] = ol::dropout_keeps(cfg.dropout_seed, i, cfg.attn_dropout) ? scale : 0.0f;
    dropout = DeviceTensor(ctx, {edges, heads});
    GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(dropout.data(), factors.data(), factors.size() * sizeof(float),
                                        cudaMemcpyHostToDevice, ctx.stream));
    ctx.synchronize();
    dropped = DeviceTensor(ctx, {edges, heads});
    scale_rows(ctx, edges * heads, 1, dropout.data(), alpha.data(), dropped.data());
    attention = dropped.data();
  }
  DeviceTensor out(ctx, {n_dst, width});
  spmm_ve_forward(ctx, g, attention, heads, h.data(), channels, out.data(), ForwardMethod::row_kernel);
  join_heads(run, cfg.concat, cfg.bias, heads, channels, out);
  if (!run.backward()) return;

  DeviceTensor grad_out_heads;
  const float* grad_out = join_heads_backward(run, cfg.concat, cfg.bias, heads, channels, grad_out_heads);
  // Through the aggregation: grad of the attention and of h (fused eShuffle + SpMMve over the CSC).
  DeviceTensor grad_attention(ctx, {edges, heads});
  DeviceTensor grad_h(ctx, {n_src, width});
  spmm_ve_backward(ctx, g, attention, heads, h.data(), channels, grad_out, grad_attention.data(), grad_h.data(),
                   TransposeMethod::fused_csc_kernel);
  if (cfg.attn_dropout > 0.0)
    scale_rows(ctx, edges * heads, 1, dropout.data(), grad_attention.data(), grad_attention.data());
  DeviceTensor grad_logits(ctx, {edges, heads});
  edge_softmax_backward(ctx, g, alpha.data(), grad_attention.data(), heads, grad_logits.data());
  leaky_relu_backward(ctx, edges * heads, slope, logits.data(), grad_logits.data(), grad_logits.data());
  DeviceTensor grad_s_dst(ctx, {n_dst, heads}), grad_s_src(ctx, {n_src, heads});
  sddmm_add_backward(ctx, g, grad_logits.data(), heads, grad_s_dst.data(), grad_s_src.data());
  head_dot_backward(ctx, n_src, heads, channels, h.data(), att_src.data(), grad_s_src.data(), true, grad_h.data(),
                    run.new_gradient("att_src", {heads, channels}).data());
  head_dot_backward(ctx, n_dst, heads, channels, h.data(), att_dst.data(), grad_s_dst.data(), true, grad_h.data(),
                    run.new_gradient("att_dst", {heads, channels}).data());
  matmul_at_b(ctx, n_src, in, width, x.data(), grad_h.data(), run.new_gradient("weight", {in, width}).data());
  matmul_a_bt(ctx, n_src, width, in, grad_h.data(), w.data(), run.new_gradient("x", x.shape()).data());
  ctx.synchronize();
}

// ---- GATv2: attention after each channel's LeakyReLU (oracle/layers/gatv2.h) --------------------
void gatv2_layer(TargetRun& run) {
  const auto cfg = ol::Gatv2Config::from_attributes(run.attributes);
  run.require_destinations_are_sources("gatv2");
  GpuContext& ctx = run.ctx;
  DeviceGraph& g = run.aggregation_graph(cfg.self_loops, "gatv2");
  const index_t n_src = g.n_src(), n_dst = g.n_dst(), edges = g.num_edges();
  const index_t heads = cfg.heads, channels = cfg.out_features, width = heads * channels, in = cfg.in_features;
  const DeviceTensor& x = run.input("x");
  const DeviceTensor& w_src = run.input("weight_src");
  const DeviceTensor& w_dst = run.input("weight_dst");
  const DeviceTensor& att = run.input("att");
  const float slope = static_cast<float>(cfg.negative_slope);

  DeviceTensor h_src(ctx, {n_src, width}), h_dst(ctx, {n_dst, width});
  matmul(ctx, n_src, in, width, x.data(), w_src.data(), h_src.data());
  matmul(ctx, n_dst, in, width, x.data(), w_dst.data(), h_dst.data());  // x's first n_dst rows
  DeviceTensor z(ctx, {edges, width}), activated(ctx, {edges, width});
  sddmm_add_forward(ctx, g, h_dst.data(), h_src.data(), width, z.data());
  leaky_relu_forward(ctx, edges * width, slope, z.data(), activated.data());
  DeviceTensor logits(ctx, {edges, heads});
  head_dot(ctx, edges, heads, channels, activated.data(), att.data(), logits.data());
  DeviceTensor alpha(ctx, {edges, heads});
  edge_softmax_forward(ctx, g, logits.data(), heads, alpha.data());
  DeviceTensor out(ctx, {n_dst, width});
  spmm_ve_forward(ctx, g, alpha.data(), heads, h_src.data(), channels, out.data(), ForwardMethod::row_kernel);
  join_heads(run, cfg.concat, cfg.bias, heads, channels, out);
  if (!run.backward()) return;

  DeviceTensor grad_out_heads;
  const float* grad_out = join_heads_backward(run, cfg.concat, cfg.bias, heads, channels, grad_out_heads);
  DeviceTensor grad_alpha(ctx, {edges, heads});
  DeviceTensor grad_h_src(ctx, {n_src, width});
  spmm_ve_backward(ctx, g, alpha.data(), heads, h_src.data(), channels, grad_out, grad_alpha.data(), grad_h_src.data(),
                   TransposeMethod::fused_csc_kernel);
  DeviceTensor grad_logits(ctx, {edges, heads});
  edge_softmax_backward(ctx, g, alpha.data(), grad_alpha.data(), heads, grad_logits.data());
  DeviceTensor grad_z(ctx, {edges, width});  // first the gradient at LeakyReLU(z), then at z
  head_dot_backward(ctx, edges, heads, channels, activated.data(), att.data(), grad_logits.data(), false, grad_z.data(),
                    run.new_gradient("att", {heads, channels}).data());
  leaky_relu_backward(ctx, edges * width, slope, z.data(), grad_z.data(), grad_z.data());
  DeviceTensor grad_h_dst(ctx, {n_dst, width}), grad_h_src_scores(ctx, {n_src, width});
  sddmm_add_backward(ctx, g, grad_z.data(), width, grad_h_dst.data(), grad_h_src_scores.data());
  axpby(ctx, n_src * width, 1.0f, grad_h_src_scores.data(), 1.0f, grad_h_src.data());
  matmul_at_b(ctx, n_src, in, width, x.data(), grad_h_src.data(), run.new_gradient("weight_src", {in, width}).data());
  matmul_at_b(ctx, n_dst, in, width, x.data(), grad_h_dst.data(), run.new_gradient("weight_dst", {in, width}).data());
  DeviceTensor& grad_x = run.new_gradient("x", x.shape());
  matmul_a_bt(ctx, n_src, width, in, grad_h_src.data(), w_src.data(), grad_x.data());
  matmul_a_bt(ctx, n_dst, width, in, grad_h_dst.data(), w_dst.data(), grad_x.data(), 1.0f);  // x's first n_dst rows
  ctx.synchronize();
}

// ---- AGNN -----------------------------------------------------------------------------------------
void agnn_layer(TargetRun& run) {
  const auto cfg = ol::AgnnConfig::from_attributes(run.attributes);
  ol::require_destinations_are_sources(run.host_graph, "agnn");
  const Graph host = aggregation_graph(run.host_graph, cfg.self_loops, "agnn");
  GpuContext& ctx = run.ctx;
  DeviceGraph g(ctx, host);
  const index_t n_src = g.n_src(), n_dst = g.n_dst(), edges = g.num_edges(), f = cfg.features;
  constexpr float norm_floor = 1e-12f;  // as the oracle (PyG's F.normalize)
  const DeviceTensor& x = run.input("x");
  const float beta = static_cast<float>((*run.host_inputs.at("beta"))[0]);

  DeviceTensor normalized(ctx, {n_src, f});
  DeviceTensor divisor(ctx, {n_src});
  row_normalize(ctx, n_src, f, norm_floor, x.data(), normalized.data(), divisor.data());
  DeviceTensor cosine(ctx, {edges, 1});
  sddmm_dot_forward(ctx, g, normalized.data(), normalized.data(), 1, f, cosine.data());
  DeviceTensor logits(ctx, {edges, 1});
  axpby(ctx, edges, beta, cosine.data(), 0.0f, logits.data());
  DeviceTensor alpha(ctx, {edges, 1});
  edge_softmax_forward(ctx, g, logits.data(), 1, alpha.data());
  DeviceTensor& y = run.new_output("y", {n_dst, f});
  spmm_ve_forward(ctx, g, alpha.data(), 1, x.data(), f, y.data(), ForwardMethod::row_kernel);
  if (!run.backward()) return;

  const float* gy = run.grad_output("y").data();
  DeviceTensor grad_alpha(ctx, {edges, 1});
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  spmm_ve_backward(ctx, g, alpha.data(), 1, x.data(), f, gy, grad_alpha.data(), gx.data(),
                   TransposeMethod::fused_csc_kernel);
  DeviceTensor grad_logits(ctx, {edges, 1});
  edge_softmax_backward(ctx, g, alpha.data(), grad_alpha.data(), 1, grad_logits.data());
  const float grad_beta = dot(ctx, edges, grad_logits.data(), cosine.data());
  DeviceTensor& gbeta = run.new_gradient("beta", {1});
  GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(gbeta.data(), &grad_beta, sizeof(float), cudaMemcpyHostToDevice, ctx.stream));
  axpby(ctx, edges, 0.0f, grad_logits.data(), beta, grad_logits.data());  // grad_cosine = β · grad_logits
  DeviceTensor grad_normalized(ctx, {n_src, f});
  DeviceTensor grad_u(ctx, {n_dst, f});
  sddmm_dot_backward(ctx, g, normalized.data(), normalized.data(), 1, f, grad_logits.data(), grad_u.data(),
                     grad_normalized.data());
  axpby(ctx, n_dst * f, 1.0f, grad_u.data(), 1.0f, grad_normalized.data());  // first n_dst rows
  row_normalize_backward_add(ctx, n_src, f, norm_floor, normalized.data(), divisor.data(), grad_normalized.data(),
                             gx.data());
  ctx.synchronize();
}

// ---- R-GCN: y[i] = Σ_r h[i, r] · W_r + x[i] · root + bias (gpu/layers/rgcn.cuh) -------------------
void rgcn_layer(TargetRun& run) {
  const auto cfg = ol::RgcnConfig::from_attributes(run.attributes);
  run.require_destinations_are_sources("rgcn");
  GpuContext& ctx = run.ctx;
  DeviceGraph& g = run.graph();
  const RgcnShape shape{.in_features = cfg.in_features,
                        .out_features = cfg.out_features,
                        .relations = cfg.relations,
                        .bases = cfg.bases,
                        .mean = cfg.aggregation == ol::RgcnAggregation::mean};
  const DeviceTensor& x = run.input("x");
  const DeviceTensor& types = run.input("edge_type");
  const DeviceTensor& weight = run.input("weight");  // W_r, or the bases
  const RgcnParameters params{.weight = weight.data(),
                              .comp = cfg.bases > 0 ? run.input("comp").data() : nullptr,
                              .root = cfg.root_weight ? run.input("root").data() : nullptr,
                              .bias = bias_or_null(run, cfg.bias)};
  DeviceTensor& y = run.new_output("y", {g.n_dst(), cfg.out_features});
  const RgcnSaved saved = rgcn_forward(ctx, g, shape, x.data(), types.data(), params, y.data());
  if (!run.backward()) {
    ctx.synchronize();  // the saved activations are freed on return
    return;
  }

  RgcnGradients grads{.x = run.new_gradient("x", x.shape()).data(),
                      .weight = run.new_gradient("weight", weight.shape()).data()};
  if (cfg.bases > 0) grads.comp = run.new_gradient("comp", {cfg.relations, cfg.bases}).data();
  if (cfg.root_weight) grads.root = run.new_gradient("root", {cfg.in_features, cfg.out_features}).data();
  if (cfg.bias) grads.bias = run.new_gradient("bias", {cfg.out_features}).data();
  rgcn_backward(ctx, g, shape, x.data(), types.data(), params, saved, run.grad_output("y").data(), grads);
  ctx.synchronize();
}

// ---- RGAT: attention across relations, a weight per relation (gpu/layers/rgat.cuh) ----------------
void rgat_layer(TargetRun& run) {
  const auto cfg = ol::RgatConfig::from_attributes(run.attributes);
  run.require_destinations_are_sources("rgat");
  GpuContext& ctx = run.ctx;
  DeviceGraph& g = run.graph();
  const RgatShape shape{.in_features = cfg.in_features,
                        .out_features = cfg.out_features,
                        .heads = cfg.heads,
                        .relations = cfg.relations,
                        .concat = cfg.concat,
                        .negative_slope = static_cast<float>(cfg.negative_slope)};
  const DeviceTensor& x = run.input("x");
  const DeviceTensor& types = run.input("edge_type");
  const DeviceTensor& weight = run.input("weight");
  const RgatParameters params{.weight = weight.data(),
                              .q = run.input("q").data(),
                              .k = run.input("k").data(),
                              .bias = bias_or_null(run, cfg.bias)};
  DeviceTensor& y = run.new_output("y", {g.n_dst(), cfg.output_width()});
  const RgatSaved saved = rgat_forward(ctx, g, shape, x.data(), types.data(), params, y.data());
  if (!run.backward()) {
    ctx.synchronize();  // the saved activations are freed on return
    return;
  }
  RgatGradients grads{.x = run.new_gradient("x", x.shape()).data(),
                      .weight = run.new_gradient("weight", weight.shape()).data(),
                      .q = run.new_gradient("q", {cfg.width(), cfg.heads}).data(),
                      .k = run.new_gradient("k", {cfg.width(), cfg.heads}).data()};
  if (cfg.bias) grads.bias = run.new_gradient("bias", {cfg.output_width()}).data();
  rgat_backward(ctx, g, shape, x.data(), types.data(), params, saved, run.grad_output("y").data(), grads);
  ctx.synchronize();
}

}  // namespace

std::map<std::string, GpuTargetFn> gpu_layer_targets() {
  return {{"gcn", gcn_layer},
          {"gin", [](TargetRun& run) { gin_family_layer(run, false); }},
          {"gine", [](TargetRun& run) { gin_family_layer(run, true); }},
          {"gat", gat_layer},
          {"gatv2", gatv2_layer},
          {"sage", sage_layer},
          {"agnn", agnn_layer},
          {"rgcn", rgcn_layer},
          {"rgat", rgat_layer}};
}

}  // namespace gnncheck::gpu
