// gnncheck/oracle/sddmm.h — sampled dense-dense products over the edges, forward and backward.
//
//   sddmm_dot:  e[k,h] = ⟨U[row_k,h,:], V[col_k,h,:]⟩     U [n_dst, H·C], V [n_src, H·C] -> [E, H]
//   sddmm_add:  e[k,h] = a[row_k,h] + b[col_k,h]           a [n_dst, H],   b [n_src, H]   -> [E, H]
//               (GAT's attention logits before LeakyReLU)
// Backward of sddmm_dot: grad_U[i,h,:] = Σ_{k ∈ row i} grad_e[k,h] · V[col_k,h,:],
//                        grad_V[j,h,:] = Σ_{k : col_k = j} grad_e[k,h] · U[row_k,h,:].
// Backward of sddmm_add: grad_a[i,h] = Σ_{k ∈ row i} grad_e[k,h], grad_b[j,h] = Σ_{k : col_k = j} grad_e[k,h].
// sddmm_add's output keeps a's trailing shape ([E, H] for a [n_dst, H]). Wrong row counts, U and V
// of different widths, heads < 1 or a width that heads does not divide throw InputError.
#pragma once

#include "core/graph.h"
#include "core/tensor.h"

namespace gnncheck::oracle {

template <class T>
struct SddmmGrads {
  DenseTensor<T> grad_u;  // sddmm_dot: same shape as U; sddmm_add: same shape as a
  DenseTensor<T> grad_v;  // sddmm_dot: same shape as V; sddmm_add: same shape as b
};

template <class T>
DenseTensor<T> sddmm_dot_forward(const Graph& g, const DenseTensor<T>& u, const DenseTensor<T>& v, index_t heads);
template <class T>
SddmmGrads<T> sddmm_dot_backward(const Graph& g, const DenseTensor<T>& u, const DenseTensor<T>& v, index_t heads,
                                 const DenseTensor<T>& grad_e);

template <class T>
DenseTensor<T> sddmm_add_forward(const Graph& g, const DenseTensor<T>& a, const DenseTensor<T>& b);
template <class T>
SddmmGrads<T> sddmm_add_backward(const Graph& g, const DenseTensor<T>& grad_e);

}  // namespace gnncheck::oracle
