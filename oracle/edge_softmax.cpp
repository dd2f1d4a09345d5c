#include "oracle/edge_softmax.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"

#include "oracle/sparse_kernels.h"

namespace gnncheck::oracle {

DuplicateEdges parse_duplicate_edges(const std::string& value) {
  if (value == "separate") return DuplicateEdges::separate;
  if (value == "coalesced") return DuplicateEdges::coalesced;
  throw InputError(fmt::format("attribute duplicate_edges: expected separate or coalesced, got '{}'", value));
}

std::vector<index_t> duplicate_leaders(const Graph& g) {
  std::vector<index_t> leader(static_cast<size_t>(g.num_edges()));
  const auto row_ptr = g.row_ptr();
  const auto col_idx = g.col_idx();
#pragma omp parallel for schedule(dynamic, detail::kRowChunk) if (worth_parallel(g.num_edges()))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    std::unordered_map<index_t, index_t> first_of_source;
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      leader[static_cast<size_t>(k)] = first_of_source.emplace(col_idx[k], k).first->second;
  }
  return leader;
}

namespace {

// Duplicate edges merged: the graph of each row's distinct sources, in the order of their first
// edge, and each edge's entry in it. The coalesced softmax is the plain one on this graph.
struct Coalesced {
  Graph graph;
  std::vector<index_t> entry;  // per edge of the original graph
};

Coalesced coalesce(const Graph& g) {
  const std::vector<index_t> leader = duplicate_leaders(g);
  std::vector<index_t> row_ptr(static_cast<size_t>(g.n_dst()) + 1, 0), col_idx;
  std::vector<index_t> entry(static_cast<size_t>(g.num_edges()));
  for (index_t i = 0; i < g.n_dst(); ++i) {
    for (index_t k = g.row_ptr()[i]; k < g.row_ptr()[i + 1]; ++k) {
      const auto kk = static_cast<size_t>(k);
      if (leader[kk] == k) {
        entry[kk] = static_cast<index_t>(col_idx.size());
        col_idx.push_back(g.col_idx()[k]);
      } else {
        entry[kk] = entry[static_cast<size_t>(leader[kk])];
      }
    }
    row_ptr[static_cast<size_t>(i) + 1] = static_cast<index_t>(col_idx.size());
  }
  return {Graph::from_csr(g.n_dst(), g.n_src(), std::move(row_ptr), std::move(col_idx)), std::move(entry)};
}

// Per-edge rows summed into their entries, in edge order.
template <class T>
DenseTensor<T> summed_into_entries(const DenseTensor<T>& per_edge, const Coalesced& c) {
  std::vector<index_t> shape = per_edge.shape();
  shape[0] = c.graph.num_edges();
  DenseTensor<T> out(shape);
  const index_t width = per_edge.row_size();
  for (size_t k = 0; k < c.entry.size(); ++k)
    for (index_t h = 0; h < width; ++h) out[c.entry[k] * width + h] += per_edge[static_cast<index_t>(k) * width + h];
  return out;
}

// Each edge's row read from its entry.
template <class T>
DenseTensor<T> read_from_entries(const DenseTensor<T>& per_entry, const Coalesced& c) {
  std::vector<index_t> shape = per_entry.shape();
  shape[0] = static_cast<index_t>(c.entry.size());
  DenseTensor<T> out(shape);
  const index_t width = per_entry.row_size();
  for (size_t k = 0; k < c.entry.size(); ++k)
    for (index_t h = 0; h < width; ++h) out[static_cast<index_t>(k) * width + h] = per_entry[c.entry[k] * width + h];
  return out;
}

// An entry's row from the first of its edges (where every edge of an entry holds the same row: alpha).
template <class T>
DenseTensor<T> entries_of(const DenseTensor<T>& per_edge, const Coalesced& c) {
  std::vector<index_t> shape = per_edge.shape();
  shape[0] = c.graph.num_edges();
  DenseTensor<T> out(shape);
  const index_t width = per_edge.row_size();
  for (size_t k = c.entry.size(); k-- > 0;)  // backwards: the first edge of each entry writes last
    for (index_t h = 0; h < width; ++h) out[c.entry[k] * width + h] = per_edge[static_cast<index_t>(k) * width + h];
  return out;
}

}  // namespace

