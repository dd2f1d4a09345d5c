// gnncheck/oracle/edge_softmax.h — softmax over each destination's in-edges, per head.
//
//   alpha[k,h] = exp(s[k,h] - m[i,h]) / Σ_{k' ∈ row i} exp(s[k',h] - m[i,h]),  i = row_k,
//   m[i,h] = max_{k ∈ row i} s[k,h]   (max subtraction: finite for any finite logits)
// Backward: grad_s[k,h] = alpha[k,h] · (grad_alpha[k,h] − Σ_{k' ∈ row i} alpha[k',h] · grad_alpha[k',h]).
// Empty rows have no edges and contribute nothing. logits [E, H] (or [E]) -> alpha of the same shape.
// Each row's maximum, sum and normalization run in edge-id order on one thread: bit-identical for
// any thread count. Logits must be finite: a row whose logits are all −∞ gives NaN (0/0), as in DGL.
#pragma once

#include "core/graph.h"
#include "core/tensor.h"

namespace gnncheck::oracle {

template <class T>
DenseTensor<T> edge_softmax_forward(const Graph& g, const DenseTensor<T>& logits);
// Needs only the forward output alpha (what a GPU kernel would save for backward).
template <class T>
DenseTensor<T> edge_softmax_backward(const Graph& g, const DenseTensor<T>& alpha, const DenseTensor<T>& grad_alpha);

}  // namespace gnncheck::oracle
