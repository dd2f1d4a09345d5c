#include "gpu/tests/large_graph_kernels.cuh"

#include "gpu/launch.cuh"

namespace gnncheck::gpu::testing {
namespace {

using namespace gnncheck::gpu::detail;

__global__ void fill_pattern_kernel(std::int64_t n_dst, std::int64_t n_src, const offset_t* __restrict__ row_ptr,
                                    node_t* __restrict__ col_idx) {
  const int lane = threadIdx.x % warp_size;
  for (std::int64_t i = global_warp(); i < n_dst; i += warp_count())
    for (offset_t p = row_ptr[i] + lane; p < row_ptr[i + 1]; p += warp_size)
      col_idx[p] = pattern_column(i, p - row_ptr[i], n_src);
}

}  // namespace

void fill_pattern_columns(GpuContext& ctx, std::int64_t n_dst, std::int64_t n_src, const offset_t* row_ptr,
                          node_t* col_idx) {
  if (n_dst == 0) return;
  fill_pattern_kernel<<<blocks_for_warps(n_dst), block_threads, 0, ctx.stream>>>(n_dst, n_src, row_ptr, col_idx);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace gnncheck::gpu::testing
