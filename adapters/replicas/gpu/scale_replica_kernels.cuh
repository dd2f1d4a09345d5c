// gnncheck/adapters/replicas/gpu/scale_replica_kernels.cuh — the kernels of the scale-only GPU
// replicas (gpu_scale_replicas.h). Device pointers into float32 row-major tensors, as
// replica_kernels.cuh.
//
//   spmm_int32_offsets_forward(ctx, g, d_x, f, d_y);        // rows past edge 2^31 come out 0
//   edge_softmax_no_max_on_long_rows(ctx, g, d_s, heads, d_alpha);
//   spmm_backward_racy_on_long_columns(ctx, g, d_gy, f, d_gx);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu_replicas {

// y = A·x over the CSR with the offsets narrowed to int32; a row whose narrowed begin or end is
// negative is skipped (y row 0). Identical to the reference for E < 2^31.
void spmm_int32_offsets_forward(gpu::GpuContext& ctx, gpu::DeviceGraph& g, const float* x, std::int64_t width, float* y);

// Edge softmax: rows of at most softmax_long_row_degree edges with max subtraction (as the
// reference), longer rows without it.
void edge_softmax_no_max_on_long_rows(gpu::GpuContext& ctx, gpu::DeviceGraph& g, const float* logits, std::int64_t heads,
                                      float* alpha);

// grad_x = Aᵀ·grad_y over the CSC; a row of Aᵀ with more than race_column_length entries loses
// the partial sum of one chunk of race_chunk_entries positions (chosen by a hash of the row).
void spmm_backward_racy_on_long_columns(gpu::GpuContext& ctx, gpu::DeviceGraph& g, const float* grad_y, std::int64_t width,
                                        float* grad_x);

}  // namespace gnncheck::gpu_replicas
