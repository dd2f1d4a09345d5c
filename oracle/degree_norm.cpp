#include "oracle/degree_norm.h"

#include <cmath>

#include <fmt/format.h>

#include "oracle/sparse_kernels.h"

namespace gnncheck::oracle {

std::string_view to_string(DegreeNorm norm) {
  switch (norm) {
    case DegreeNorm::symmetric: return "symmetric";
    case DegreeNorm::row_mean: return "row_mean";
  }
  return "unknown";
}

DegreeNorm parse_degree_norm(std::string_view name) {
  for (DegreeNorm norm : {DegreeNorm::symmetric, DegreeNorm::row_mean})
    if (to_string(norm) == name) return norm;
  throw InputError(fmt::format("unknown degree normalization '{}': expected symmetric or row_mean", name));
}

std::string_view to_string(SourceDegree source_degree) {
  switch (source_degree) {
    case SourceDegree::out: return "out";
    case SourceDegree::in: return "in";
  }
  return "unknown";
}

SourceDegree parse_source_degree(std::string_view name) {
  for (SourceDegree d : {SourceDegree::out, SourceDegree::in})
    if (to_string(d) == name) return d;
  throw InputError(fmt::format("unknown source degree '{}': expected out or in", name));
}

std::string_view to_string(ZeroDegree zero_degree) {
  switch (zero_degree) {
    case ZeroDegree::zero: return "zero";
    case ZeroDegree::one: return "one";
  }
  return "unknown";
}

ZeroDegree parse_zero_degree(std::string_view name) {
  for (ZeroDegree d : {ZeroDegree::zero, ZeroDegree::one})
    if (to_string(d) == name) return d;
  throw InputError(fmt::format("unknown zero_degree '{}': expected zero or one", name));
}

template <class T>
DenseTensor<T> degree_norm_edge_values(const Graph& g, DegreeNorm norm, SourceDegree source_degree, ZeroDegree zero_degree) {
  DenseTensor<T> w({g.num_edges(), 1});
  const auto row_of_edge = g.row_of_edge();
  const auto col_idx = g.col_idx();
  // Every edge's row and column have degree ≥ 1 (the edge itself), so no factor divides by zero;
  // a source's in-degree may be 0: factor 0 (PyG's gcn_norm) or degree 1 (ZeroDegree::one).
  auto source_degree_of = [&](index_t j) -> index_t {
    if (source_degree == SourceDegree::out) return g.out_degree(j);
    const index_t d = j < g.n_dst() ? g.in_degree(j) : 0;
    return d == 0 && zero_degree == ZeroDegree::one ? 1 : d;
  };
#pragma omp parallel for schedule(static) if (worth_parallel(g.num_edges()))
  for (index_t e = 0; e < g.num_edges(); ++e) {
    const T in_degree = static_cast<T>(g.in_degree(row_of_edge[e]));
    if (norm == DegreeNorm::symmetric) {
      const index_t d_src = source_degree_of(col_idx[e]);
      w[e] = d_src == 0 ? T(0) : T(1) / std::sqrt(in_degree * static_cast<T>(d_src));
    } else {
      w[e] = T(1) / in_degree;
    }
  }
  return w;
}

template <class T>
DenseTensor<T> normalized_spmm_forward(const Graph& g, DegreeNorm norm, const DenseTensor<T>& x,
                                       SourceDegree source_degree, ZeroDegree zero_degree) {
  require_rows(x, g.n_src(), fmt::format("normalized_spmm ({}): input x (one row per source node)", to_string(norm)));
  const DenseTensor<T> w = degree_norm_edge_values<T>(g, norm, source_degree, zero_degree);
  DenseTensor<T> y(shape_with_rows(x, g.n_dst()));
  detail::aggregate_rows<T>(g, w.data(), 1, x.data(), x.row_size(), y.data());
  return y;
}

template <class T>
DenseTensor<T> normalized_spmm_backward(const Graph& g, DegreeNorm norm, const DenseTensor<T>& grad_y,
                                        SourceDegree source_degree, ZeroDegree zero_degree) {
  require_rows(grad_y, g.n_dst(),
               fmt::format("normalized_spmm ({}) backward: grad_y (one row per destination node)", to_string(norm)));
  const DenseTensor<T> w = degree_norm_edge_values<T>(g, norm, source_degree, zero_degree);
  DenseTensor<T> grad_x(shape_with_rows(grad_y, g.n_src()));
  // grad_X = Âᵀ · grad_Y: the same edge values, gathered by column (CSC).
  detail::aggregate_columns<T>(g, w.data(), 1, grad_y.data(), grad_y.row_size(), grad_x.data());
  return grad_x;
}

#define GNNCHECK_INSTANTIATE(T)                                                                          \
  template DenseTensor<T> degree_norm_edge_values<T>(const Graph&, DegreeNorm, SourceDegree, ZeroDegree);                    \
  template DenseTensor<T> normalized_spmm_forward<T>(const Graph&, DegreeNorm, const DenseTensor<T>&, SourceDegree, ZeroDegree);  \
  template DenseTensor<T> normalized_spmm_backward<T>(const Graph&, DegreeNorm, const DenseTensor<T>&, SourceDegree, ZeroDegree);
GNNCHECK_INSTANTIATE(double)
GNNCHECK_INSTANTIATE(float)
#undef GNNCHECK_INSTANTIATE

}  // namespace gnncheck::oracle
