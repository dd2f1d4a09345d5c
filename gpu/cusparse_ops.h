// gnncheck/gpu/cusparse_ops.h — the two cuSPARSE generic-API calls the reference makes, with RAII
// descriptors and workspaces from the accounting allocator, in any StorageFormat
// (gpu/storage_format.cuh): A's values and the dense operands are all in `a.format`, sums are
// float32 (computeType CUDA_R_32F; cuSPARSE's mixed-precision rows for CUDA_R_16F and
// CUDA_R_16BF). cuSPARSE has no bfloat16 SDDMM: csr_sddmm with it throws UnsupportedCase.
//
//   csr_spmm:   C = op(A)·B          A: CSR (rows × cols, 32-bit offsets and indices);
//               B, C row-major with explicit leading dimensions (so one head of an [N, H·C]
//               tensor is a column block with ld = H·C). op = transpose uses cuSPARSE's native
//               transposed kernel (no Aᵀ is built).
//   csr_sddmm:  values_k = ⟨U[row_k], V[col_k]⟩ over A's pattern (cusparseSDDMM, C = U·Vᵀ ∘ spy(A)).
//   csr_spmm_per_head, csr_sddmm_per_head: the same, one call per head of [N, H·C] operands and
//               [E, H] edge values (head h's values copied to or from a contiguous [E] buffer).
// Leading dimensions and offsets count elements of the format, not bytes. Zero-sized problems
// return without calling cuSPARSE (C is zero-filled), since cuSPARSE rejects some of them.
//
//   csr_spmm(ctx, {n_dst, n_src, nnz, row_ptr, col_idx, ones}, SparseOp::transpose,
//            grad_y, f, /*ldb=*/f, grad_x, /*ldc=*/f);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"
#include "gpu/storage_format.cuh"

namespace gnncheck::gpu {

struct CsrView {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  const std::int32_t* row_ptr = nullptr;  // [rows + 1] (DeviceGraph::cusparse_row_ptr: 32-bit, as col_idx)
  const node_t* col_idx = nullptr;        // [nnz]
  const void* values = nullptr;           // [nnz] in `format`
  StorageFormat format = StorageFormat::float32;  // of the values and of every dense operand
};

enum class SparseOp { none, transpose };

// C [op(A).rows × n] = op(A) · B [op(A).cols × n]; B row-major with leading dimension ldb, C with
// ldc (both >= n). C is overwritten.
void csr_spmm(GpuContext& ctx, const CsrView& a, SparseOp op, const void* b, std::int64_t n, std::int64_t ldb,
              void* c, std::int64_t ldc);

// out_values[k] = ⟨U[row_k, :k_dim], V[col_k, :k_dim]⟩ for every nonzero k of `pattern` (its values
// pointer is ignored); U [rows × k_dim] with leading dimension ldu, V [cols × k_dim] with ldv,
// both row-major. out_values [nnz] is overwritten.
void csr_sddmm(GpuContext& ctx, const CsrView& pattern, const void* u, std::int64_t ldu, const void* v,
               std::int64_t ldv, std::int64_t k_dim, void* out_values);

// C [op(A).rows, H·C] = op(A_h) · B_h per head h, A_h with the values w[:, h] (w [nnz, H]; a.values
// is ignored), B [op(A).cols, H·C] and C with their column blocks of width `channels`.
void csr_spmm_per_head(GpuContext& ctx, CsrView a, SparseOp op, const void* w, std::int64_t heads, const void* b,
                       std::int64_t channels, void* c);
// e [nnz, H]: e[k, h] = ⟨U[row_k, h, :], V[col_k, h, :]⟩, U [rows, H·C], V [cols, H·C].
void csr_sddmm_per_head(GpuContext& ctx, const CsrView& pattern, const void* u, const void* v, std::int64_t heads,
                        std::int64_t channels, void* e);

}  // namespace gnncheck::gpu
