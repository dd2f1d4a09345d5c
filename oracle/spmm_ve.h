// gnncheck/oracle/spmm_ve.h — edge-weighted SpMM per head, its transpose, forward and backward.
//
//   spmm_ve:             Y[i,h,:] = Σ_{e ∈ row i} w[e,h] · X[col_e,h,:]
//                        w [E, H], X [n_src, H·C] -> Y [n_dst, H·C]
//   spmm_ve_transposed:  Z[j,h,:] = Σ_{e : col_e = j} w[e,h] · Y[row_e,h,:]
//                        w [E, H], Y [n_dst, H·C] -> Z [n_src, H·C]
// H is w's second dimension (w may be [E] for H = 1); C = row size of X / H (must divide).
// Backward of spmm_ve:  grad_w[e,h] = ⟨grad_Y[row_e,h,:], X[col_e,h,:]⟩,
//                       grad_X[j,h,:] = Σ_{e : col_e = j} w[e,h] · grad_Y[row_e,h,:]   (Aᵀ).
// Backward of the transpose swaps the roles of rows and columns.
// Wrong row counts, edge values of rank > 2, or a width that H does not divide throw InputError
// naming the op and the argument. Bit-identical results for any OpenMP thread count.
#pragma once

#include "core/graph.h"
#include "core/tensor.h"

namespace gnncheck::oracle {

template <class T>
struct SpmmVeGrads {
  DenseTensor<T> grad_edge_values;  // [E, H], same shape as the edge values
  DenseTensor<T> grad_x;            // same shape as x
};

template <class T>
DenseTensor<T> spmm_ve_forward(const Graph& g, const DenseTensor<T>& edge_values, const DenseTensor<T>& x);
template <class T>
SpmmVeGrads<T> spmm_ve_backward(const Graph& g, const DenseTensor<T>& edge_values, const DenseTensor<T>& x,
                                const DenseTensor<T>& grad_y);

template <class T>
struct SpmmVeTransposedGrads {
  DenseTensor<T> grad_edge_values;  // [E, H]
  DenseTensor<T> grad_y;            // same shape as y
};

template <class T>
DenseTensor<T> spmm_ve_transposed_forward(const Graph& g, const DenseTensor<T>& edge_values, const DenseTensor<T>& y);
template <class T>
SpmmVeTransposedGrads<T> spmm_ve_transposed_backward(const Graph& g, const DenseTensor<T>& edge_values,
                                                     const DenseTensor<T>& y, const DenseTensor<T>& grad_z);

}  // namespace gnncheck::oracle
