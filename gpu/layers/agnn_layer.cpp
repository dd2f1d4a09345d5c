// AGNN's layer on the GPU (definition: oracle/layers/agnn.h).
#include "gpu/layers/layers.h"

#include "gpu/cuda_check.h"
#include "gpu/edge_softmax.cuh"
#include "gpu/elementwise.cuh"
#include "gpu/layers/dense.h"
#include "gpu/layers/layer_support.h"
#include "gpu/sddmm.cuh"
#include "gpu/spmm.cuh"
#include "gpu/spmm_ve.cuh"
#include "oracle/layers/agnn.h"
#include "oracle/layers/self_loops.h"

namespace gnncheck::gpu {

namespace ol = oracle::layers;

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

}  // namespace gnncheck::gpu
