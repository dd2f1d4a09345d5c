#include "oracle/edge_softmax.h"

#include <algorithm>
#include <cmath>

#include "oracle/sparse_kernels.h"

namespace gnncheck::oracle {

template <class T>
DenseTensor<T> edge_softmax_forward(const Graph& g, const DenseTensor<T>& logits) {
  require_rows(logits, g.num_edges(), "edge_softmax: logits (one row per edge)");
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
DenseTensor<T> edge_softmax_backward(const Graph& g, const DenseTensor<T>& alpha, const DenseTensor<T>& grad_alpha) {
  require_rows(alpha, g.num_edges(), "edge_softmax backward: alpha (one row per edge)");
  require_shape(grad_alpha, alpha.shape(), "edge_softmax backward: grad_alpha (shaped like alpha)");
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
  template DenseTensor<T> edge_softmax_forward<T>(const Graph&, const DenseTensor<T>&);          \
  template DenseTensor<T> edge_softmax_backward<T>(const Graph&, const DenseTensor<T>&, const DenseTensor<T>&);
GNNCHECK_INSTANTIATE(double)
GNNCHECK_INSTANTIATE(float)
#undef GNNCHECK_INSTANTIATE

}  // namespace gnncheck::oracle
