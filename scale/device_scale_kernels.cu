#include "scale/device_scale_kernels.cuh"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

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

__global__ void row_extents_kernel(const offset_t* __restrict__ row_ptr, const std::int64_t* __restrict__ rows, std::int64_t count,
                                   std::int64_t* __restrict__ out) {
  for (std::int64_t i = global_thread(); i < count; i += thread_count()) {
    out[2 * i] = row_ptr[rows[i]];
    out[2 * i + 1] = row_ptr[rows[i] + 1];
  }
}

// The last row whose start is ≤ edge: an empty row r has row_ptr[r + 1] = row_ptr[r], so a later row
// also qualifies, and the last one holds the edge.
__device__ __forceinline__ std::int64_t last_row_starting_at_or_before(const offset_t* row_ptr, std::int64_t n_dst, std::int64_t edge) {
  std::int64_t lo = 0, hi = n_dst;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (row_ptr[mid] <= edge) lo = mid;
    else hi = mid;
  }
  return lo;
}

__global__ void row_holding_edge_kernel(const offset_t* __restrict__ row_ptr, std::int64_t n_dst, std::int64_t edge,
                                        std::int64_t* __restrict__ out) {
  if (global_thread() == 0) *out = last_row_starting_at_or_before(row_ptr, n_dst, edge);
}

// A degree's bit width: 0 for 0, b for 2^(b−1) ≤ d < 2^b.
__device__ __forceinline__ int degree_width(std::int64_t d) { return d == 0 ? 0 : 64 - __clzll(static_cast<long long>(d)); }

constexpr int degree_widths = 65;

