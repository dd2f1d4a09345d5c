// The GPU layers by name, as the `gpu` system lists them (gpu/layers/layers.h).
#include "gpu/gpu_targets.h"
#include "gpu/layers/layers.h"

namespace gnncheck::gpu {

std::map<std::string, GpuTargetFn> gpu_layer_targets() {
  return {{"gcn", gcn_layer},
          {"gin", [](TargetRun& run) { gin_family_layer(run, false); }},
          {"gine", [](TargetRun& run) { gin_family_layer(run, true); }},
          {"gat", gat_layer},
          {"gatv2", gatv2_layer},
          {"sage", sage_layer},
          {"agnn", agnn_layer},
          {"rgcn", rgcn_layer},
          {"rgat", rgat_layer}};
}

}  // namespace gnncheck::gpu
