#include "oracle/spmm.h"

#include "oracle/sparse_kernels.h"

namespace gnncheck::oracle {

template <class T>
DenseTensor<T> spmm_forward(const Graph& g, const DenseTensor<T>& x) {
  require_rows(x, g.n_src(), "spmm: input x (one row per source node)");
  DenseTensor<T> y(shape_with_rows(x, g.n_dst()));
  detail::aggregate_rows<T>(g, nullptr, 1, x.data(), x.row_size(), y.data());
  return y;
}

template <class T>
DenseTensor<T> spmm_backward(const Graph& g, const DenseTensor<T>& grad_y) {
  require_rows(grad_y, g.n_dst(), "spmm backward: grad_y (one row per destination node)");
  DenseTensor<T> grad_x(shape_with_rows(grad_y, g.n_src()));
  detail::aggregate_columns<T>(g, nullptr, 1, grad_y.data(), grad_y.row_size(), grad_x.data());
  return grad_x;
}

template <class T>
DenseTensor<T> spmm_transposed_forward(const Graph& g, const DenseTensor<T>& y) {
  require_rows(y, g.n_dst(), "spmm_transposed: input y (one row per destination node)");
  DenseTensor<T> z(shape_with_rows(y, g.n_src()));
  detail::aggregate_columns<T>(g, nullptr, 1, y.data(), y.row_size(), z.data());
  return z;
}

template <class T>
DenseTensor<T> spmm_transposed_backward(const Graph& g, const DenseTensor<T>& grad_z) {
  require_rows(grad_z, g.n_src(), "spmm_transposed backward: grad_z (one row per source node)");
  DenseTensor<T> grad_y(shape_with_rows(grad_z, g.n_dst()));
  detail::aggregate_rows<T>(g, nullptr, 1, grad_z.data(), grad_z.row_size(), grad_y.data());
  return grad_y;
}

#define GNNCHECK_INSTANTIATE(T)                                                          \
  template DenseTensor<T> spmm_forward<T>(const Graph&, const DenseTensor<T>&);           \
  template DenseTensor<T> spmm_backward<T>(const Graph&, const DenseTensor<T>&);          \
  template DenseTensor<T> spmm_transposed_forward<T>(const Graph&, const DenseTensor<T>&); \
  template DenseTensor<T> spmm_transposed_backward<T>(const Graph&, const DenseTensor<T>&);
GNNCHECK_INSTANTIATE(double)
GNNCHECK_INSTANTIATE(float)
#undef GNNCHECK_INSTANTIATE

}  // namespace gnncheck::oracle