template <class T>
DenseTensor<T> edge_softmax_forward(const Graph& g, const DenseTensor<T>& logits, DuplicateEdges duplicates) {
  require_rows(logits, g.num_edges(), "edge_softmax: logits (one row per edge)");
  if (duplicates == DuplicateEdges::coalesced) {
    const Coalesced c = coalesce(g);
    return read_from_entries(edge_softmax_forward(c.graph, summed_into_entries(logits, c)), c);
  }
  const index_t heads = logits.row_size();
  DenseTensor<T> alpha(logits.shape());
  const auto row_ptr = g.row_ptr();
#pragma omp parallel for schedule(dynamic, detail::kRowChunk) if (worth_parallel(g.num_edges() * heads))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t begin = row_ptr[i], end = row_ptr[i + 1];
    for (index_t h = 0; h < heads; ++h) {
      // Subtracting the row maximum keeps every exp() in (0, 1]: finite for any finite logits.
      T row_max = -INFINITY;
      for (index_t k = begin; k < end; ++k) row_max = std::max(row_max, logits[k * heads + h]);
      T sum = T(0);
      for (index_t k = begin; k < end; ++k) {
        const T ex = std::exp(logits[k * heads + h] - row_max);
        alpha[k * heads + h] = ex;
        sum += ex;
      }
      for (index_t k = begin; k < end; ++k) alpha[k * heads + h] /= sum;
    }
  }
  return alpha;
}

template <class T>
DenseTensor<T> edge_softmax_backward(const Graph& g, const DenseTensor<T>& alpha, const DenseTensor<T>& grad_alpha,
                                     DuplicateEdges duplicates) {
  require_rows(alpha, g.num_edges(), "edge_softmax backward: alpha (one row per edge)");
  require_shape(grad_alpha, alpha.shape(), "edge_softmax backward: grad_alpha (shaped like alpha)");
  if (duplicates == DuplicateEdges::coalesced) {
    const Coalesced c = coalesce(g);
    return read_from_entries(edge_softmax_backward(c.graph, entries_of(alpha, c), summed_into_entries(grad_alpha, c)), c);
  }
  const index_t heads = alpha.row_size();
  DenseTensor<T> grad_logits(alpha.shape());
  const auto row_ptr = g.row_ptr();
#pragma omp parallel for schedule(dynamic, detail::kRowChunk) if (worth_parallel(g.num_edges() * heads))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t begin = row_ptr[i], end = row_ptr[i + 1];
    for (index_t h = 0; h < heads; ++h) {
      T weighted = T(0);  // Σ_{k' ∈ row i} alpha[k',h] · grad_alpha[k',h]
      for (index_t k = begin; k < end; ++k) weighted += alpha[k * heads + h] * grad_alpha[k * heads + h];
      for (index_t k = begin; k < end; ++k)
        grad_logits[k * heads + h] = alpha[k * heads + h] * (grad_alpha[k * heads + h] - weighted);
    }
  }
  return grad_logits;
}

#define GNNCHECK_INSTANTIATE(T)                                                                  \
  template DenseTensor<T> edge_softmax_forward<T>(const Graph&, const DenseTensor<T>&, DuplicateEdges); \
  template DenseTensor<T> edge_softmax_backward<T>(const Graph&, const DenseTensor<T>&, const DenseTensor<T>&, DuplicateEdges);
GNNCHECK_INSTANTIATE(double)
GNNCHECK_INSTANTIATE(float)
#undef GNNCHECK_INSTANTIATE

}  // namespace gnncheck::oracle
