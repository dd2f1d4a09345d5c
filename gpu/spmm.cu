#include "gpu/spmm.cuh"

#include "gpu/aggregate.cuh"
#include "gpu/cusparse_ops.h"

namespace gnncheck::gpu {

std::string_view to_string(TransposeMethod m) {
  switch (m) {
    case TransposeMethod::native_cusparse: return "native_cusparse";
    case TransposeMethod::materialized_csc: return "materialized_csc";
    case TransposeMethod::fused_csc_kernel: return "fused_csc_kernel";
  }
  return "unknown";
}

void spmm_forward(GpuContext& ctx, DeviceGraph& g, const float* x, std::int64_t f, float* y, ForwardMethod method) {
  if (method == ForwardMethod::row_kernel || !g.fits_cusparse())
    return aggregate(ctx, {g.n_dst(), g.row_ptr(), g.col_idx()}, {}, {}, x, f, y);
  const CsrView a{g.n_dst(), g.n_src(), g.num_edges(), g.cusparse_row_ptr(ctx), g.col_idx(), g.ones(ctx)};
  csr_spmm(ctx, a, SparseOp::none, x, f, f, y, f);
}

void spmm_backward(GpuContext& ctx, DeviceGraph& g, const float* grad_y, std::int64_t f, float* grad_x,
                   TransposeMethod method) {
  spmm_transposed_forward(ctx, g, grad_y, f, grad_x, method);
}

void spmm_transposed_forward(GpuContext& ctx, DeviceGraph& g, const float* y, std::int64_t f, float* z,
                             TransposeMethod method) {
  if (!g.fits_cusparse()) method = TransposeMethod::fused_csc_kernel;  // cuSPARSE refuses this CSR
  switch (method) {
    case TransposeMethod::native_cusparse: {
      const CsrView a{g.n_dst(), g.n_src(), g.num_edges(), g.cusparse_row_ptr(ctx), g.col_idx(), g.ones(ctx)};
      csr_spmm(ctx, a, SparseOp::transpose, y, f, f, z, f);
      return;
    }
    case TransposeMethod::materialized_csc: {
      // Unit values need no shuffle: the CSC is the CSR of Aᵀ as it is.
      const CsrView at{g.n_src(), g.n_dst(), g.num_edges(), g.cusparse_col_ptr(ctx), g.row_idx(ctx), g.ones(ctx)};
      csr_spmm(ctx, at, SparseOp::none, y, f, f, z, f);
      return;
    }
    case TransposeMethod::fused_csc_kernel:
      aggregate(ctx, {g.n_src(), g.col_ptr(ctx), g.row_idx(ctx)}, {}, {}, y, f, z);
      return;
  }
}

void spmm_transposed_backward(GpuContext& ctx, DeviceGraph& g, const float* grad_z, std::int64_t f, float* grad_y,
                              ForwardMethod method) {
  spmm_forward(ctx, g, grad_z, f, grad_y, method);
}

}  // namespace gnncheck::gpu
