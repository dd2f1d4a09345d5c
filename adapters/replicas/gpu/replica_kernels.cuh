// gnncheck/adapters/replicas/gpu/replica_kernels.cuh — CUDA kernels with a published bug put back.
//
// Each launcher computes one product the way a published GNN system's kernel did it wrongly; the
// GPU replicas (gpu_replicas.h) call them where the reference (gpu/) calls its correct kernel.
// All pointers are device pointers into float32 row-major tensors; node tensors are [n, H·C],
// edge tensors [E, H] in edge-id (CSR) order.
//
//   gather_rows_unweighted(ctx, g, d_grad_y, f, d_grad_x);      // A·ḡ where the backward needs Aᵀ·ḡ
//   edge_softmax_without_max(ctx, g, d_logits, heads, d_alpha);  // exp(s)/Σexp(s): Inf/NaN above ~88.7
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu_replicas {

using gpu::DeviceGraph;
using gpu::GpuContext;

// Replica 1 (TC-GNN): the backward of y = A·x reuses the forward's CSR walk, so
// out[i, :] = Σ_{e ∈ row i} in[col_e, :] — A·in instead of Aᵀ·in. `g` must be square.
void gather_rows_unweighted(GpuContext& ctx, DeviceGraph& g, const float* in, std::int64_t width, float* out);

// Replica 5 (the pitfalls paper's GAT experiment): the aggregation backward walks the CSR with the
// CSR-ordered attention, out[i, h, :] = Σ_{e ∈ row i} w[e, h] · in[col_e, h, :] — A_α·ḡ instead
// of A_αᵀ·ḡ. `g` must be square.
void gather_rows_weighted(GpuContext& ctx, DeviceGraph& g, const float* w, std::int64_t heads, const float* in,
                          std::int64_t channels, float* out);

// Replica 11 (missing eShuffle): the transposed product walks the CSC but reads the edge values at
// the CSC position, out[j, h, :] = Σ_{p ∈ col j} w[p, h] · in[row_idx_p, h, :], where the right
// value is w[edge_perm[p], h].
void gather_columns_unshuffled(GpuContext& ctx, DeviceGraph& g, const float* w, std::int64_t heads, const float* in,
                               std::int64_t channels, float* out);

// The correct twin of the two kernels above, for measuring what the transpose costs with the same
// kernel structure (benchmarks/untransposed_speed.cpp): the CSC walk reading w[edge_perm[p], h],
// out = A_αᵀ·in.
void gather_columns_shuffled(GpuContext& ctx, DeviceGraph& g, const float* w, std::int64_t heads, const float* in,
                             std::int64_t channels, float* out);

// Replica 8 (FuseGNN): softmax over each destination's in-edges without subtracting the row
// maximum: alpha = exp(s) / Σ exp(s) in float32, which overflows to Inf (and Inf/Inf = NaN) once a
// logit exceeds ~88.7.
void edge_softmax_without_max(GpuContext& ctx, DeviceGraph& g, const float* logits, std::int64_t heads, float* alpha);

// Replica 10 (Huang et al.): sum-of-neighbors aggregation whose warps cover the feature columns
// 32 at a time and stop at the last whole block of 32, so the last (width mod 32) columns of each
// output row are never written (they keep the zeros `out` was created with).
//   forward:  over the CSR (out = A·in);  backward: over the CSC (out = Aᵀ·in).
void aggregate_whole_warps_forward(GpuContext& ctx, DeviceGraph& g, const float* in, std::int64_t width, float* out);
void aggregate_whole_warps_backward(GpuContext& ctx, DeviceGraph& g, const float* in, std::int64_t width, float* out);

}  // namespace gnncheck::gpu_replicas
