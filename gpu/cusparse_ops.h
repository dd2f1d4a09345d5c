// gnncheck/gpu/cusparse_ops.h — the two cuSPARSE generic-API calls the reference makes, with RAII
// descriptors and workspaces from the accounting allocator.
//
//   csr_spmm:   C = op(A)·B          A: CSR (rows × cols, 32-bit offsets and indices, float32 values);
//               B, C row-major with explicit leading dimensions (so one head of an [N, H·C]
//               tensor is a column block with ld = H·C). op = transpose uses cuSPARSE's native
//               transposed kernel (no Aᵀ is built).
//   csr_sddmm:  values_k = ⟨U[row_k], V[col_k]⟩ over A's pattern (cusparseSDDMM, C = U·Vᵀ ∘ spy(A)).
// Zero-sized problems return without calling cuSPARSE (C is zero-filled), since cuSPARSE rejects
// some of them.
//
//   csr_spmm(ctx, {n_dst, n_src, nnz, row_ptr, col_idx, ones}, SparseOp::transpose,
//            grad_y, f, /*ldb=*/f, grad_x, /*ldc=*/f);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

struct CsrView {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  const std::int32_t* row_ptr = nullptr;  // [rows + 1] (DeviceGraph::cusparse_row_ptr: 32-bit, as col_idx)
  const node_t* col_idx = nullptr;        // [nnz]
  const float* values = nullptr;      // [nnz]
};

enum class SparseOp { none, transpose };

// C [op(A).rows × n] = op(A) · B [op(A).cols × n]; B row-major with leading dimension ldb, C with
// ldc (both >= n). C is overwritten.
void csr_spmm(GpuContext& ctx, const CsrView& a, SparseOp op, const float* b, std::int64_t n, std::int64_t ldb,
              float* c, std::int64_t ldc);

// out_values[k] = ⟨U[row_k, :k_dim], V[col_k, :k_dim]⟩ for every nonzero k of `pattern` (its values
// pointer is ignored); U [rows × k_dim] with leading dimension ldu, V [cols × k_dim] with ldv,
// both row-major. out_values [nnz] is overwritten.
void csr_sddmm(GpuContext& ctx, const CsrView& pattern, const float* u, std::int64_t ldu, const float* v,
               std::int64_t ldv, std::int64_t k_dim, float* out_values);

}  // namespace gnncheck::gpu
