// gnncheck/adapters/replicas/gpu/gpu_scale_replicas.h — GPU bug replicas that only a big graph shows.
//
// Each is the GPU reference (gpu/) with one kernel swapped for one whose bug fires only where a
// small graph never goes: past 2^31 edges, on rows of more than 10^4 edges, on rows of Aᵀ with
// more than 10^5 entries. Where the bug does not fire each computes a correct result (its kernel
// is then a plain, correct one: the softmax subtracts the max, no chunk is lost, offsets fit), so
// checks on small graphs pass them, as they must: `gnncheck scale` on Kronecker scale 25–27
// catches them (scale/README.md, "Scale-only replicas"; the commands and what they printed:
// docs/scale-figures.md, "Measured on the H200").
// Unavailable (with the reason) where there is no CUDA device; the kernels are built only with CUDA.
//
//   for (const auto& r : gnncheck::gpu_scale_replica_catalogue()) fmt::print("{}: {}\n", r.name, r.bug);
//   auto wrong = gnncheck::make_gpu_scale_replica("gpu_scale_int32_edge_offsets");
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "adapters/replicas/gpu/scale_replica_thresholds.h"
#include "core/system.h"

namespace gnncheck {

struct GpuScaleReplicaInfo {
  std::string name;
  std::string bug;        // what the swapped kernel computes wrongly, and where
  std::string target;     // the one target it evaluates
  std::string fires_on;   // the graphs where the bug changes a result
  std::string catch_command;  // a `gnncheck scale` command that catches it
};

std::vector<GpuScaleReplicaInfo> gpu_scale_replica_catalogue();

// InputError "unknown GPU scale replica 'x'; known: …" for another name.
std::unique_ptr<System> make_gpu_scale_replica(const std::string& name);

}  // namespace gnncheck
