// R-GCN's layer on the GPU: the target around the kernels of gpu/layers/rgcn.cuh (definition: oracle/layers/rgcn.h).
#include "gpu/layers/layers.h"

#include "gpu/layers/layer_support.h"
#include "gpu/layers/rgcn.cuh"
#include "oracle/layers/rgcn.h"

namespace gnncheck::gpu {

namespace ol = oracle::layers;

// R-GCN: y[i] = Σ_r h[i, r] · W_r + x[i] · root + bias (gpu/layers/rgcn.cuh)
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

}  // namespace gnncheck::gpu
