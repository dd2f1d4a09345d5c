#include "gpu/cusparse_ops.h"

#include <fmt/format.h>

#include "core/error.h"
#include "gpu/cuda_check.h"
#include "gpu/target_run.h"

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

void create_csr(SpMat& m, const CsrView& a, void* values) {
  GNNCHECK_CUSPARSE_CHECK(cusparseCreateCsr(&m.descr, a.rows, a.cols, a.nnz, const_cast<std::int32_t*>(a.row_ptr),
                                            const_cast<node_t*>(a.col_idx), values, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, cuda_data_type(a.format)));
}

void create_dense(DnMat& m, std::int64_t rows, std::int64_t cols, std::int64_t ld, const void* values,
                  StorageFormat format) {
  GNNCHECK_CUSPARSE_CHECK(cusparseCreateDnMat(&m.descr, rows, cols, ld, const_cast<void*>(values),
                                              cuda_data_type(format), CUSPARSE_ORDER_ROW));
}

// Zero-fills a row-major rows × n block with leading dimension ld.
void zero_block(GpuContext& ctx, void* c, std::int64_t rows, std::int64_t n, std::int64_t ld, StorageFormat format) {
  if (rows == 0 || n == 0) return;
  const std::size_t bytes = element_bytes(format);
  GNNCHECK_CUDA_CHECK(cudaMemset2DAsync(c, static_cast<std::size_t>(ld) * bytes, 0, static_cast<std::size_t>(n) * bytes,
                                        static_cast<std::size_t>(rows), ctx.stream));
}

// `p` advanced by `elements` values of `format`.
const void* advance(const void* p, std::int64_t elements, StorageFormat format) {
  return static_cast<const char*>(p) + elements * static_cast<std::int64_t>(element_bytes(format));
}
void* advance(void* p, std::int64_t elements, StorageFormat format) {
  return static_cast<char*>(p) + elements * static_cast<std::int64_t>(element_bytes(format));
}

// n values `from_pitch` apart to n values `to_pitch` apart (pitches in elements): a head's column
// of an [n, H] matrix to or from a contiguous [n] vector, the same copy for every format.
void copy_column(GpuContext& ctx, std::int64_t n, StorageFormat format, const void* from, std::int64_t from_pitch,
                 void* to, std::int64_t to_pitch) {
  if (n == 0) return;
  const std::size_t bytes = element_bytes(format);
  GNNCHECK_CUDA_CHECK(cudaMemcpy2DAsync(to, static_cast<std::size_t>(to_pitch) * bytes, from,
                                        static_cast<std::size_t>(from_pitch) * bytes, bytes, static_cast<std::size_t>(n),
                                        cudaMemcpyDeviceToDevice, ctx.stream));
}

}  // namespace

void csr_spmm(GpuContext& ctx, const CsrView& a, SparseOp op, const void* b, std::int64_t n, std::int64_t ldb,
              void* c, std::int64_t ldc) {
  const bool transpose = op == SparseOp::transpose;
  const std::int64_t c_rows = transpose ? a.cols : a.rows;
  const std::int64_t b_rows = transpose ? a.rows : a.cols;
  if (c_rows == 0 || n == 0) return;
  if (a.nnz == 0 || b_rows == 0) {
    zero_block(ctx, c, c_rows, n, ldc, a.format);
    return;
  }
  SpMat mat_a;
  DnMat mat_b, mat_c;
  create_csr(mat_a, a, const_cast<void*>(a.values));
  create_dense(mat_b, b_rows, n, ldb, b, a.format);
  create_dense(mat_c, c_rows, n, ldc, c, a.format);
  // computeType CUDA_R_32F: alpha and beta are floats, whatever the storage format.
  const float alpha = 1.0f, beta = 0.0f;
  const cusparseOperation_t op_a = transpose ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
  // In float16 and bfloat16 only CSR_ALG3 keeps the declared float32 sums on long rows: measured on
  // an H100 (CUDA 13.0), the default and CSR_ALG1/ALG2 round partial sums to the storage format
  // past a few thousand terms (4,096 bfloat16 ones sum to 4,768, 16,384 to 8,192; with
  // opA = TRANSPOSE to 256), ALG3's results are within one final rounding (gpu/README.md). ALG3
  // takes no transpose: the half systems compute Aᵀ products over the CSC.
  const bool half = a.format != StorageFormat::float32;
  if (half && transpose) throw InternalError("csr_spmm: a half-precision SpMM with opA = TRANSPOSE does not keep float32 sums; use the CSC");
  const cusparseSpMMAlg_t algorithm = half ? CUSPARSE_SPMM_CSR_ALG3 : CUSPARSE_SPMM_ALG_DEFAULT;
  std::size_t workspace_bytes = 0;
  GNNCHECK_CUSPARSE_CHECK(cusparseSpMM_bufferSize(ctx.cusparse, op_a, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                                  mat_a.descr, mat_b.descr, &beta, mat_c.descr, CUDA_R_32F, algorithm,
                                                  &workspace_bytes));
  DeviceBuffer<unsigned char> workspace(ctx.allocator, static_cast<std::int64_t>(workspace_bytes));
  GNNCHECK_CUSPARSE_CHECK(cusparseSpMM(ctx.cusparse, op_a, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat_a.descr,
                                       mat_b.descr, &beta, mat_c.descr, CUDA_R_32F, algorithm, workspace.data()));
  // The workspace is freed when this function returns; the kernel must be done with it first.
  ctx.synchronize();
}

