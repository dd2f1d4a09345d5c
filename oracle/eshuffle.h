// gnncheck/oracle/eshuffle.h — moving edge tensors between CSR (edge-id) order and CSC order.
//
//   eshuffle:          out[p] = x[edge_perm[p]]    edge-id order -> CSC order
//   eshuffle_inverse:  out[edge_perm[p]] = x[p]    CSC order -> edge-id order
// Both are permutations, so each one's backward is the other applied to the output gradient.
// x is [E, H] (or [E]); whole rows of H values move together.
#pragma once

#include "core/graph.h"
#include "core/tensor.h"

namespace gnncheck::oracle {

template <class T> DenseTensor<T> eshuffle_forward(const Graph& g, const DenseTensor<T>& x);
template <class T> DenseTensor<T> eshuffle_backward(const Graph& g, const DenseTensor<T>& grad_out);

template <class T> DenseTensor<T> eshuffle_inverse_forward(const Graph& g, const DenseTensor<T>& x);
template <class T> DenseTensor<T> eshuffle_inverse_backward(const Graph& g, const DenseTensor<T>& grad_out);

}  // namespace gnncheck::oracle
