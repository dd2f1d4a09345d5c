// RGAT's layer on the GPU: the target around the kernels of gpu/layers/rgat.cuh (definition: oracle/layers/rgat.h).
#include "gpu/layers/layers.h"

#include "gpu/layers/layer_support.h"
#include "gpu/layers/rgat.cuh"
#include "oracle/layers/rgat.h"

namespace gnncheck::gpu {

namespace ol = oracle::layers;

// RGAT: attention across relations, a weight per relation (gpu/layers/rgat.cuh)
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

}  // namespace gnncheck::gpu
