#include "gpu/graph_kernels.cuh"

#include <cub/device/device_radix_sort.cuh>

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

__global__ void append_self_loops_kernel(std::int64_t rows, const offset_t* __restrict__ row_ptr,
                                         const node_t* __restrict__ col_idx, offset_t* __restrict__ out_row_ptr,
                                         node_t* __restrict__ out_col_idx) {
  const int lane = threadIdx.x % warp_size;
  for (std::int64_t i = global_warp(); i < rows; i += warp_count()) {
    const offset_t begin = row_ptr[i], end = row_ptr[i + 1];
    for (offset_t p = begin + lane; p < end; p += warp_size) out_col_idx[p + i] = col_idx[p];
    if (lane == 0) {
      out_col_idx[end + i] = static_cast<node_t>(i);
      out_row_ptr[i] = begin + i;
      if (i == rows - 1) out_row_ptr[rows] = end + rows;
    }
  }
}

__global__ void narrow_kernel(std::int64_t n, const offset_t* __restrict__ in, std::int32_t* __restrict__ out) {
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) out[k] = static_cast<std::int32_t>(in[k]);
}

__global__ void fill_kernel(std::int64_t n, float value, float* __restrict__ out) {
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) out[k] = value;
}

__global__ void iota_kernel(std::int64_t n, edge_t* __restrict__ out) {
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) out[k] = k;
}

// offsets[j] = the first position whose (sorted) column is ≥ j, for j in [0, n].
__global__ void offsets_from_sorted_kernel(std::int64_t n, std::int64_t edges, const node_t* __restrict__ sorted,
                                           offset_t* __restrict__ offsets) {
  for (std::int64_t j = global_thread(); j <= n; j += thread_count()) {
    std::int64_t lo = 0, hi = edges;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (sorted[mid] < j) lo = mid + 1;
      else hi = mid;
    }
    offsets[j] = lo;
  }
}

__global__ void gather_rows_kernel(std::int64_t edges, const edge_t* __restrict__ edge_perm,
                                   const node_t* __restrict__ row_of_edge, node_t* __restrict__ row_idx) {
  for (std::int64_t p = global_thread(); p < edges; p += thread_count()) row_idx[p] = row_of_edge[edge_perm[p]];
}

int bits_for(std::int64_t n) {  // bits needed for values in [0, n)
  int bits = 1;
  while (bits < 31 && (std::int64_t{1} << bits) < n) ++bits;
  return bits;
}

}  // namespace

void append_self_loops(GpuContext& ctx, std::int64_t rows, const offset_t* row_ptr, const node_t* col_idx,
                       offset_t* out_row_ptr, node_t* out_col_idx) {
  if (rows == 0) {
    GNNCHECK_CUDA_CHECK(cudaMemsetAsync(out_row_ptr, 0, sizeof(offset_t), ctx.stream));
    return;
  }
  append_self_loops_kernel<<<blocks_for_warps(rows), block_threads, 0, ctx.stream>>>(rows, row_ptr, col_idx, out_row_ptr,
                                                                                     out_col_idx);
  GNNCHECK_CHECK_LAUNCH();
}

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

DeviceCsc build_csc(GpuContext& ctx, std::int64_t n_src, std::int64_t edges, const node_t* col_idx,
                    const node_t* row_of_edge) {
  DeviceCsc csc;
  csc.col_ptr = DeviceBuffer<offset_t>(ctx.allocator, n_src + 1);
  csc.row_idx = DeviceBuffer<node_t>(ctx.allocator, edges);
  if (edges == 0) {
    csc.col_ptr.zero(ctx.stream);
    ctx.synchronize();
    return csc;
  }
  DeviceBuffer<node_t> keys(ctx.allocator, edges), keys_alt(ctx.allocator, edges);
  DeviceBuffer<edge_t> ids(ctx.allocator, edges), ids_alt(ctx.allocator, edges);
  GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(keys.data(), col_idx, keys.bytes(), cudaMemcpyDeviceToDevice, ctx.stream));
  iota_kernel<<<blocks_for_threads(edges), block_threads, 0, ctx.stream>>>(edges, ids.data());
  GNNCHECK_CHECK_LAUNCH();
  cub::DoubleBuffer<node_t> sorted_keys(keys.data(), keys_alt.data());
  cub::DoubleBuffer<edge_t> sorted_ids(ids.data(), ids_alt.data());
  const int end_bit = bits_for(n_src);
  std::size_t temp_bytes = 0;
  GNNCHECK_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, sorted_keys, sorted_ids, edges, 0, end_bit, ctx.stream));
  {
    DeviceBuffer<unsigned char> temp(ctx.allocator, static_cast<std::int64_t>(temp_bytes));
    GNNCHECK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, sorted_keys, sorted_ids, edges, 0,
                                                        end_bit, ctx.stream));
    offsets_from_sorted_kernel<<<blocks_for_threads(n_src + 1), block_threads, 0, ctx.stream>>>(
        n_src, edges, sorted_keys.Current(), csc.col_ptr.data());
    GNNCHECK_CHECK_LAUNCH();
    ctx.synchronize();  // temp is freed at the end of this scope
  }
  // Keep the sorted ids as edge_perm; free the rest.
  csc.edge_perm = sorted_ids.Current() == ids.data() ? std::move(ids) : std::move(ids_alt);
  ids = DeviceBuffer<edge_t>();
  ids_alt = DeviceBuffer<edge_t>();
  keys = DeviceBuffer<node_t>();
  keys_alt = DeviceBuffer<node_t>();
  gather_rows_kernel<<<blocks_for_threads(edges), block_threads, 0, ctx.stream>>>(edges, csc.edge_perm.data(),
                                                                                  row_of_edge, csc.row_idx.data());
  GNNCHECK_CHECK_LAUNCH();
  ctx.synchronize();
  return csc;
}

}  // namespace gnncheck::gpu
