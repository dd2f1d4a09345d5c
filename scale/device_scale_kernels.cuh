// gnncheck/scale/device_scale_kernels.cuh — the device side of a device-resident scale check
// (scale/device_scale_check.h): inputs drawn where they live, rows moved between the whole-graph
// tensors and the compact host copies of the neighbourhood, and the zero check run where the
// gradients are. Every call is asynchronous on ctx.stream; sizes may exceed 2^31.
//
//   fill_uniform(ctx, n, seed, stream_tag, 1.0, d_x);                       // x uniform in [−1, 1)
//   gather_rows(ctx, d_x, width, d_rows, rows, d_compact);                  // compact[i] = x[rows[i]]
//   ZeroCheck z = zero_check(ctx, d_grad, n_rows, width, d_inside, nullptr);  // nonzeros outside
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::scale::device {

using gpu::GpuContext;
using gpu::node_t;
using gpu::offset_t;

// out[k] = M·(2u − 1) with u = 24 hashed bits of (seed, stream_tag, k) · 2⁻²⁴: uniform in [−M, M),
// each value a function of its index alone.
void fill_uniform(GpuContext& ctx, std::int64_t n, std::uint64_t seed, std::uint64_t stream_tag, float magnitude, float* out);

// out[i, :] = in[rows[i], :] for i < count (rows: device, 64-bit).
void gather_rows(GpuContext& ctx, const float* in, std::int64_t width, const std::int64_t* rows, std::int64_t count, float* out);
// out[rows[i], :] = in[i, :] for i < count; other rows of out are left as they are.
void scatter_rows(GpuContext& ctx, const float* in, std::int64_t width, const std::int64_t* rows, std::int64_t count, float* out);

// The columns of the rows `rows` (device, ascending), concatenated: out[first[i] + q] =
// col_idx[row_ptr[rows[i]] + q]; first [count] is the exclusive prefix sum of their lengths.
void gather_row_columns(GpuContext& ctx, const offset_t* row_ptr, const node_t* col_idx, const std::int64_t* rows,
                        const std::int64_t* first, std::int64_t count, node_t* out);

// What row sampling reads of the offsets (scale/row_sampling.h, GraphRows), answered on the device
// so that only K-sized answers cross to the host. Each synchronizes.
//
// (row_ptr[rows[i]], row_ptr[rows[i] + 1]) for each of the `count` rows (host), interleaved in
// the result: begin, end, begin, end, …
std::vector<std::int64_t> row_extents(GpuContext& ctx, const offset_t* row_ptr, const std::int64_t* rows, std::int64_t count);
// The row r with row_ptr[r] ≤ edge < row_ptr[r + 1] (0 ≤ edge < row_ptr[n_dst]).
std::int64_t row_holding_edge(GpuContext& ctx, const offset_t* row_ptr, std::int64_t n_dst, std::int64_t edge);
struct RankedRow {
  std::int64_t row = 0, degree = 0;
};
// The min(count, n_dst) rows of largest in-degree, ties broken by the lower row, in that order. The
// rows whose degree has at least the bit width of the count-th largest are ranked by one radix
// sort of unique keys (degree, −row): in a power-law graph a few times `count`; never more than n_dst.
std::vector<RankedRow> largest_rows(GpuContext& ctx, const offset_t* row_ptr, std::int64_t n_dst, std::int64_t count);
// The rows of [lo, hi) whose in-degree is 0 (`empty`) or not, ascending.
std::vector<std::int64_t> rows_where(GpuContext& ctx, const offset_t* row_ptr, std::int64_t lo, std::int64_t hi, bool empty);
// For each p < count, how many distinct sources in [0, n_src) the edges of rows[0], …, rows[p] (host,
// distinct) read together: each source's first row position (an atomic minimum over a map of
// n_src 32-bit entries), a count per position, then their prefix sums on the host.
std::vector<std::int64_t> sources_read_together(GpuContext& ctx, const offset_t* row_ptr, const node_t* col_idx, std::int64_t n_src,
                                                const std::int64_t* rows, std::int64_t count);

// scale::number_by_first_use (scale/neighbourhood.h) on the device: the ids of `first` (host,
// distinct) then of `entries` (host), numbered 0…m−1 in order of first use, with a map of one entry
// per source on the device rather than the host's. local [n_entries] is each entry's number,
// sources [m] the id of each number; in_range is false (and the rest empty) when an id lies
// outside [0, n_src). Synchronizes.
struct FirstUse {
  std::vector<std::int64_t> local, sources;
  bool in_range = true;
};
FirstUse number_by_first_use(GpuContext& ctx, const std::int64_t* first, std::int64_t n_first, const std::int64_t* entries,
                             std::int64_t n_entries, std::int64_t n_src);

// inside[rows[i]] = 1 for i < count (inside is zeroed by the caller).
void mark_rows(GpuContext& ctx, const std::int64_t* rows, std::int64_t count, std::uint8_t* inside);

struct ZeroCheck {
  std::int64_t elements = 0;  // elements outside
  std::int64_t nonzero = 0;   // of those, not ±0 (NaN included)
  std::int64_t worst_flat = -1;  // the first element of largest |value| (NaN largest), −1 if none
  float worst_value = 0.0f;
};
// Over t [n_rows, width]: an element is inside when inside[its row] is 1 — its row itself for a
// node tensor (row_ptr = nullptr), or for an edge tensor (row_ptr [n_dst + 1] given) the
// destination row holding its edge. Synchronizes.
ZeroCheck zero_check(GpuContext& ctx, const float* t, std::int64_t n_rows, std::int64_t width, const std::uint8_t* inside,
                     const offset_t* row_ptr, std::int64_t n_dst);

}  // namespace gnncheck::scale::device
