// gnncheck/oracle/spmm.h — sum-of-neighbors SpMM and its transpose, forward and backward.
//
//   spmm:             Y = A·X     Y[i] = Σ_{e ∈ row i} X[col_e]        X [n_src, F] -> Y [n_dst, F]
//   spmm_transposed:  Z = Aᵀ·Y    Z[j] = Σ_{e : col_e = j} Y[row_e]    Y [n_dst, F] -> Z [n_src, F]
// Backward (vector-Jacobian products): grad_X = Aᵀ·grad_Y for spmm, grad_Y = A·grad_Z for the
// transpose. F is the row size of the dense operand (any trailing shape, e.g. [N, H, C]).
// T is double for the oracle; float gives the float32 evaluation of the same code.
// Summation order is fixed (increasing edge id / CSC position), so results are bit-identical for
// any OpenMP thread count. A tensor with the wrong number of rows throws InputError naming the op
// and the argument.
#pragma once

#include "core/graph.h"
#include "core/tensor.h"

namespace gnncheck::oracle {

template <class T> DenseTensor<T> spmm_forward(const Graph& g, const DenseTensor<T>& x);
template <class T> DenseTensor<T> spmm_backward(const Graph& g, const DenseTensor<T>& grad_y);

template <class T> DenseTensor<T> spmm_transposed_forward(const Graph& g, const DenseTensor<T>& y);
template <class T> DenseTensor<T> spmm_transposed_backward(const Graph& g, const DenseTensor<T>& grad_z);

}  // namespace gnncheck::oracle
