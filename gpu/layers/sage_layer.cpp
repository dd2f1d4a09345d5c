// GraphSAGE's layer on the GPU (definition: oracle/layers/sage.h).
#include "gpu/layers/layers.h"

#include "gpu/degree_norm.cuh"
#include "gpu/elementwise.cuh"
#include "gpu/gspmm.cuh"
#include "gpu/layers/dense.h"
#include "gpu/layers/layer_support.h"
#include "oracle/layers/sage.h"
#include "oracle/layers/self_loops.h"

namespace gnncheck::gpu {

namespace ol = oracle::layers;

// SAGE-mean: y = x_dst · W_self + (D_dst^-1 A x) · W_neigh + b
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

}  // namespace gnncheck::gpu
