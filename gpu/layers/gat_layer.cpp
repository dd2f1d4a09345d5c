// GAT's layer on the GPU (definition: oracle/layers/gat.h).
#include "gpu/layers/layers.h"

#include "gpu/cuda_check.h"
#include "gpu/edge_softmax.cuh"
#include "gpu/elementwise.cuh"
#include "gpu/layers/dense.h"
#include "gpu/layers/layer_support.h"
#include "gpu/sddmm.cuh"
#include "gpu/spmm.cuh"
#include "gpu/spmm_ve.cuh"
#include "oracle/layers/dropout.h"
#include "oracle/layers/gat.h"

namespace gnncheck::gpu {

namespace ol = oracle::layers;

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

}  // namespace gnncheck::gpu
