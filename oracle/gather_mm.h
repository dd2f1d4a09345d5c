// gnncheck/oracle/gather_mm.h — gather matrix multiplication, forward and backward: one weight matrix
// per row chosen by the row's type (DGL's gather_mm(a, b, idx_b), pyg-lib's grouped matmul by type;
// R-GCN's per-relation messages x_j · W_r).
//
//   y[k, :] = x[k, :] · w[t_k, :, :]    x [E, in_features], t [E] (integers < relations),
//                                        w [relations, in_features, out_features] -> y [E, out_features]
// Backward: grad_x[k] = grad_y[k] · w[t_k]ᵀ;  grad_w[r] = Σ_{k: t_k = r} x[k]ᵀ · grad_y[k], in row order
// (a relation no row has gets a zero gradient). Every sum runs in a fixed order, so results are
// bit-identical for any thread count. Shapes that do not fit, or a type outside [0, relations),
// throw InputError naming the op and tensor.
#pragma once

#include "core/tensor.h"

namespace gnncheck::oracle {

template <class T>
struct GatherMmGrads {
  DenseTensor<T> grad_x;  // [E, in_features]
  DenseTensor<T> grad_w;  // [relations, in_features, out_features]
};

// `types` holds each row's type as a number (an index tensor, oracle/targets.h).
template <class T>
DenseTensor<T> gather_mm_forward(const DenseTensor<T>& x, const DenseTensor<T>& types, const DenseTensor<T>& w);
template <class T>
GatherMmGrads<T> gather_mm_backward(const DenseTensor<T>& x, const DenseTensor<T>& types, const DenseTensor<T>& w,
                                    const DenseTensor<T>& grad_y);

}  // namespace gnncheck::oracle
