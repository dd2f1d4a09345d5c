// The scale-only GPU replicas: the reference's targets with one kernel replaced (scale_replica_kernels.cuh).
#include "adapters/replicas/gpu/gpu_scale_replicas.h"

#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "adapters/replicas/gpu/scale_replica_kernels.cuh"
#include "gpu/edge_softmax.cuh"
#include "gpu/gpu_targets.h"
#include "gpu/spmm.cuh"
#include "core/error.h"

namespace gnncheck {
namespace {

using gpu::DeviceGraph;
using gpu::DeviceTensor;
using gpu::GpuTargetFn;
using gpu::TargetRun;

void spmm_int32_offsets(TargetRun& run) {
  const DeviceTensor& x = run.input("x");
  const index_t f = x.row_size();
  DeviceGraph& g = run.graph();
  DeviceTensor& y = run.new_output("y", {g.n_dst(), f});
  gpu_replicas::spmm_int32_offsets_forward(run.ctx, g, x.data(), f, y.data());
  if (!run.backward()) return;
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  gpu::spmm_backward(run.ctx, g, run.grad_output("y").data(), f, gx.data(), gpu::TransposeMethod::fused_csc_kernel);
}

void edge_softmax_no_max_on_hubs(TargetRun& run) {
  const DeviceTensor& logits = run.input("logits");
  const index_t heads = run.attributes.get_int("heads");
  DeviceGraph& g = run.graph();
  DeviceTensor& alpha = run.new_output("alpha", logits.shape());
  gpu_replicas::edge_softmax_no_max_on_long_rows(run.ctx, g, logits.data(), heads, alpha.data());
  if (!run.backward()) return;
  DeviceTensor& gl = run.new_gradient("logits", logits.shape());
  gpu::edge_softmax_backward(run.ctx, g, alpha.data(), run.grad_output("alpha").data(), heads, gl.data());
}

void spmm_race_on_hubs(TargetRun& run) {
  const DeviceTensor& x = run.input("x");
  const index_t f = x.row_size();
  DeviceGraph& g = run.graph();
  DeviceTensor& y = run.new_output("y", {g.n_dst(), f});
  gpu::spmm_forward(run.ctx, g, x.data(), f, y.data(), gpu::ForwardMethod::row_kernel);
  if (!run.backward()) return;
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  gpu_replicas::spmm_backward_racy_on_long_columns(run.ctx, g, run.grad_output("y").data(), f, gx.data());
}

std::map<std::string, GpuTargetFn> kernels_of(const std::string& name) {
  if (name == "gpu_scale_int32_edge_offsets") return {{"spmm", spmm_int32_offsets}};
  if (name == "gpu_scale_softmax_no_max_on_hubs") return {{"edge_softmax", edge_softmax_no_max_on_hubs}};
  if (name == "gpu_scale_race_on_hubs") return {{"spmm", spmm_race_on_hubs}};
  return {};
}

}  // namespace

std::unique_ptr<System> make_gpu_scale_replica(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& info : gpu_scale_replica_catalogue()) {
    if (info.name == name) {
      auto kernels = kernels_of(name);
      if (kernels.size() != 1 || !kernels.count(info.target))
        throw InternalError(fmt::format("GPU scale replica '{}' has no kernel for its target {}", name, info.target));
      return gpu::make_gpu_system_from_targets(name, std::move(kernels));
    }
    names.push_back(info.name);
  }
  throw InputError(fmt::format("unknown GPU scale replica '{}'; known: {}", name, fmt::join(names, ", ")));
}

}  // namespace gnncheck
