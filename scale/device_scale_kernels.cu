#include "scale/device_scale_kernels.cuh"

#include "gpu/device_allocator.h"
#include "gpu/kronecker.h"
#include "gpu/launch.cuh"

namespace gnncheck::scale::device {
namespace {

using namespace gpu::detail;

__global__ void fill_uniform_kernel(std::int64_t n, std::uint64_t key, float magnitude, float* __restrict__ out) {
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) {
    const std::uint64_t bits = splitmix64(key ^ splitmix64(static_cast<std::uint64_t>(k))) >> 40;  // 24 bits
    const float unit = static_cast<float>(bits) * (1.0f / 16777216.0f);                    // [0, 1), exact
    out[k] = magnitude * (2.0f * unit - 1.0f);
  }
}

__global__ void gather_rows_kernel(const float* __restrict__ in, std::int64_t width, const std::int64_t* __restrict__ rows,
                                   std::int64_t count, float* __restrict__ out) {
  const std::int64_t total = count * width;
  for (std::int64_t k = global_thread(); k < total; k += thread_count()) out[k] = in[rows[k / width] * width + k % width];
}

__global__ void scatter_rows_kernel(const float* __restrict__ in, std::int64_t width, const std::int64_t* __restrict__ rows,
                                    std::int64_t count, float* __restrict__ out) {
  const std::int64_t total = count * width;
  for (std::int64_t k = global_thread(); k < total; k += thread_count()) out[rows[k / width] * width + k % width] = in[k];
}

__global__ void gather_row_columns_kernel(const offset_t* __restrict__ row_ptr, const node_t* __restrict__ col_idx,
                                          const std::int64_t* __restrict__ rows, const std::int64_t* __restrict__ first,
                                          std::int64_t count, node_t* __restrict__ out) {
  const int lane = threadIdx.x % warp_size;
  for (std::int64_t i = global_warp(); i < count; i += warp_count()) {
    const offset_t begin = row_ptr[rows[i]], end = row_ptr[rows[i] + 1];
    for (offset_t p = begin + lane; p < end; p += warp_size) out[first[i] + (p - begin)] = col_idx[p];
  }
}

__global__ void mark_rows_kernel(const std::int64_t* __restrict__ rows, std::int64_t count, std::uint8_t* __restrict__ inside) {
  for (std::int64_t k = global_thread(); k < count; k += thread_count()) inside[rows[k]] = 1;
}

// |v| as an ordered key: IEEE bits of a non-negative float order as unsigned integers; NaN above ∞.
__device__ __forceinline__ unsigned magnitude_key(float v) {
  return isnan(v) ? 0x7f800001u : (__float_as_uint(v) & 0x7fffffffu);
}

__device__ __forceinline__ bool element_inside(std::int64_t row, const std::uint8_t* inside, const offset_t* row_ptr,
                                               std::int64_t n_dst) {
  if (!row_ptr) return inside[row] != 0;
  std::int64_t lo = 0, hi = n_dst;  // the destination d with row_ptr[d] ≤ edge < row_ptr[d + 1]
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (row_ptr[mid] <= row) lo = mid;
    else hi = mid;
  }
  return inside[lo] != 0;
}

struct ZeroCounters {
  unsigned long long outside, nonzero, worst_flat;
  unsigned worst_key;
};

__global__ void zero_count_kernel(const float* __restrict__ t, std::int64_t n_rows, std::int64_t width,
                                  const std::uint8_t* __restrict__ inside, const offset_t* __restrict__ row_ptr,
                                  std::int64_t n_dst, ZeroCounters* __restrict__ c) {
  unsigned long long outside = 0, nonzero = 0;
  unsigned key = 0;
  const std::int64_t total = n_rows * width;
  for (std::int64_t k = global_thread(); k < total; k += thread_count()) {
    if (element_inside(k / width, inside, row_ptr, n_dst)) continue;
    ++outside;
    const unsigned m = magnitude_key(t[k]);
    if (m != 0) {
      ++nonzero;
      key = max(key, m);
    }
  }
  if (outside) atomicAdd(&c->outside, outside);
  if (nonzero) {
    atomicAdd(&c->nonzero, nonzero);
    atomicMax(&c->worst_key, key);
  }
}

