// gnncheck/gpu/graph_kernels.cuh — device-side builders of graph views and index conversions
// (internal to gpu/; DeviceGraph and the Kronecker generator call them). Every call is
// asynchronous on ctx.stream; sizes are explicit and may exceed 2^31.
//
//   expand_rows(ctx, n_dst, d_row_ptr, d_row_of_edge);     // COO rows from CSR offsets
//   narrow_offsets(ctx, n + 1, d_row_ptr, d_row_ptr32);    // for cuSPARSE (values < 2^31)
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

// row_of_edge[p] = i for every p in [row_ptr[i], row_ptr[i+1]); one warp per row.
void expand_rows(GpuContext& ctx, std::int64_t rows, const offset_t* row_ptr, node_t* row_of_edge);
// out[k] = in[k] for k < n; the caller guarantees every value fits 32 bits.
void narrow_offsets(GpuContext& ctx, std::int64_t n, const offset_t* in, std::int32_t* out);
// out[k] = value for k < n.
void fill(GpuContext& ctx, std::int64_t n, float value, float* out);

// A + I in the block convention (oracle/layers/self_loops.h): row i of the result is row i of
// (row_ptr, col_idx) followed by the edge (i, i). out_row_ptr [rows + 1], out_col_idx [E + rows].
void append_self_loops(GpuContext& ctx, std::int64_t rows, const offset_t* row_ptr, const node_t* col_idx,
                       offset_t* out_row_ptr, node_t* out_col_idx);

// The CSC of a CSR built on the device: a stable radix sort of the edge ids by column gives
// edge_perm (CSC position -> edge id, ascending edge id within a column, as the host Graph orders
// it); col_ptr comes from the sorted columns, row_idx[p] = row_of_edge[edge_perm[p]]. Transient
// device memory: 24 bytes per edge (sort keys and values, double-buffered) plus CUB's storage.
struct DeviceCsc {
  DeviceBuffer<offset_t> col_ptr;  // [n_src + 1]
  DeviceBuffer<node_t> row_idx;    // [E]
  DeviceBuffer<edge_t> edge_perm;  // [E]
};
DeviceCsc build_csc(GpuContext& ctx, std::int64_t n_src, std::int64_t edges, const node_t* col_idx,
                    const node_t* row_of_edge);

}  // namespace gnncheck::gpu
