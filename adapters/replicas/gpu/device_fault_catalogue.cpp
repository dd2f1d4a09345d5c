// The device-fault replicas' catalogue (device_fault_replicas.h), compiled into every build; their
// kernels are in device_fault_replicas.cpp and device_fault_kernels.cu (CUDA builds only).
#include "adapters/replicas/gpu/device_fault_replicas.h"

namespace gnncheck {

std::vector<GpuDeviceFaultInfo> gpu_device_fault_catalogue() {
  return {
      {"gpu-replica-leak",
       "spmm as the reference computes it, plus a 4 MiB cudaMalloc per evaluation outside the accounting allocator, "
       "never freed (the system's own live_bytes/peak_bytes do not see it)",
       "resources", {"spmm"}},
      {"gpu-replica-curand-leak",
       "spmm as the reference computes it, after drawing an edge dropout mask from a cuRAND XORWOW generator created "
       "per evaluation and never destroyed (the generator's device state leaks inside cuRAND, outside every allocator "
       "of the system)",
       "resources", {"spmm"}},
      {"gpu-replica-racy",
       "spmm whose forward kernel reduces partial sums in shared memory warp-synchronously without __syncwarp (a "
       "read-after-write race between lanes that gives the right sums on an H200)",
       "--sanitize racecheck", {"spmm"}},
  };
}

}  // namespace gnncheck
