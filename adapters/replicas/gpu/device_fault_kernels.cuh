// gnncheck/adapters/replicas/gpu/device_fault_kernels.cuh — the racy kernel of gpu-replica-racy.
//
//   racy_spmm_forward(ctx, g, d_x, f, d_y);   // y = A·x, with an unsynchronised shared-memory reduction
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu_replicas {

// y[i, c] = Σ_{e ∈ row i} x[col_e, c], one warp per row: each lane sums every 32nd edge of the row,
// then the 32 partial sums are added in shared memory by halving (s[l] += s[l + h], h = 16 … 1)
// with no __syncwarp between the steps. Volta and later do not promise that a warp's lanes run in
// step, so a lane may read s[l + h] before its owner wrote it: a race, which compute-sanitizer's
// racecheck reports and which the converged warps of an H200 do not show in the sums.
void racy_spmm_forward(gpu::GpuContext& ctx, gpu::DeviceGraph& g, const float* x, std::int64_t f, float* y);

}  // namespace gnncheck::gpu_replicas
