// gnncheck/gpu/spmm.cuh — sum-of-neighbors SpMM and its transpose on the GPU, forward and
// backward (definitions: oracle/spmm.h).
//
//   spmm:             Y [n_dst, F] = A·X,   grad_X = Aᵀ·grad_Y
//   spmm_transposed:  Z [n_src, F] = Aᵀ·Y,  grad_Y = A·grad_Z
// A·X is computed by the method given (ForwardMethod): the CSR row kernel of gpu/aggregate.cuh
// (what the `gpu` system uses: faster than cusparseSpMM in every configuration measured on the
// H200 — 1M and 67M edges, F = 16 and 64, docs/gpu-results.md — deterministic, and it needs neither
// unit values nor 32-bit offsets), or cusparseSpMM on the CSR with unit values (the default of
// these functions, kept for their other callers, and what the `cusparse` system checks). Aᵀ·Y is computed
// by the method given (TransposeMethod): the fused CSC kernel of gpu/aggregate.cuh (the default:
// fastest of the three on the H200 at 1M and 67M edges, F = 16 and 64, and deterministic — see
// docs/gpu-results.md), cuSPARSE's native transposed SpMM on the same CSR (no Aᵀ stored, as in
// GraphPy; it accumulates with atomics, so it is not bit-reproducible run to run), or cuSPARSE on
// a materialized CSC used as the CSR of Aᵀ. All pointers are device pointers; F is the row size
// of the dense operand.
//
//   spmm_forward(ctx, dg, d_x, f, d_y);
//   spmm_backward(ctx, dg, d_grad_y, f, d_grad_x);   // Aᵀ·grad_Y, fused CSC kernel
#pragma once

#include <cstdint>
#include <string_view>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

enum class ForwardMethod {
  row_kernel,  // gpu/aggregate.cuh over the CSR, one warp per row
  cusparse,    // cusparseSpMM(opA = NON_TRANSPOSE); the row kernel where cuSPARSE refuses the CSR
};

enum class TransposeMethod {
  native_cusparse,   // cusparseSpMM(opA = TRANSPOSE) on A's CSR
  materialized_csc,  // cusparseSpMM(opA = NON_TRANSPOSE) on the CSC of A (= CSR of Aᵀ)
  fused_csc_kernel,  // gpu/aggregate.cuh over the CSC, weights read through edge_perm
};
std::string_view to_string(TransposeMethod m);

void spmm_forward(GpuContext& ctx, DeviceGraph& g, const float* x, std::int64_t f, float* y,
                  ForwardMethod method = ForwardMethod::cusparse);
void spmm_backward(GpuContext& ctx, DeviceGraph& g, const float* grad_y, std::int64_t f, float* grad_x,
                   TransposeMethod method = TransposeMethod::fused_csc_kernel);

void spmm_transposed_forward(GpuContext& ctx, DeviceGraph& g, const float* y, std::int64_t f, float* z,
                             TransposeMethod method = TransposeMethod::fused_csc_kernel);
void spmm_transposed_backward(GpuContext& ctx, DeviceGraph& g, const float* grad_z, std::int64_t f, float* grad_y,
                              ForwardMethod method = ForwardMethod::cusparse);

}  // namespace gnncheck::gpu
