#include "gpu/target_run.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/graph.h"
#include "gpu/layers/self_loops.h"
#include "oracle/layers/self_loops.h"

namespace gnncheck::gpu {
namespace {

const Graph& no_host_graph() {
  static const Graph empty;
  return empty;
}

}  // namespace

TargetRun::TargetRun(GpuContext& context, DeviceGraph& device_graph, const Attributes& attrs)
    : ctx(context), host_graph(no_host_graph()), attributes(attrs), device_graph_(&device_graph) {}

DeviceGraph& TargetRun::graph() {
  if (device_graph_) return *device_graph_;
  if (!graph_) graph_ = std::make_unique<DeviceGraph>(ctx, host_graph);
  return *graph_;
}

void TargetRun::require_destinations_are_sources(const std::string& layer) const {
  if (!device_graph_) return oracle::layers::require_destinations_are_sources(host_graph, layer);
  if (device_graph_->n_dst() > device_graph_->n_src())
    throw InputError(fmt::format("layer '{}' reads destination i's features as source i, which needs n_dst ≤ n_src; got {} × {}",
                                 layer, device_graph_->n_dst(), device_graph_->n_src()));
}

DeviceGraph& TargetRun::aggregation_graph(bool self_loops, const std::string& layer) {
  if (!self_loops) return graph();
  require_destinations_are_sources(layer);
  if (!with_self_loops_) {
    if (device_graph_) with_self_loops_ = std::make_unique<DeviceGraph>(device_graph_->with_destination_self_loops(ctx));
    else {
      // Kept: a DeviceGraph uploads its other views from its host graph on first use.
      host_with_self_loops_ = std::make_unique<Graph>(append_self_loops(host_graph));
      with_self_loops_ = std::make_unique<DeviceGraph>(ctx, *host_with_self_loops_);
    }
  }
  return *with_self_loops_;
}

const DeviceTensor& TargetRun::input(const std::string& name) const {
  auto it = inputs.find(name);
  if (it == inputs.end()) throw InternalError(fmt::format("GPU target: input '{}' was not uploaded", name));
  return it->second;
}

const DeviceTensor& TargetRun::grad_output(const std::string& name) const {
  auto it = grad_outputs.find(name);
  if (it == grad_outputs.end())
    throw InternalError(fmt::format("GPU target: gradient of output '{}' was not uploaded", name));
  return it->second;
}

DeviceTensor& TargetRun::new_output(const std::string& name, std::vector<index_t> shape) {
  return outputs.insert_or_assign(name, DeviceTensor(ctx, std::move(shape))).first->second;
}

DeviceTensor& TargetRun::new_gradient(const std::string& name, std::vector<index_t> shape) {
  return gradients.insert_or_assign(name, DeviceTensor(ctx, std::move(shape))).first->second;
}

}  // namespace gnncheck::gpu
