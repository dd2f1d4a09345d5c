// gnncheck/gpu/aggregate.cuh — the one hand-written sparse aggregation kernel: a compressed
// (CSR or CSC) row loop with optional edge weights read through a permutation and optional
// per-row and per-column scale factors, all fused into one pass.
//
//   out[i, h, :] = row_scale[i] · Σ_{p ∈ [ptr[i], ptr[i+1])} w[perm[p], h] · col_scale[idx[p]] · x[idx[p], h, :]
//
// Uses:   over CSR with perm = identity          spmm_ve (deterministic, any H)
//         over CSC with perm = edge_perm         fused eShuffle + SpMMve: Aᵀ-weighted sums for
//                                                attention backward, without a shuffled copy of w
//         over CSR with row/col scales           degree normalization fused with aggregation
// One warp per output row. Rows wider than 16 values: lanes stride over the H·C values and sum
// the row's edges in increasing p. Narrower rows: the warp splits into 32/G groups of G ≥ H·C
// lanes that take every (32/G)-th edge, and a fixed shuffle tree adds the groups' sums, so all
// lanes work. Either way the summation order depends only on the row: results are bit-identical
// run to run.
//
//   aggregate(ctx, {n_dst, row_ptr, col_idx}, {w, nullptr, heads}, {}, x, channels, out);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

struct CompressedView {
  std::int64_t rows = 0;
  const offset_t* ptr = nullptr;  // [rows + 1]
  const node_t* idx = nullptr;    // [nnz] column (CSR) or row (CSC) of each position
};

struct EdgeWeights {
  const float* values = nullptr;     // [E, heads] in edge-id order; nullptr = every weight is 1
  const edge_t* perm = nullptr;      // position -> edge id; nullptr = identity (CSR positions)
  std::int64_t heads = 1;
};

struct Scales {
  const float* row = nullptr;  // [rows]; nullptr = 1
  const float* col = nullptr;  // [number of x rows]; nullptr = 1
};

// out [rows, heads·channels] is overwritten; x has heads·channels values per row.
void aggregate(GpuContext& ctx, const CompressedView& m, const EdgeWeights& w, const Scales& s, const float* x,
               std::int64_t channels, float* out);

}  // namespace gnncheck::gpu
