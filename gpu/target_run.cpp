#include "gpu/target_run.h"

#include <fmt/format.h>

#include "core/error.h"

namespace gnncheck::gpu {

DeviceGraph& TargetRun::graph() {
  if (!graph_) graph_ = std::make_unique<DeviceGraph>(ctx, host_graph);
  return *graph_;
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
