#include "gpu/cusparse_ops.h"

#include "gpu/cuda_check.h"

namespace gnncheck::gpu {
namespace {

// RAII owners of cuSPARSE descriptors, so an exception between create and destroy leaks nothing.
struct SpMat {
  cusparseSpMatDescr_t descr = nullptr;
  ~SpMat() {
    if (descr) cusparseDestroySpMat(descr);
  }
};
struct DnMat {
  cusparseDnMatDescr_t descr = nullptr;
  ~DnMat() {
    if (descr) cusparseDestroyDnMat(descr);
  }
};

void create_csr(SpMat& m, const CsrView& a, float* values) {
  GNNCHECK_CUSPARSE_CHECK(cusparseCreateCsr(&m.descr, a.rows, a.cols, a.nnz, const_cast<std::int32_t*>(a.row_ptr),
                                            const_cast<node_t*>(a.col_idx), values, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
}

void create_dense(DnMat& m, std::int64_t rows, std::int64_t cols, std::int64_t ld, const float* values) {
  GNNCHECK_CUSPARSE_CHECK(cusparseCreateDnMat(&m.descr, rows, cols, ld, const_cast<float*>(values), CUDA_R_32F,
                                              CUSPARSE_ORDER_ROW));
}

// Zero-fills a row-major rows × n block with leading dimension ld.
void zero_block(GpuContext& ctx, float* c, std::int64_t rows, std::int64_t n, std::int64_t ld) {
  if (rows == 0 || n == 0) return;
  GNNCHECK_CUDA_CHECK(cudaMemset2DAsync(c, static_cast<std::size_t>(ld) * sizeof(float), 0,
                                        static_cast<std::size_t>(n) * sizeof(float), static_cast<std::size_t>(rows),
                                        ctx.stream));
}

}  // namespace

void csr_spmm(GpuContext& ctx, const CsrView& a, SparseOp op, const float* b, std::int64_t n, std::int64_t ldb,
              float* c, std::int64_t ldc) {
  const bool transpose = op == SparseOp::transpose;
  const std::int64_t c_rows = transpose ? a.cols : a.rows;
  const std::int64_t b_rows = transpose ? a.rows : a.cols;
  if (c_rows == 0 || n == 0) return;
  if (a.nnz == 0 || b_rows == 0) {
    zero_block(ctx, c, c_rows, n, ldc);
    return;
  }
  SpMat mat_a;
  DnMat mat_b, mat_c;
  create_csr(mat_a, a, const_cast<float*>(a.values));
  create_dense(mat_b, b_rows, n, ldb, b);
  create_dense(mat_c, c_rows, n, ldc, c);
  const float alpha = 1.0f, beta = 0.0f;
  const cusparseOperation_t op_a = transpose ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
  std::size_t workspace_bytes = 0;
  GNNCHECK_CUSPARSE_CHECK(cusparseSpMM_bufferSize(ctx.cusparse, op_a, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                                  mat_a.descr, mat_b.descr, &beta, mat_c.descr, CUDA_R_32F,
                                                  CUSPARSE_SPMM_ALG_DEFAULT, &workspace_bytes));
  DeviceBuffer<unsigned char> workspace(ctx.allocator, static_cast<std::int64_t>(workspace_bytes));
  GNNCHECK_CUSPARSE_CHECK(cusparseSpMM(ctx.cusparse, op_a, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat_a.descr,
                                       mat_b.descr, &beta, mat_c.descr, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                                       workspace.data()));
  // The workspace is freed when this function returns; the kernel must be done with it first.
  ctx.synchronize();
}

void csr_sddmm(GpuContext& ctx, const CsrView& pattern, const float* u, std::int64_t ldu, const float* v,
               std::int64_t ldv, std::int64_t k_dim, float* out_values) {
  if (pattern.nnz == 0) return;
  GNNCHECK_CUDA_CHECK(
      cudaMemsetAsync(out_values, 0, static_cast<std::size_t>(pattern.nnz) * sizeof(float), ctx.stream));
  if (k_dim == 0) return;
  SpMat mat_c;
  DnMat mat_u, mat_v;
  create_csr(mat_c, pattern, out_values);
  create_dense(mat_u, pattern.rows, k_dim, ldu, u);
  create_dense(mat_v, pattern.cols, k_dim, ldv, v);
  const float alpha = 1.0f, beta = 0.0f;
  std::size_t workspace_bytes = 0;
  // C = U · Vᵀ sampled at C's pattern: opB = transpose of the row-major V [cols × k].
  GNNCHECK_CUSPARSE_CHECK(cusparseSDDMM_bufferSize(ctx.cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                   CUSPARSE_OPERATION_TRANSPOSE, &alpha, mat_u.descr, mat_v.descr,
                                                   &beta, mat_c.descr, CUDA_R_32F, CUSPARSE_SDDMM_ALG_DEFAULT,
                                                   &workspace_bytes));
  DeviceBuffer<unsigned char> workspace(ctx.allocator, static_cast<std::int64_t>(workspace_bytes));
  GNNCHECK_CUSPARSE_CHECK(cusparseSDDMM(ctx.cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_TRANSPOSE,
                                        &alpha, mat_u.descr, mat_v.descr, &beta, mat_c.descr, CUDA_R_32F,
                                        CUSPARSE_SDDMM_ALG_DEFAULT, workspace.data()));
  ctx.synchronize();
}

}  // namespace gnncheck::gpu
