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

// The coalesced softmax: each group of duplicates is one entry, its logit their sum (in edge order,
// kept at the group's first edge), its alpha carried by every edge of the group.
template <class T>
DenseTensor<T> coalesced_forward(const Graph& g, const DenseTensor<T>& logits) {
  const index_t heads = logits.row_size();
  const std::vector<index_t> leader = duplicate_leaders(g);
  DenseTensor<T> summed(logits.shape());
  DenseTensor<T> alpha(logits.shape());
  const auto row_ptr = g.row_ptr();
#pragma omp parallel for schedule(dynamic, detail::kRowChunk) if (worth_parallel(g.num_edges() * heads))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t begin = row_ptr[i], end = row_ptr[i + 1];
    for (index_t h = 0; h < heads; ++h) {
      for (index_t k = begin; k < end; ++k) summed[leader[static_cast<size_t>(k)] * heads + h] += logits[k * heads + h];
      T row_max = -INFINITY;
      for (index_t k = begin; k < end; ++k)
        if (leader[static_cast<size_t>(k)] == k) row_max = std::max(row_max, summed[k * heads + h]);
      T sum = T(0);
      for (index_t k = begin; k < end; ++k)
        if (leader[static_cast<size_t>(k)] == k) {
          alpha[k * heads + h] = std::exp(summed[k * heads + h] - row_max);
          sum += alpha[k * heads + h];
        }
      for (index_t k = begin; k < end; ++k)
        if (leader[static_cast<size_t>(k)] == k) alpha[k * heads + h] /= sum;
      for (index_t k = begin; k < end; ++k) alpha[k * heads + h] = alpha[leader[static_cast<size_t>(k)] * heads + h];
    }
  }
  return alpha;
}

template <class T>
DenseTensor<T> coalesced_backward(const Graph& g, const DenseTensor<T>& alpha, const DenseTensor<T>& grad_alpha) {
  const index_t heads = alpha.row_size();
  const std::vector<index_t> leader = duplicate_leaders(g);
  DenseTensor<T> group_grad(alpha.shape());  // ḡ_u, kept at the group's first edge
  DenseTensor<T> grad_logits(alpha.shape());
  const auto row_ptr = g.row_ptr();
#pragma omp parallel for schedule(dynamic, detail::kRowChunk) if (worth_parallel(g.num_edges() * heads))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t begin = row_ptr[i], end = row_ptr[i + 1];
    for (index_t h = 0; h < heads; ++h) {
      for (index_t k = begin; k < end; ++k) group_grad[leader[static_cast<size_t>(k)] * heads + h] += grad_alpha[k * heads + h];
      T weighted = T(0);  // Σ_u alpha_u · ḡ_u
      for (index_t k = begin; k < end; ++k)
        if (leader[static_cast<size_t>(k)] == k) weighted += alpha[k * heads + h] * group_grad[k * heads + h];
      for (index_t k = begin; k < end; ++k) {
        const index_t u = leader[static_cast<size_t>(k)];
        grad_logits[k * heads + h] = alpha[u * heads + h] * (group_grad[u * heads + h] - weighted);
      }
    }
  }
  return grad_logits;
}

}  // namespace

template <class T>
DenseTensor<T> edge_softmax_forward(const Graph& g, const DenseTensor<T>& logits, DuplicateEdges duplicates) {
  require_rows(logits, g.num_edges(), "edge_softmax: logits (one row per edge)");
  if (duplicates == DuplicateEdges::coalesced) return coalesced_forward(g, logits);
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
  if (duplicates == DuplicateEdges::coalesced) return coalesced_backward(g, alpha, grad_alpha);
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
