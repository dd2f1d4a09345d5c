#include "suites/scale_where_system_runs.h"

#include <chrono>
#include <memory>

#ifdef GNNCHECK_SUITES_HAVE_CUDA
#include "gpu/gpu_targets.h"
#include "scale/device_scale_check.h"
#endif

namespace gnncheck::suites {

bool graph_lives_on_device([[maybe_unused]] const System& system, [[maybe_unused]] const scale::GraphSpec& spec,
                           [[maybe_unused]] const oracle::TargetDef& target) {
#ifdef GNNCHECK_SUITES_HAVE_CUDA
  return gpu::device_targets_of(system) && spec.kind == scale::GraphSpec::Kind::kronecker && target.spec.gpu.device_resident;
#else
  return false;
#endif
}

ScaleRun run_scale_where_system_runs(System& system, const scale::GraphSpec& spec, const scale::ScaleOptions& options) {
  ScaleRun run;
#ifdef GNNCHECK_SUITES_HAVE_CUDA
  if (options.target && graph_lives_on_device(system, spec, *options.target)) {
    run.result = scale::run_device_scale_check(system.name(), *gpu::device_targets_of(system), spec.rmat.scale, options);
    run.graph_on_device = true;
    run.graph_seconds = run.result.seconds.graph;
    return run;
  }
#endif
  const auto t0 = std::chrono::steady_clock::now();
  const auto graph = std::make_shared<const Graph>(scale::build_graph(spec, options.seed));
  run.graph_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.host_graph_summary = graph->summary();
  run.result = scale::run_scale_check(system, graph, options);
  return run;
}

}  // namespace gnncheck::suites
