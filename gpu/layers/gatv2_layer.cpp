// GATv2's layer on the GPU (definition: oracle/layers/gatv2.h).
#include "gpu/layers/layers.h"

#include "gpu/edge_softmax.cuh"
#include "gpu/elementwise.cuh"
#include "gpu/layers/dense.h"
#include "gpu/layers/layer_support.h"
#include "gpu/sddmm.cuh"
#include "gpu/spmm.cuh"
#include "gpu/spmm_ve.cuh"
#include "oracle/layers/gatv2.h"

namespace gnncheck::gpu {

namespace ol = oracle::layers;

// GATv2: attention after each channel's LeakyReLU (oracle/layers/gatv2.h)
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

}  // namespace gnncheck::gpu
