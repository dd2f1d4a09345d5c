// gnncheck/oracle/sparse_kernels.h — the two aggregation loops every oracle op is built from
// (internal to the oracle's op files; use the op headers instead).
//
//   aggregate_rows:     out[i,h,:] = Σ_{e ∈ row i}        w[e,h] · in[col_e,h,:]   (A·X, CSR)
//   aggregate_columns:  out[j,h,:] = Σ_{e : col_e = j}    w[e,h] · in[row_e,h,:]   (Aᵀ·Y, CSC)
// `w` may be null (every weight is 1, no multiplication). Each output row is written by exactly one
// OpenMP thread and summed in a fixed order (increasing edge id for rows; increasing CSC position,
// which is increasing edge id, for columns), so results are bit-identical for any thread count.
// No validation happens here: callers check shapes first and pass width = heads · per_head.
//
//   detail::aggregate_rows<double>(g, w.data(), heads, x.data(), width, y.data());
#pragma once

#include <span>

#include "core/graph.h"
#include "core/parallel.h"

namespace gnncheck::oracle::detail {

// Rows are scheduled dynamically in chunks because power-law graphs have a few very long rows;
// which thread takes a row never changes that row's arithmetic.
inline constexpr int kRowChunk = 64;

// The rows a sparse product gathers are scattered in memory, so the hardware prefetcher cannot
// guess them; asking for the row kPrefetchDistance edges ahead hides that latency (measured 2× on
// the 1M-edge power-law benchmark graph with 64 features). A hint only: no value changes.
inline constexpr index_t kPrefetchDistance = 4;
template <class T>
inline void prefetch_row(const T* rows, index_t row, index_t width) {
#if defined(__GNUC__)
  const T* start = rows + row * width;
  for (index_t c = 0; c < width; c += static_cast<index_t>(64 / sizeof(T))) __builtin_prefetch(start + c);
#endif
}

// The loop both aggregations share: for every output slot o, out[o,:] = Σ over positions p of slot o
// (offsets[o] ≤ p < offsets[o+1]) of w[edge_at(p),h] · in[neighbor[p],h,:], summed in increasing p.
// Rows: offsets = row_ptr, neighbor = col_idx, edge_at(p) = p. Columns: offsets = col_ptr,
// neighbor = row_idx, edge_at(p) = edge_perm[p].
template <class T, class EdgeAt>
void aggregate_compressed(index_t n_out, std::span<const index_t> offsets, std::span<const index_t> neighbor,
                          EdgeAt edge_at, const T* w, index_t heads, const T* in, index_t width, T* out) {
  const index_t per_head = heads > 0 ? width / heads : 0;
  const auto num_positions = static_cast<index_t>(neighbor.size());
#pragma omp parallel for schedule(dynamic, kRowChunk) if (worth_parallel(num_positions * width))
  for (index_t o = 0; o < n_out; ++o) {
    T* out_row = out + o * width;
    for (index_t c = 0; c < width; ++c) out_row[c] = T(0);
    for (index_t p = offsets[o]; p < offsets[o + 1]; ++p) {
      if (p + kPrefetchDistance < num_positions) prefetch_row(in, neighbor[p + kPrefetchDistance], width);
      const T* in_row = in + neighbor[p] * width;
      if (w == nullptr) {
        for (index_t c = 0; c < width; ++c) out_row[c] += in_row[c];
      } else {
        const index_t e = edge_at(p);
        for (index_t h = 0; h < heads; ++h) {
          const T weight = w[e * heads + h];
          const index_t begin = h * per_head;
          for (index_t c = begin; c < begin + per_head; ++c) out_row[c] += weight * in_row[c];
        }
      }
    }
  }
}

template <class T>
void aggregate_rows(const Graph& g, const T* w, index_t heads, const T* in, index_t width, T* out) {
  aggregate_compressed(g.n_dst(), g.row_ptr(), g.col_idx(), [](index_t p) { return p; }, w, heads, in, width, out);
}

template <class T>
void aggregate_columns(const Graph& g, const T* w, index_t heads, const T* in, index_t width, T* out) {
  const auto edge_perm = g.edge_perm();
  aggregate_compressed(g.n_src(), g.col_ptr(), g.row_idx(), [edge_perm](index_t p) { return edge_perm[p]; }, w, heads,
                       in, width, out);
}

// score[e,h] = ⟨a[row_e,h,:], b[col_e,h,:]⟩ for every edge, each summed over c in increasing order.
template <class T>
void edge_dot(const Graph& g, const T* a, const T* b, index_t heads, index_t width, T* score) {
  const index_t per_head = heads > 0 ? width / heads : 0;
  const auto row_ptr = g.row_ptr();
  const auto col_idx = g.col_idx();
  const index_t num_edges = g.num_edges();
#pragma omp parallel for schedule(dynamic, kRowChunk) if (worth_parallel(g.num_edges() * width))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const T* a_row = a + i * width;
    for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
      if (e + kPrefetchDistance < num_edges) prefetch_row(b, col_idx[e + kPrefetchDistance], width);
      const T* b_row = b + col_idx[e] * width;
      for (index_t h = 0; h < heads; ++h) {
        T sum = T(0);
        for (index_t c = h * per_head; c < (h + 1) * per_head; ++c) sum += a_row[c] * b_row[c];
        score[e * heads + h] = sum;
      }
    }
  }
}

}  // namespace gnncheck::oracle::detail
