#include "oracle/spmm_ve.h"

#include <fmt/format.h>

#include "oracle/sparse_kernels.h"

namespace gnncheck::oracle {
namespace {

// Checks the edge values ([E] or [E, H]) and the node operand ([rows, H·C]) and returns H.
template <class T>
index_t check_operands(const Graph& g, const DenseTensor<T>& edge_values, const DenseTensor<T>& nodes,
                       index_t node_rows, const char* op, const char* node_name, const char* node_meaning) {
  require_rows(edge_values, g.num_edges(), fmt::format("{}: edge_values (one row per edge)", op));
  if (edge_values.rank() > 2)
    throw InputError(fmt::format("{}: edge_values must be [E] or [E, H], got shape {}", op, edge_values.shape()));
  require_rows(nodes, node_rows, fmt::format("{}: input {} ({})", op, node_name, node_meaning));
  const index_t heads = edge_values.row_size();
  if (heads < 1) throw InputError(fmt::format("{}: edge_values has 0 heads (shape {})", op, edge_values.shape()));
  if (nodes.row_size() % heads != 0)
    throw InputError(fmt::format("{}: input {} has {} values per row, which the {} heads of edge_values do not divide",
                                 op, node_name, nodes.row_size(), heads));
  return heads;
}

}  // namespace

template <class T>
DenseTensor<T> spmm_ve_forward(const Graph& g, const DenseTensor<T>& edge_values, const DenseTensor<T>& x) {
  const index_t heads = check_operands(g, edge_values, x, g.n_src(), "spmm_ve", "x", "one row per source node");
  DenseTensor<T> y(shape_with_rows(x, g.n_dst()));
  detail::aggregate_rows<T>(g, edge_values.data(), heads, x.data(), x.row_size(), y.data());
  return y;
}

template <class T>
SpmmVeGrads<T> spmm_ve_backward(const Graph& g, const DenseTensor<T>& edge_values, const DenseTensor<T>& x,
                                const DenseTensor<T>& grad_y) {
  const index_t heads = check_operands(g, edge_values, x, g.n_src(), "spmm_ve backward", "x", "one row per source node");
  require_shape(grad_y, shape_with_rows(x, g.n_dst()), "spmm_ve backward: grad_y (shaped like the output y)");
  SpmmVeGrads<T> grads{DenseTensor<T>(edge_values.shape()), DenseTensor<T>(x.shape())};
  // grad_w[e,h] = ⟨grad_Y[row_e,h,:], X[col_e,h,:]⟩; grad_X = Aᵀ (weighted) · grad_Y.
  detail::edge_dot<T>(g, grad_y.data(), x.data(), heads, x.row_size(), grads.grad_edge_values.data());
  detail::aggregate_columns<T>(g, edge_values.data(), heads, grad_y.data(), x.row_size(), grads.grad_x.data());
  return grads;
}

template <class T>
DenseTensor<T> spmm_ve_transposed_forward(const Graph& g, const DenseTensor<T>& edge_values, const DenseTensor<T>& y) {
  const index_t heads =
      check_operands(g, edge_values, y, g.n_dst(), "spmm_ve_transposed", "y", "one row per destination node");
  DenseTensor<T> z(shape_with_rows(y, g.n_src()));
  detail::aggregate_columns<T>(g, edge_values.data(), heads, y.data(), y.row_size(), z.data());
  return z;
}

template <class T>
SpmmVeTransposedGrads<T> spmm_ve_transposed_backward(const Graph& g, const DenseTensor<T>& edge_values,
                                                     const DenseTensor<T>& y, const DenseTensor<T>& grad_z) {
  const index_t heads = check_operands(g, edge_values, y, g.n_dst(), "spmm_ve_transposed backward", "y",
                                       "one row per destination node");
  require_shape(grad_z, shape_with_rows(y, g.n_src()), "spmm_ve_transposed backward: grad_z (shaped like the output z)");
  SpmmVeTransposedGrads<T> grads{DenseTensor<T>(edge_values.shape()), DenseTensor<T>(y.shape())};
  // grad_w[e,h] = ⟨Y[row_e,h,:], grad_Z[col_e,h,:]⟩; grad_Y = A (weighted) · grad_Z.
  detail::edge_dot<T>(g, y.data(), grad_z.data(), heads, y.row_size(), grads.grad_edge_values.data());
  detail::aggregate_rows<T>(g, edge_values.data(), heads, grad_z.data(), y.row_size(), grads.grad_y.data());
  return grads;
}

#define GNNCHECK_INSTANTIATE(T)                                                                                    \
  template DenseTensor<T> spmm_ve_forward<T>(const Graph&, const DenseTensor<T>&, const DenseTensor<T>&);         \
  template SpmmVeGrads<T> spmm_ve_backward<T>(const Graph&, const DenseTensor<T>&, const DenseTensor<T>&,         \
                                              const DenseTensor<T>&);                                             \
  template DenseTensor<T> spmm_ve_transposed_forward<T>(const Graph&, const DenseTensor<T>&, const DenseTensor<T>&); \
  template SpmmVeTransposedGrads<T> spmm_ve_transposed_backward<T>(const Graph&, const DenseTensor<T>&,            \
                                                                   const DenseTensor<T>&, const DenseTensor<T>&);
GNNCHECK_INSTANTIATE(double)
GNNCHECK_INSTANTIATE(float)
#undef GNNCHECK_INSTANTIATE

}  // namespace gnncheck::oracle
