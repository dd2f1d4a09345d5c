#include "gpu/graph_kernels.cuh"

#include "gpu/launch.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

__global__ void expand_rows_kernel(std::int64_t rows, const offset_t* __restrict__ row_ptr,
                                   node_t* __restrict__ row_of_edge) {
  const int lane = threadIdx.x % warp_size;
  for (std::int64_t i = global_warp(); i < rows; i += warp_count())
    for (offset_t p = row_ptr[i] + lane; p < row_ptr[i + 1]; p += warp_size) row_of_edge[p] = static_cast<node_t>(i);
}

__global__ void narrow_kernel(std::int64_t n, const offset_t* __restrict__ in, std::int32_t* __restrict__ out) {
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) out[k] = static_cast<std::int32_t>(in[k]);
}

__global__ void fill_kernel(std::int64_t n, float value, float* __restrict__ out) {
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) out[k] = value;
}

}  // namespace

void expand_rows(GpuContext& ctx, std::int64_t rows, const offset_t* row_ptr, node_t* row_of_edge) {
  if (rows == 0) return;
  expand_rows_kernel<<<blocks_for_warps(rows), block_threads, 0, ctx.stream>>>(rows, row_ptr, row_of_edge);
  GNNCHECK_CHECK_LAUNCH();
}

void narrow_offsets(GpuContext& ctx, std::int64_t n, const offset_t* in, std::int32_t* out) {
  if (n == 0) return;
  narrow_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(n, in, out);
  GNNCHECK_CHECK_LAUNCH();
}

void fill(GpuContext& ctx, std::int64_t n, float value, float* out) {
  if (n == 0) return;
  fill_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(n, value, out);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace gnncheck::gpu
