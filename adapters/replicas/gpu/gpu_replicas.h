// gnncheck/adapters/replicas/gpu/gpu_replicas.h — bug replicas whose bug lives in a CUDA kernel.
//
// The CPU replicas (adapters/replicas/replicas.h) rewrite a correct answer on the host; these
// systems instead run the GPU reference (gpu/) with one kernel swapped for a kernel that has the
// published bug (replica_kernels.cuh), so the bug is computed on the device in float32 exactly
// where the original system computed it. Each is named `gpu-replica-<n>` after the catalogue
// number of the CPU replica it reproduces, supports only the targets it injects its bug into, and
// is unavailable (with the reason) where there is no CUDA device. Built only with CUDA.
//
//   for (const auto& r : gnncheck::gpu_replica_catalogue()) fmt::print("{} caught by {}\n", r.name, r.expected_check);
//   auto wrong = gnncheck::make_gpu_replica("gpu-replica-8");   // edge_softmax without max subtraction
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/system.h"

namespace gnncheck {

struct GpuReplicaInfo {
  std::string name;             // "gpu-replica-<n>"
  int number = 0;               // the CPU replica it reproduces (replicas.h), 1..12
  std::string bug;              // what the swapped kernel computes wrongly
  std::string expected_check;   // check kind expected to catch it (checks/verdict.h names)
  std::vector<std::string> targets;  // the targets it evaluates (each with the bug)
};

// The GPU replicas in catalogue order: 1, 5, 8, 10, 11.
std::vector<GpuReplicaInfo> gpu_replica_catalogue();

// The replica `name`; InputError "unknown GPU replica 'x'; known: …" for another name.
std::unique_ptr<System> make_gpu_replica(const std::string& name);

}  // namespace gnncheck