void csr_sddmm(GpuContext& ctx, const CsrView& pattern, const void* u, std::int64_t ldu, const void* v,
               std::int64_t ldv, std::int64_t k_dim, void* out_values) {
  // cuSPARSE's SDDMM lists CUDA_R_16F but not CUDA_R_16BF among its mixed-precision types.
  if (pattern.format == StorageFormat::bfloat16)
    throw UnsupportedCase("cuSPARSE has no bfloat16 SDDMM (cusparseSDDMM lists CUDA_R_16F, not CUDA_R_16BF)");
  if (pattern.nnz == 0) return;
  GNNCHECK_CUDA_CHECK(cudaMemsetAsync(out_values, 0, static_cast<std::size_t>(pattern.nnz) * element_bytes(pattern.format),
                                      ctx.stream));
  if (k_dim == 0) return;
  SpMat mat_c;
  DnMat mat_u, mat_v;
  create_csr(mat_c, pattern, out_values);
  create_dense(mat_u, pattern.rows, k_dim, ldu, u, pattern.format);
  create_dense(mat_v, pattern.cols, k_dim, ldv, v, pattern.format);
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

void csr_spmm_per_head(GpuContext& ctx, CsrView a, SparseOp op, const void* w, std::int64_t heads, const void* b,
                       std::int64_t channels, void* c) {
  const std::int64_t width = heads * channels;
  if (heads == 1) {
    a.values = w;
    csr_spmm(ctx, a, op, b, channels, width, c, width);
    return;
  }
  DeviceBuffer<unsigned char> head_values(ctx.allocator, a.nnz * static_cast<std::int64_t>(element_bytes(a.format)));
  a.values = head_values.data();
  for (std::int64_t h = 0; h < heads; ++h) {
    copy_column(ctx, a.nnz, a.format, advance(w, h, a.format), heads, head_values.data(), 1);
    csr_spmm(ctx, a, op, advance(b, h * channels, a.format), channels, width, advance(c, h * channels, a.format),
             width);
  }
}

void csr_sddmm_per_head(GpuContext& ctx, const CsrView& pattern, const void* u, const void* v, std::int64_t heads,
                        std::int64_t channels, void* e) {
  const std::int64_t width = heads * channels;
  if (heads == 1) {
    csr_sddmm(ctx, pattern, u, width, v, width, channels, e);
    return;
  }
  DeviceBuffer<unsigned char> head_values(ctx.allocator,
                                          pattern.nnz * static_cast<std::int64_t>(element_bytes(pattern.format)));
  for (std::int64_t h = 0; h < heads; ++h) {
    csr_sddmm(ctx, pattern, advance(u, h * channels, pattern.format), width, advance(v, h * channels, pattern.format),
              width, channels, head_values.data());
    copy_column(ctx, pattern.nnz, pattern.format, head_values.data(), 1, advance(e, h, pattern.format), heads);
  }
  // head_values is freed on return: the last copy must be done with it.
  ctx.synchronize();
}

}  // namespace gnncheck::gpu
