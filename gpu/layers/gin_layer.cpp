// GIN's and GINE's layers on the GPU (definitions: oracle/layers/gin.h).
#include "gpu/layers/layers.h"

#include "gpu/cuda_check.h"
#include "gpu/elementwise.cuh"
#include "gpu/gsddmm.cuh"
#include "gpu/gspmm.cuh"
#include "gpu/layers/dense.h"
#include "gpu/spmm.cuh"
#include "oracle/layers/gin.h"
#include "oracle/layers/self_loops.h"

namespace gnncheck::gpu {

namespace ol = oracle::layers;

namespace {

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

}  // namespace

// GIN: y = ReLU(((1 + ε)·x_dst + A·x) · W1 + b1) · W2 + b2
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

}  // namespace gnncheck::gpu
