#include "oracle/sddmm.h"

#include <fmt/format.h>

#include "oracle/sparse_kernels.h"

namespace gnncheck::oracle {
namespace {

template <class T>
void check_dot_operands(const Graph& g, const DenseTensor<T>& u, const DenseTensor<T>& v, index_t heads,
                        const char* op) {
  if (heads < 1) throw InputError(fmt::format("{}: heads must be at least 1, got {}", op, heads));
  require_rows(u, g.n_dst(), fmt::format("{}: input u (one row per destination node)", op));
  require_rows(v, g.n_src(), fmt::format("{}: input v (one row per source node)", op));
  if (u.row_size() != v.row_size())
    throw InputError(fmt::format("{}: u has {} values per row but v has {}; they must match", op, u.row_size(),
                                 v.row_size()));
  if (u.row_size() % heads != 0)
    throw InputError(fmt::format("{}: u and v have {} values per row, which {} heads do not divide", op,
                                 u.row_size(), heads));
}

}  // namespace

template <class T>
DenseTensor<T> sddmm_dot_forward(const Graph& g, const DenseTensor<T>& u, const DenseTensor<T>& v, index_t heads) {
  check_dot_operands(g, u, v, heads, "sddmm_dot");
  DenseTensor<T> e({g.num_edges(), heads});
  detail::edge_dot<T>(g, u.data(), v.data(), heads, u.row_size(), e.data());
  return e;
}

template <class T>
SddmmGrads<T> sddmm_dot_backward(const Graph& g, const DenseTensor<T>& u, const DenseTensor<T>& v, index_t heads,
                                 const DenseTensor<T>& grad_e) {
  check_dot_operands(g, u, v, heads, "sddmm_dot backward");
  require_shape(grad_e, {g.num_edges(), heads}, "sddmm_dot backward: grad_e (one row of heads per edge)");
  SddmmGrads<T> grads{DenseTensor<T>(u.shape()), DenseTensor<T>(v.shape())};
  // grad_U = A (weighted by grad_e) · V;  grad_V = Aᵀ (weighted by grad_e) · U.
  detail::aggregate_rows<T>(g, grad_e.data(), heads, v.data(), u.row_size(), grads.grad_u.data());
  detail::aggregate_columns<T>(g, grad_e.data(), heads, u.data(), u.row_size(), grads.grad_v.data());
  return grads;
}

template <class T>
DenseTensor<T> sddmm_add_forward(const Graph& g, const DenseTensor<T>& a, const DenseTensor<T>& b) {
  require_rows(a, g.n_dst(), "sddmm_add: input a (one row per destination node)");
  require_rows(b, g.n_src(), "sddmm_add: input b (one row per source node)");
  if (a.row_size() != b.row_size())
    throw InputError(fmt::format("sddmm_add: a has {} heads per row but b has {}; they must match", a.row_size(),
                                 b.row_size()));
  const index_t heads = a.row_size();
  DenseTensor<T> e(shape_with_rows(a, g.num_edges()));
  const auto row_of_edge = g.row_of_edge();
  const auto col_idx = g.col_idx();
#pragma omp parallel for schedule(static) if (worth_parallel(g.num_edges() * heads))
  for (index_t k = 0; k < g.num_edges(); ++k)
    for (index_t h = 0; h < heads; ++h) e[k * heads + h] = a[row_of_edge[k] * heads + h] + b[col_idx[k] * heads + h];
  return e;
}

template <class T>
SddmmGrads<T> sddmm_add_backward(const Graph& g, const DenseTensor<T>& grad_e) {
  require_rows(grad_e, g.num_edges(), "sddmm_add backward: grad_e (one row per edge)");
  const index_t heads = grad_e.row_size();
  SddmmGrads<T> grads{DenseTensor<T>(shape_with_rows(grad_e, g.n_dst())),
                      DenseTensor<T>(shape_with_rows(grad_e, g.n_src()))};
  // grad_a[i,h] = Σ_{k ∈ row i} grad_e[k,h]: each destination sums its own edges, in edge-id order.
  const auto row_ptr = g.row_ptr();
#pragma omp parallel for schedule(dynamic, detail::kRowChunk) if (worth_parallel(g.num_edges() * heads))
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t h = 0; h < heads; ++h) {
      T sum = T(0);
      for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) sum += grad_e[k * heads + h];
      grads.grad_u[i * heads + h] = sum;
    }
  // grad_b[j,h] = Σ_{k : col_k = j} grad_e[k,h]: each source sums its CSC column, in edge-id order.
  const auto col_ptr = g.col_ptr();
  const auto edge_perm = g.edge_perm();
#pragma omp parallel for schedule(dynamic, detail::kRowChunk) if (worth_parallel(g.num_edges() * heads))
  for (index_t j = 0; j < g.n_src(); ++j)
    for (index_t h = 0; h < heads; ++h) {
      T sum = T(0);
      for (index_t p = col_ptr[j]; p < col_ptr[j + 1]; ++p) sum += grad_e[edge_perm[p] * heads + h];
      grads.grad_v[j * heads + h] = sum;
    }
  return grads;
}

#define GNNCHECK_INSTANTIATE(T)                                                                                      \
  template DenseTensor<T> sddmm_dot_forward<T>(const Graph&, const DenseTensor<T>&, const DenseTensor<T>&, index_t); \
  template SddmmGrads<T> sddmm_dot_backward<T>(const Graph&, const DenseTensor<T>&, const DenseTensor<T>&, index_t,  \
                                               const DenseTensor<T>&);                                              \
  template DenseTensor<T> sddmm_add_forward<T>(const Graph&, const DenseTensor<T>&, const DenseTensor<T>&);          \
  template SddmmGrads<T> sddmm_add_backward<T>(const Graph&, const DenseTensor<T>&);
GNNCHECK_INSTANTIATE(double)
GNNCHECK_INSTANTIATE(float)
#undef GNNCHECK_INSTANTIATE

}  // namespace gnncheck::oracle
