// gnncheck/gpu/tests/storage_sums_kernels.cuh — a planted fault for the half-precision cuSPARSE
// systems' tests: A·X with every partial sum rounded to the storage format, as a kernel that
// declares float32 accumulation but accumulates in float16 or bfloat16 would compute it.
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"
#include "gpu/storage_format.cuh"

namespace gnncheck::gpu::testing {

// y [n_dst, f] = A·x over g's CSR in edge-id order, x rounded to `format`, the running sum
// rounded to `format` after each addition.
void spmm_summing_in_storage(GpuContext& ctx, DeviceGraph& g, StorageFormat format, const float* x, std::int64_t f,
                             float* y);

}  // namespace gnncheck::gpu::testing
