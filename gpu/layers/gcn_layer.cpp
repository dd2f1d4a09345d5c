// GCN's layer on the GPU: y = Â · (x · W) + b (definition: oracle/layers/gcn.h).
#include "gpu/layers/layers.h"

#include "gpu/degree_norm.cuh"
#include "gpu/elementwise.cuh"
#include "gpu/layers/dense.h"
#include "gpu/layers/layer_support.h"
#include "oracle/layers/gcn.h"

namespace gnncheck::gpu {

namespace ol = oracle::layers;

// GCN: y = Â · (x · W) + b
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

}  // namespace gnncheck::gpu