__global__ void degree_width_histogram_kernel(const offset_t* __restrict__ row_ptr, std::int64_t n_dst,
                                              unsigned long long* __restrict__ counts) {
  __shared__ unsigned long long local[degree_widths];
  for (int b = threadIdx.x; b < degree_widths; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (std::int64_t r = global_thread(); r < n_dst; r += thread_count()) atomicAdd(&local[degree_width(row_ptr[r + 1] - row_ptr[r])], 1ull);
  __syncthreads();
  for (int b = threadIdx.x; b < degree_widths; b += blockDim.x)
    if (local[b]) atomicAdd(&counts[b], local[b]);
}

// keys[…] = (degree << row_bits) | (row_mask − row) for each row of degree width ≥ min_width, in
// any order: the keys are unique, and larger means larger degree, then lower row.
__global__ void ranked_row_keys_kernel(const offset_t* __restrict__ row_ptr, std::int64_t n_dst, int min_width, int row_bits,
                                       unsigned long long* __restrict__ next, unsigned long long* __restrict__ keys) {
  const unsigned long long row_mask = (1ull << row_bits) - 1;
  for (std::int64_t r = global_thread(); r < n_dst; r += thread_count()) {
    const std::int64_t d = row_ptr[r + 1] - row_ptr[r];
    if (degree_width(d) < min_width) continue;
    keys[atomicAdd(next, 1ull)] = (static_cast<unsigned long long>(d) << row_bits) | (row_mask - static_cast<unsigned long long>(r));
  }
}

__global__ void rows_where_kernel(const offset_t* __restrict__ row_ptr, std::int64_t lo, std::int64_t hi, bool empty,
                                  unsigned long long* __restrict__ next, std::int64_t* __restrict__ out) {
  for (std::int64_t r = lo + global_thread(); r < hi; r += thread_count()) {
    if ((row_ptr[r + 1] == row_ptr[r]) != empty) continue;
    const unsigned long long at = atomicAdd(next, 1ull);
    if (out) out[at] = r;
  }
}

__global__ void first_row_position_kernel(const offset_t* __restrict__ row_ptr, const node_t* __restrict__ col_idx,
                                          const std::int64_t* __restrict__ rows, std::int64_t count, unsigned* __restrict__ position) {
  const int lane = threadIdx.x % warp_size;
  for (std::int64_t p = global_warp(); p < count; p += warp_count()) {
    const offset_t begin = row_ptr[rows[p]], end = row_ptr[rows[p] + 1];
    for (offset_t e = begin + lane; e < end; e += warp_size) atomicMin(&position[col_idx[e]], static_cast<unsigned>(p));
  }
}

__global__ void count_first_positions_kernel(const unsigned* __restrict__ position, std::int64_t n_src,
                                             unsigned long long* __restrict__ counts) {
  for (std::int64_t j = global_thread(); j < n_src; j += thread_count())
    if (position[j] != ~0u) atomicAdd(&counts[position[j]], 1ull);
}

// The first-use numbering: each id's earliest position (an atomic minimum over a map of n_src
// entries), a flag at each first position, their exclusive prefix sum (the numbers), then each
// entry's number through its id's first position.
__global__ void first_use_init_kernel(std::int64_t n_src, unsigned long long* __restrict__ first_position) {
  for (std::int64_t j = global_thread(); j < n_src; j += thread_count()) first_position[j] = ~0ull;
}

__global__ void first_use_min_kernel(const std::int64_t* __restrict__ ids, std::int64_t n, std::int64_t n_src,
                                     unsigned long long* __restrict__ first_position, unsigned long long* __restrict__ out_of_range) {
  for (std::int64_t p = global_thread(); p < n; p += thread_count()) {
    const std::int64_t j = ids[p];
    if (j < 0 || j >= n_src) atomicAdd(out_of_range, 1ull);
    else atomicMin(&first_position[j], static_cast<unsigned long long>(p));
  }
}

__global__ void first_use_flag_kernel(const std::int64_t* __restrict__ ids, std::int64_t n,
                                      const unsigned long long* __restrict__ first_position, std::int64_t* __restrict__ flag) {
  for (std::int64_t p = global_thread(); p < n; p += thread_count())
    flag[p] = first_position[ids[p]] == static_cast<unsigned long long>(p) ? 1 : 0;
}

__global__ void first_use_number_kernel(const std::int64_t* __restrict__ ids, std::int64_t n, std::int64_t n_first,
                                        const unsigned long long* __restrict__ first_position, const std::int64_t* __restrict__ number,
                                        std::int64_t* __restrict__ sources, std::int64_t* __restrict__ local) {
  for (std::int64_t p = global_thread(); p < n; p += thread_count()) {
    const std::int64_t j = ids[p];
    const auto at = static_cast<std::int64_t>(first_position[j]);
    if (at == p) sources[number[p]] = j;
    if (p >= n_first) local[p - n_first] = number[at];
  }
}

int bits_for(std::int64_t n) {  // bits needed for values in [0, n)
  int bits = 1;
  while (bits < 63 && (std::int64_t{1} << bits) < n) ++bits;
  return bits;
}

// |v| as an ordered key: IEEE bits of a non-negative float order as unsigned integers; NaN above ∞.
__device__ __forceinline__ unsigned magnitude_key(float v) {
  return isnan(v) ? 0x7f800001u : (__float_as_uint(v) & 0x7fffffffu);
}

__device__ __forceinline__ bool element_inside(std::int64_t row, const std::uint8_t* inside, const offset_t* row_ptr,
                                               std::int64_t n_dst) {
  if (!row_ptr) return inside[row] != 0;
  return inside[last_row_starting_at_or_before(row_ptr, n_dst, row)] != 0;  // the destination holding edge `row`
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

std::vector<std::int64_t> row_extents(GpuContext& ctx, const offset_t* row_ptr, const std::int64_t* rows, std::int64_t count) {
  if (count == 0) return {};
  gpu::DeviceBuffer<std::int64_t> d_rows(ctx.allocator, count), d_out(ctx.allocator, 2 * count);
  d_rows.upload(rows, count, ctx.stream);
  row_extents_kernel<<<blocks_for_threads(count), block_threads, 0, ctx.stream>>>(row_ptr, d_rows.data(), count, d_out.data());
  GNNCHECK_CHECK_LAUNCH();
  return d_out.download(ctx.stream);
}

std::int64_t row_holding_edge(GpuContext& ctx, const offset_t* row_ptr, std::int64_t n_dst, std::int64_t edge) {
  gpu::DeviceBuffer<std::int64_t> d_out(ctx.allocator, 1);
  row_holding_edge_kernel<<<1, 1, 0, ctx.stream>>>(row_ptr, n_dst, edge, d_out.data());
  GNNCHECK_CHECK_LAUNCH();
  return d_out.download(ctx.stream)[0];
}

std::vector<RankedRow> largest_rows(GpuContext& ctx, const offset_t* row_ptr, std::int64_t n_dst, std::int64_t count) {
  count = std::min(count, n_dst);
  if (count <= 0) return {};
  // The bit width of the count-th largest degree: the widest w with at least `count` rows of width ≥ w.
  gpu::DeviceBuffer<unsigned long long> d_counts(ctx.allocator, degree_widths);
  d_counts.zero(ctx.stream);
  degree_width_histogram_kernel<<<blocks_for_threads(n_dst), block_threads, 0, ctx.stream>>>(row_ptr, n_dst, d_counts.data());
  GNNCHECK_CHECK_LAUNCH();
  const std::vector<unsigned long long> counts = d_counts.download(ctx.stream);
  int min_width = degree_widths - 1, widest = 0;
  unsigned long long candidates = 0;
  for (int w = degree_widths - 1; w >= 0; --w) {
    if (counts[w] > 0 && widest == 0) widest = w;
    if (candidates >= static_cast<unsigned long long>(count)) break;
    candidates += counts[w];
    min_width = w;
  }
  const int row_bits = bits_for(n_dst);
  if (widest + row_bits > 64)
    throw std::length_error("largest_rows: in-degrees of " + std::to_string(widest) + " bits and " + std::to_string(row_bits) +
                            "-bit rows do not fit one 64-bit key");
  // The candidates' keys, then one descending sort of them.
  const auto c = static_cast<std::int64_t>(candidates);
  gpu::DeviceBuffer<unsigned long long> next(ctx.allocator, 1), keys(ctx.allocator, c), keys_alt(ctx.allocator, c);
  next.zero(ctx.stream);
  ranked_row_keys_kernel<<<blocks_for_threads(n_dst), block_threads, 0, ctx.stream>>>(row_ptr, n_dst, min_width, row_bits, next.data(),
                                                                                     keys.data());
  GNNCHECK_CHECK_LAUNCH();
  cub::DoubleBuffer<unsigned long long> sorted(keys.data(), keys_alt.data());
  const int end_bit = widest + row_bits;
  std::size_t temp_bytes = 0;
  GNNCHECK_CUDA_CHECK(cub::DeviceRadixSort::SortKeysDescending(nullptr, temp_bytes, sorted, c, 0, end_bit, ctx.stream));
  gpu::DeviceBuffer<unsigned char> temp(ctx.allocator, static_cast<std::int64_t>(temp_bytes));
  GNNCHECK_CUDA_CHECK(cub::DeviceRadixSort::SortKeysDescending(temp.data(), temp_bytes, sorted, c, 0, end_bit, ctx.stream));
  std::vector<unsigned long long> best(static_cast<std::size_t>(count));
  GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(best.data(), sorted.Current(), best.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                                      ctx.stream));
  ctx.synchronize();
  const unsigned long long row_mask = (1ull << row_bits) - 1;
  std::vector<RankedRow> out(best.size());
  for (std::size_t i = 0; i < best.size(); ++i)
    out[i] = {static_cast<std::int64_t>(row_mask - (best[i] & row_mask)), static_cast<std::int64_t>(best[i] >> row_bits)};
  return out;
}

std::vector<std::int64_t> rows_where(GpuContext& ctx, const offset_t* row_ptr, std::int64_t lo, std::int64_t hi, bool empty) {
  if (hi <= lo) return {};
  // Count, then list (in any order), then sort ascending: the list is only as long as its answer.
  gpu::DeviceBuffer<unsigned long long> next(ctx.allocator, 1);
  next.zero(ctx.stream);
  rows_where_kernel<<<blocks_for_threads(hi - lo), block_threads, 0, ctx.stream>>>(row_ptr, lo, hi, empty, next.data(), nullptr);
  GNNCHECK_CHECK_LAUNCH();
  const auto found = static_cast<std::int64_t>(next.download(ctx.stream)[0]);
  if (found == 0) return {};
  gpu::DeviceBuffer<std::int64_t> rows(ctx.allocator, found), rows_alt(ctx.allocator, found);
  next.zero(ctx.stream);
  rows_where_kernel<<<blocks_for_threads(hi - lo), block_threads, 0, ctx.stream>>>(row_ptr, lo, hi, empty, next.data(), rows.data());
  GNNCHECK_CHECK_LAUNCH();
  cub::DoubleBuffer<std::int64_t> sorted(rows.data(), rows_alt.data());
  const int end_bit = bits_for(hi);
  std::size_t temp_bytes = 0;
  GNNCHECK_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, sorted, found, 0, end_bit, ctx.stream));
  gpu::DeviceBuffer<unsigned char> temp(ctx.allocator, static_cast<std::int64_t>(temp_bytes));
  GNNCHECK_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp.data(), temp_bytes, sorted, found, 0, end_bit, ctx.stream));
  std::vector<std::int64_t> out(static_cast<std::size_t>(found));
  GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(out.data(), sorted.Current(), out.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost, ctx.stream));
  ctx.synchronize();
  return out;
}

