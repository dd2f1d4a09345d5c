// gnncheck/oracle/layers/heads.h — what the attention layers (GAT, GATv2) do per head.
//
// A per-head dot product with an attention vector, and its backward: the scores of GAT (over node
// rows of h) and of GATv2 (over edge rows of LeakyReLU(z)):
//
//   score[r, k] = Σ_c v[r, k·C + c] · att[k, c]          v [rows, H·C], att [H, C], score [rows, H]
//
//   DenseTensor<T> s = head_scores(h, att_src, g.n_src(), heads, channels);
//   head_scores_backward(h, att_src, grad_s, heads, channels, grad_h, grad_att_src);  // both accumulate
//
// Joining the heads of out [n, H·C]: concatenated (out itself) or averaged ([n, C]), and its backward.
#pragma once

#include <vector>

#include "core/parallel.h"
#include "core/tensor.h"
#include "oracle/layers/dense.h"

namespace gnncheck::oracle::layers {

// The scores of the first `rows` rows of v.
template <class T>
DenseTensor<T> head_scores(const DenseTensor<T>& v, const DenseTensor<T>& att, index_t rows, index_t heads,
                           index_t channels) {
  DenseTensor<T> score({rows, heads});
#pragma omp parallel for schedule(static) if (worth_parallel(rows * heads * channels))
  for (index_t j = 0; j < rows; ++j)
    for (index_t k = 0; k < heads; ++k) {
      T sum = 0;
      for (index_t c = 0; c < channels; ++c) sum += v.at(j, k * channels + c) * att.at(k, c);
      score.at(j, k) = sum;
    }
  return score;
}

// Backward of head_scores: accumulates into grad_v (row by row, rows in parallel) and grad_att (a
// sum over rows: over row_groups, as matmul_at_b — the same for any thread count, and the plain
// row-order sum below 8192 rows).
template <class T>
void head_scores_backward(const DenseTensor<T>& v, const DenseTensor<T>& att, const DenseTensor<T>& grad_score,
                          index_t heads, index_t channels, DenseTensor<T>& grad_v, DenseTensor<T>& grad_att) {
  const index_t rows = grad_score.rows();
#pragma omp parallel for schedule(static) if (worth_parallel(rows * heads * channels))
  for (index_t j = 0; j < rows; ++j)
    for (index_t k = 0; k < heads; ++k) {
      const T gs = grad_score.at(j, k);
      for (index_t c = 0; c < channels; ++c) grad_v.at(j, k * channels + c) += gs * att.at(k, c);
    }
  const index_t groups = row_groups(rows);
  std::vector<DenseTensor<T>> partial(static_cast<size_t>(groups), DenseTensor<T>(grad_att.shape()));
#pragma omp parallel for schedule(dynamic, 1) if (groups > 1)
  for (index_t g = 0; g < groups; ++g) {
    DenseTensor<T>& sum = partial[static_cast<size_t>(g)];
    for (index_t j = rows * g / groups; j < rows * (g + 1) / groups; ++j)
      for (index_t k = 0; k < heads; ++k) {
        const T gs = grad_score.at(j, k);
        for (index_t c = 0; c < channels; ++c) sum.at(k, c) += gs * v.at(j, k * channels + c);
      }
  }
  for (const auto& sum : partial)
    for (index_t i = 0; i < grad_att.size(); ++i) grad_att[i] += sum[i];
}

// out [n, H·C] as y: out itself (concat) or y[i, c] = (1/H)·Σ_k out[i, k·C + c].
template <class T>
DenseTensor<T> join_heads(const DenseTensor<T>& out, bool concat, index_t heads, index_t channels) {
  if (concat) return out;
  DenseTensor<T> y({out.rows(), channels});
  const T inv_heads = T(1) / static_cast<T>(heads);
  for (index_t i = 0; i < out.rows(); ++i)
    for (index_t k = 0; k < heads; ++k)
      for (index_t c = 0; c < channels; ++c) y.at(i, c) += inv_heads * out.at(i, k * channels + c);
  return y;
}

// The gradient at out of join_heads: grad_y (concat), or grad_y / H given to every head (mean).
template <class T>
DenseTensor<T> join_heads_backward(const DenseTensor<T>& grad_y, bool concat, index_t heads, index_t channels) {
  if (concat) return grad_y;
  DenseTensor<T> grad_out({grad_y.rows(), heads * channels});
  const T inv_heads = T(1) / static_cast<T>(heads);
  for (index_t i = 0; i < grad_y.rows(); ++i)
    for (index_t k = 0; k < heads; ++k)
      for (index_t c = 0; c < channels; ++c) grad_out.at(i, k * channels + c) = inv_heads * grad_y.at(i, c);
  return grad_out;
}

}  // namespace gnncheck::oracle::layers
