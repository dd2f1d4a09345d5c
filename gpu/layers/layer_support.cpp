#include "gpu/layers/layer_support.h"

#include "gpu/cuda_check.h"
#include "gpu/elementwise.cuh"
#include "gpu/layers/self_loops.h"
#include "oracle/layers/self_loops.h"

namespace gnncheck::gpu {

Graph aggregation_graph(const Graph& g, bool self_loops, const std::string& layer) {
  if (!self_loops) return g;
  oracle::layers::require_destinations_are_sources(g, layer);
  return append_self_loops(g);
}

const float* bias_or_null(const TargetRun& run, bool bias) { return bias ? run.input("bias").data() : nullptr; }

void join_heads(TargetRun& run, bool concat, bool bias, index_t heads, index_t channels, const DeviceTensor& out) {
  GpuContext& ctx = run.ctx;
  const index_t n_dst = out.shape()[0], width = concat ? heads * channels : channels;
  DeviceTensor& y = run.new_output("y", {n_dst, width});
  if (concat) GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(y.data(), out.data(), static_cast<std::size_t>(n_dst * width) * sizeof(float),
                                                  cudaMemcpyDeviceToDevice, ctx.stream));
  else mean_over_heads(ctx, n_dst, heads, channels, out.data(), y.data());
  if (bias) add_bias(ctx, n_dst, width, bias_or_null(run, true), y.data());
}

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

}  // namespace gnncheck::gpu