std::vector<std::int64_t> sources_read_together(GpuContext& ctx, const offset_t* row_ptr, const node_t* col_idx, std::int64_t n_src,
                                                const std::int64_t* rows, std::int64_t count) {
  if (count == 0) return {};
  if (count >= static_cast<std::int64_t>(~0u)) throw std::length_error("sources_read_together: more rows than 32-bit positions");
  gpu::DeviceBuffer<std::int64_t> d_rows(ctx.allocator, count);
  d_rows.upload(rows, count, ctx.stream);
  gpu::DeviceBuffer<unsigned> position(ctx.allocator, std::max<std::int64_t>(n_src, 1));
  GNNCHECK_CUDA_CHECK(cudaMemsetAsync(position.data(), 0xff, static_cast<std::size_t>(std::max<std::int64_t>(n_src, 1)) * sizeof(unsigned),
                                      ctx.stream));
  gpu::DeviceBuffer<unsigned long long> counts(ctx.allocator, count);
  counts.zero(ctx.stream);
  first_row_position_kernel<<<blocks_for_warps(count), block_threads, 0, ctx.stream>>>(row_ptr, col_idx, d_rows.data(), count,
                                                                                      position.data());
  GNNCHECK_CHECK_LAUNCH();
  if (n_src > 0) {
    count_first_positions_kernel<<<blocks_for_threads(n_src), block_threads, 0, ctx.stream>>>(position.data(), n_src, counts.data());
    GNNCHECK_CHECK_LAUNCH();
  }
  const std::vector<unsigned long long> per_position = counts.download(ctx.stream);
  std::vector<std::int64_t> out(per_position.size());
  std::int64_t distinct = 0;
  for (std::size_t p = 0; p < per_position.size(); ++p) out[p] = distinct += static_cast<std::int64_t>(per_position[p]);
  return out;
}

