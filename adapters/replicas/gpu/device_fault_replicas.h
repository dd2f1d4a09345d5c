// gnncheck/adapters/replicas/gpu/device_fault_replicas.h — GPU replicas whose fault changes no answer.
//
// The other GPU replicas (gpu_replicas.h) compute a wrong function. These three compute the right one
// and carry a defect that only gnncheck's own device measurements can see:
//   gpu-replica-leak  spmm as the reference computes it, but every evaluation also cudaMallocs a
//                     4 MiB staging buffer outside the accounting allocator and never frees it: the
//                     system's own live_bytes()/peak_bytes stay flat, the device memory grows. Caught
//                     by `resources` through gnncheck's device measurement (platform/device_memory.h).
//   gpu-replica-curand-leak  spmm after drawing a dropout mask from a cuRAND generator created per
//                     evaluation and never destroyed: the generator's device state (XORWOW) leaks inside
//                     cuRAND, a library handle no allocator of the system counts. Caught by `resources`
//                     the same way, although it leaks far less than a 2 MiB driver page per call.
//   gpu-replica-racy  spmm whose forward kernel sums each row's partial sums in shared memory with
//                     the warp-synchronous idiom and no __syncwarp: a read-after-write race between
//                     lanes of a warp that gives the right sums on an H200 (the warp stays converged)
//                     and passes every check; caught by `gnncheck run --sanitize racecheck`.
// Unavailable (with the reason) without CUDA or a device, like the other GPU replicas.
//
//   auto leak = gnncheck::make_gpu_device_fault_replica("gpu-replica-leak");
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/system.h"

namespace gnncheck {

struct GpuDeviceFaultInfo {
  std::string name;              // "gpu-replica-leak", "gpu-replica-curand-leak", "gpu-replica-racy"
  std::string bug;               // what the system does wrong
  std::string caught_by;         // "resources", or "--sanitize racecheck"
  std::vector<std::string> targets;
};

// Every device-fault replica, in every build (a build without CUDA knows their names and says why they cannot run).
std::vector<GpuDeviceFaultInfo> gpu_device_fault_catalogue();

// Bytes the leak replica cudaMallocs per evaluation and never frees.
inline constexpr std::int64_t kLeakReplicaBytesPerEvaluation = std::int64_t{4} << 20;

// The replica `name` (CUDA builds only); InputError naming the known ones for another name.
std::unique_ptr<System> make_gpu_device_fault_replica(const std::string& name);

}  // namespace gnncheck
