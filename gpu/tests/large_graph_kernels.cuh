// gnncheck/gpu/tests/large_graph_kernels.cuh — the device-side pattern of the 64-bit edge test
// (gpu_large_graph_test.cpp): a graph too large to build on the host in reasonable time is
// filled on the device from a formula, so the test can compute its expectations cheaply.
//
//   fill_pattern_columns(ctx, n_dst, n_src, d_row_ptr, d_col_idx);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu::testing {

// The column of the t-th edge of row i in the test pattern.
__host__ __device__ inline node_t pattern_column(std::int64_t i, std::int64_t t, std::int64_t n_src) {
  return static_cast<node_t>((i * 7919 + t * 131) % n_src);
}

// col_idx[p] = pattern_column(i, p - row_ptr[i], n_src) for every row i.
void fill_pattern_columns(GpuContext& ctx, std::int64_t n_dst, std::int64_t n_src, const offset_t* row_ptr,
                          node_t* col_idx);

}  // namespace gnncheck::gpu::testing