FirstUse number_by_first_use(GpuContext& ctx, const std::int64_t* first, std::int64_t n_first, const std::int64_t* entries,
                             std::int64_t n_entries, std::int64_t n_src) {
  FirstUse out;
  const std::int64_t n = n_first + n_entries;
  if (n == 0) return out;
  gpu::DeviceBuffer<std::int64_t> ids(ctx.allocator, n);
  if (n_first > 0)
    GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(ids.data(), first, n_first * sizeof(std::int64_t), cudaMemcpyHostToDevice, ctx.stream));
  if (n_entries > 0)
    GNNCHECK_CUDA_CHECK(
        cudaMemcpyAsync(ids.data() + n_first, entries, n_entries * sizeof(std::int64_t), cudaMemcpyHostToDevice, ctx.stream));
  gpu::DeviceBuffer<unsigned long long> first_position(ctx.allocator, std::max<std::int64_t>(n_src, 1)), out_of_range(ctx.allocator, 1);
  out_of_range.zero(ctx.stream);
  first_use_init_kernel<<<blocks_for_threads(n_src), block_threads, 0, ctx.stream>>>(n_src, first_position.data());
  GNNCHECK_CHECK_LAUNCH();
  first_use_min_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(ids.data(), n, n_src, first_position.data(),
                                                                               out_of_range.data());
  GNNCHECK_CHECK_LAUNCH();
  if (out_of_range.download(ctx.stream)[0] != 0) {
    out.in_range = false;
    return out;
  }
  gpu::DeviceBuffer<std::int64_t> flag(ctx.allocator, n), number(ctx.allocator, n);
  first_use_flag_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(ids.data(), n, first_position.data(), flag.data());
  GNNCHECK_CHECK_LAUNCH();
  std::size_t temp_bytes = 0;
  GNNCHECK_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, flag.data(), number.data(), n, ctx.stream));
  {
    gpu::DeviceBuffer<unsigned char> temp(ctx.allocator, static_cast<std::int64_t>(temp_bytes));
    GNNCHECK_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, flag.data(), number.data(), n, ctx.stream));
    ctx.synchronize();  // temp is freed at the end of this scope
  }
  std::int64_t last[2] = {0, 0};  // the last number and flag: m = their sum
  GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(&last[0], number.data() + n - 1, sizeof(std::int64_t), cudaMemcpyDeviceToHost, ctx.stream));
  GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(&last[1], flag.data() + n - 1, sizeof(std::int64_t), cudaMemcpyDeviceToHost, ctx.stream));
  ctx.synchronize();
  const std::int64_t m = last[0] + last[1];
  gpu::DeviceBuffer<std::int64_t> sources(ctx.allocator, m), local(ctx.allocator, std::max<std::int64_t>(n_entries, 1));
  first_use_number_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(ids.data(), n, n_first, first_position.data(),
                                                                                  number.data(), sources.data(), local.data());
  GNNCHECK_CHECK_LAUNCH();
  out.sources = sources.download(ctx.stream);
  out.local.resize(static_cast<std::size_t>(n_entries));
  if (n_entries > 0)
    GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(out.local.data(), local.data(), n_entries * sizeof(std::int64_t), cudaMemcpyDeviceToHost, ctx.stream));
  ctx.synchronize();
  return out;
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
