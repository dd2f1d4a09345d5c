// gnncheck/suites/scale_where_system_runs.h — the scale check of one system, its graph built where
// the system runs.
//
// A GPU system (`gpu`, the GPU replicas: gpu/gpu_targets.h) on a `kronecker:` graph and a target of
// gpu::device_resident_targets() gets its graph generated and held on the device
// (scale/device_scale_check.h); every other combination builds the graph on the host
// (scale::build_graph) and runs scale::run_scale_check. `gnncheck scale` and the suite family
// `family: scale` both call this, so a suite's result and the `gnncheck scale` line it prints take
// the same path. Without CUDA every graph is built on the host.
//
//   if (graph_lives_on_device(*system, spec, *options.target)) print("generated on the device");
//   ScaleRun run = run_scale_where_system_runs(*system, spec, options);   // options.seed seeds the graph too
#pragma once

#include <string>

#include "core/system.h"
#include "scale/graph_spec.h"
#include "scale/scale_check.h"

namespace gnncheck::suites {

struct ScaleRun {
  scale::ScaleResult result;
  bool graph_on_device = false;
  std::string host_graph_summary;  // Graph::summary() of a host graph; empty when it lived on the device
  double graph_seconds = 0.0;      // building the graph (on the device: generating it)
};

// Whether run_scale_where_system_runs generates this graph on the device for this system and target.
bool graph_lives_on_device(const System& system, const scale::GraphSpec& spec, const oracle::TargetDef& target);

ScaleRun run_scale_where_system_runs(System& system, const scale::GraphSpec& spec, const scale::ScaleOptions& options);

}  // namespace gnncheck::suites
