// gnncheck/oracle/segment_mm.h — segment matrix multiplication, forward and backward: one weight
// matrix per contiguous segment of rows (pyg-lib's segment_matmul, DGL's segment_mm; R-GCN and HGT
// apply one weight per node or edge type with it).
//
//   y[k, :] = x[k, :] · w[i, :, :]   for every k in segment i = rows row_ptr[i] … row_ptr[i+1]−1
//             x [E, in_features], w [n_dst, in_features, out_features] -> y [E, out_features]
// Segment i is destination i's in-edges in edge-id order; only the graph's row pointers are read.
// Backward: grad_x[k] = grad_y[k] · w[i]ᵀ;  grad_w[i] = Σ_{k ∈ segment i} x[k]ᵀ · grad_y[k] (an empty
// segment gets a zero grad_w[i] and produces no rows). Every sum runs in a fixed order, so results
// are bit-identical for any thread count. x not of rank 2 with E rows, w not of rank 3 with n_dst
// rows and x's width, or grad_y not [E, out_features] throw InputError naming the op and tensor.
#pragma once

#include "core/graph.h"
#include "core/tensor.h"

namespace gnncheck::oracle {

template <class T>
struct SegmentMmGrads {
  DenseTensor<T> grad_x;  // [E, in_features]
  DenseTensor<T> grad_w;  // [n_dst, in_features, out_features]
};

template <class T>
DenseTensor<T> segment_mm_forward(const Graph& g, const DenseTensor<T>& x, const DenseTensor<T>& w);
template <class T>
SegmentMmGrads<T> segment_mm_backward(const Graph& g, const DenseTensor<T>& x, const DenseTensor<T>& w,
                                      const DenseTensor<T>& grad_y);

}  // namespace gnncheck::oracle
