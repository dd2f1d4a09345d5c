// gnncheck/gpu/target_run.h — one evaluation of a target on the device, as the GPU systems see it.
//
// gpu_systems.cpp validates the case against the target catalogue, uploads every input and output
// gradient (rounded to float32), hands a TargetRun to the target's GPU implementation, and
// downloads what it put into `outputs` and `gradients`. Implementations read inputs by the
// catalogue's names (oracle/op_targets.cpp, oracle/<layer>_target.cpp).
//
//   void spmm_target(TargetRun& run) {
//     const DeviceTensor& x = run.input("x");
//     DeviceTensor& y = run.new_output("y", {run.host_graph.n_dst(), x.row_size()});
//     spmm_forward(run.ctx, run.graph(), x.data(), x.row_size(), y.data());
//     if (run.backward()) { ... run.new_gradient("x", x.shape()) ... }
//   }
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "gpu/context.h"
#include "gpu/device_graph.h"
#include "gpu/device_tensor.h"
#include "core/case.h"

namespace gnncheck::gpu {

struct TargetRun {
  GpuContext& ctx;
  const Graph& host_graph;
  const Attributes& attributes;  // with the catalogue's defaults filled in
  std::map<std::string, DeviceTensor> inputs;        // inputs and parameters, by name
  std::map<std::string, const Tensor*> host_inputs;  // the same, as the case holds them (float64)
  std::map<std::string, DeviceTensor> grad_outputs;  // empty = forward only
  std::map<std::string, DeviceTensor> outputs;
  std::map<std::string, DeviceTensor> gradients;

  TargetRun(GpuContext& context, const Graph& graph, const Attributes& attrs)
      : ctx(context), host_graph(graph), attributes(attrs) {}
  // A run on a graph that exists only on the device (scale/device_scale_check.h). `host_graph`
  // is then an empty 0 × 0 stand-in that a target must not read: only the targets listed by
  // device_resident_targets() (gpu_targets.h) are run this way, and they read the graph through
  // graph(), aggregation_graph() and require_destinations_are_sources() only.
  TargetRun(GpuContext& context, DeviceGraph& device_graph, const Attributes& attrs);

  bool backward() const { return !grad_outputs.empty(); }
  bool device_only() const { return device_graph_ != nullptr; }
  // The case's graph on the device, uploaded on first use.
  DeviceGraph& graph();
  // The graph a layer aggregates over: graph() itself, or A + I in the block convention (built
  // from the host graph and uploaded, or for a device-only graph built on the device). Held by the
  // run. Throws InputError naming `layer` when self-loops need n_dst ≤ n_src and the graph is not.
  DeviceGraph& aggregation_graph(bool self_loops, const std::string& layer);
  // InputError naming `layer` unless n_dst ≤ n_src (oracle/layers/self_loops.h).
  void require_destinations_are_sources(const std::string& layer) const;
  // Throws InternalError naming the tensor if it is missing (the case was validated before).
  const DeviceTensor& input(const std::string& name) const;
  bool has_input(const std::string& name) const { return inputs.count(name) != 0; }
  const DeviceTensor& grad_output(const std::string& name) const;
  // A zero-filled output / gradient of `shape`, owned by the run.
  DeviceTensor& new_output(const std::string& name, std::vector<index_t> shape);
  DeviceTensor& new_gradient(const std::string& name, std::vector<index_t> shape);

 private:
  std::unique_ptr<DeviceGraph> graph_;
  DeviceGraph* device_graph_ = nullptr;  // a device-only run's graph (not owned)
  std::unique_ptr<Graph> host_with_self_loops_;
  std::unique_ptr<DeviceGraph> with_self_loops_;
};

using GpuTargetFn = std::function<void(TargetRun&)>;

// Thrown by a target implementation for a case it cannot evaluate although it is valid; the
// system answers Status::unsupported with the message.
class UnsupportedCase : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gnncheck::gpu
