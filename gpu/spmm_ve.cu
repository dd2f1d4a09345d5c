#include "gpu/spmm_ve.cuh"

#include "gpu/aggregate.cuh"
#include "gpu/cusparse_ops.h"
#include "gpu/elementwise.cuh"
#include "gpu/eshuffle.cuh"
#include "gpu/sddmm.cuh"

namespace gnncheck::gpu {

void spmm_ve_forward(GpuContext& ctx, DeviceGraph& g, const float* w, std::int64_t heads, const float* x,
                     std::int64_t channels, float* y, ForwardMethod method) {
  if (method == ForwardMethod::row_kernel || !g.fits_cusparse())  // (cuSPARSE may refuse this CSR)
    return aggregate(ctx, {g.n_dst(), g.row_ptr(), g.col_idx()}, {w, nullptr, heads}, {}, x, channels, y);
  const CsrView a{g.n_dst(), g.n_src(), g.num_edges(), g.cusparse_row_ptr(ctx), g.col_idx(), nullptr};
  csr_spmm_per_head(ctx, a, SparseOp::none, w, heads, x, channels, y);
}

void spmm_ve_transposed_forward(GpuContext& ctx, DeviceGraph& g, const float* w, std::int64_t heads, const float* y,
                                std::int64_t channels, float* z, TransposeMethod method) {
  if (!g.fits_cusparse()) method = TransposeMethod::fused_csc_kernel;  // cuSPARSE refuses this CSR
  switch (method) {
    case TransposeMethod::native_cusparse: {
      const CsrView a{g.n_dst(), g.n_src(), g.num_edges(), g.cusparse_row_ptr(ctx), g.col_idx(), nullptr};
      csr_spmm_per_head(ctx, a, SparseOp::transpose, w, heads, y, channels, z);
      return;
    }
    case TransposeMethod::materialized_csc: {
      DeviceBuffer<float> w_csc(ctx.allocator, g.num_edges() * heads);
      eshuffle_forward(ctx, g, w, heads, w_csc.data());
      const CsrView at{g.n_src(), g.n_dst(), g.num_edges(), g.cusparse_col_ptr(ctx), g.row_idx(ctx), nullptr};
      csr_spmm_per_head(ctx, at, SparseOp::none, w_csc.data(), heads, y, channels, z);
      return;
    }
    case TransposeMethod::fused_csc_kernel:
      aggregate(ctx, {g.n_src(), g.col_ptr(ctx), g.row_idx(ctx)}, {w, g.edge_perm(ctx), heads}, {}, y, channels, z);
      return;
  }
}

void spmm_ve_backward(GpuContext& ctx, DeviceGraph& g, const float* w, std::int64_t heads, const float* x,
                      std::int64_t channels, const float* grad_y, float* grad_w, float* grad_x,
                      TransposeMethod method) {
  if (grad_w) sddmm_dot_forward(ctx, g, grad_y, x, heads, channels, grad_w);
  if (grad_x) spmm_ve_transposed_forward(ctx, g, w, heads, grad_y, channels, grad_x, method);
}

void spmm_ve_transposed_backward(GpuContext& ctx, DeviceGraph& g, const float* w, std::int64_t heads, const float* y,
                                 std::int64_t channels, const float* grad_z, float* grad_w, float* grad_y) {
  if (grad_w) sddmm_dot_forward(ctx, g, y, grad_z, heads, channels, grad_w);
  if (grad_y) spmm_ve_forward(ctx, g, w, heads, grad_z, channels, grad_y, ForwardMethod::row_kernel);
}

}  // namespace gnncheck::gpu