__global__ void zero_worst_kernel(const float* __restrict__ t, std::int64_t n_rows, std::int64_t width,
                                  const std::uint8_t* __restrict__ inside, const offset_t* __restrict__ row_ptr,
                                  std::int64_t n_dst, ZeroCounters* __restrict__ c) {
  const unsigned key = c->worst_key;
  const std::int64_t total = n_rows * width;
  for (std::int64_t k = global_thread(); k < total; k += thread_count())
    if (magnitude_key(t[k]) == key && !element_inside(k / width, inside, row_ptr, n_dst))
      atomicMin(&c->worst_flat, static_cast<unsigned long long>(k));
}

}  // namespace

void fill_uniform(GpuContext& ctx, std::int64_t n, std::uint64_t seed, std::uint64_t stream_tag, float magnitude, float* out) {
  if (n == 0) return;
  fill_uniform_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(n, splitmix64(seed ^ splitmix64(stream_tag)), magnitude, out);
  GNNCHECK_CHECK_LAUNCH();
}

void gather_rows(GpuContext& ctx, const float* in, std::int64_t width, const std::int64_t* rows, std::int64_t count, float* out) {
  if (count == 0 || width == 0) return;
  gather_rows_kernel<<<blocks_for_threads(count * width), block_threads, 0, ctx.stream>>>(in, width, rows, count, out);
  GNNCHECK_CHECK_LAUNCH();
}

void scatter_rows(GpuContext& ctx, const float* in, std::int64_t width, const std::int64_t* rows, std::int64_t count, float* out) {
  if (count == 0 || width == 0) return;
  scatter_rows_kernel<<<blocks_for_threads(count * width), block_threads, 0, ctx.stream>>>(in, width, rows, count, out);
  GNNCHECK_CHECK_LAUNCH();
}

void gather_row_columns(GpuContext& ctx, const offset_t* row_ptr, const node_t* col_idx, const std::int64_t* rows,
                        const std::int64_t* first, std::int64_t count, node_t* out) {
  if (count == 0) return;
  gather_row_columns_kernel<<<blocks_for_warps(count), block_threads, 0, ctx.stream>>>(row_ptr, col_idx, rows, first, count, out);
  GNNCHECK_CHECK_LAUNCH();
}

void mark_rows(GpuContext& ctx, const std::int64_t* rows, std::int64_t count, std::uint8_t* inside) {
  if (count == 0) return;
  mark_rows_kernel<<<blocks_for_threads(count), block_threads, 0, ctx.stream>>>(rows, count, inside);
  GNNCHECK_CHECK_LAUNCH();
}

ZeroCheck zero_check(GpuContext& ctx, const float* t, std::int64_t n_rows, std::int64_t width, const std::uint8_t* inside,
                     const offset_t* row_ptr, std::int64_t n_dst) {
  ZeroCheck z;
  if (n_rows * width == 0) return z;
  gpu::DeviceBuffer<ZeroCounters> counters(ctx.allocator, 1);
  const ZeroCounters start{0, 0, ~0ull, 0};
  counters.upload(&start, 1, ctx.stream);
  const unsigned blocks = blocks_for_threads(n_rows * width);
  zero_count_kernel<<<blocks, block_threads, 0, ctx.stream>>>(t, n_rows, width, inside, row_ptr, n_dst, counters.data());
  GNNCHECK_CHECK_LAUNCH();
  zero_worst_kernel<<<blocks, block_threads, 0, ctx.stream>>>(t, n_rows, width, inside, row_ptr, n_dst, counters.data());
  GNNCHECK_CHECK_LAUNCH();
  const ZeroCounters c = counters.download(ctx.stream)[0];
  z.elements = static_cast<std::int64_t>(c.outside);
  z.nonzero = static_cast<std::int64_t>(c.nonzero);
  if (z.nonzero > 0) {
    z.worst_flat = static_cast<std::int64_t>(c.worst_flat);
    GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(&z.worst_value, t + z.worst_flat, sizeof(float), cudaMemcpyDeviceToHost, ctx.stream));
    ctx.synchronize();
  }
  return z;
}

}  // namespace gnncheck::scale::device
