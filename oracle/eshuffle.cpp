#include "oracle/eshuffle.h"

#include <algorithm>

#include <fmt/format.h>

#include "oracle/sparse_kernels.h"

namespace gnncheck::oracle {
namespace {

// out[p] = x[edge_perm[p]] (gather) or out[edge_perm[p]] = x[p] (scatter); whole rows move. Both
// write each output row exactly once (edge_perm is a permutation), so any thread order gives the
// same bits.
template <class T>
DenseTensor<T> permute_rows(const Graph& g, const DenseTensor<T>& x, bool gather, const char* what) {
  require_rows(x, g.num_edges(), fmt::format("{} (one row per edge)", what));
  const index_t width = x.row_size();
  DenseTensor<T> out(x.shape());
  const auto edge_perm = g.edge_perm();
#pragma omp parallel for schedule(static) if (worth_parallel(g.num_edges() * width))
  for (index_t p = 0; p < g.num_edges(); ++p) {
    const T* from = gather ? x.row(edge_perm[p]) : x.row(p);
    T* to = gather ? out.row(p) : out.row(edge_perm[p]);
    std::copy(from, from + width, to);
  }
  return out;
}

}  // namespace

template <class T>
DenseTensor<T> eshuffle_forward(const Graph& g, const DenseTensor<T>& x) {
  return permute_rows(g, x, /*gather=*/true, "eshuffle: input x");
}
template <class T>
DenseTensor<T> eshuffle_backward(const Graph& g, const DenseTensor<T>& grad_out) {
  return permute_rows(g, grad_out, /*gather=*/false, "eshuffle backward: grad_out");
}
template <class T>
DenseTensor<T> eshuffle_inverse_forward(const Graph& g, const DenseTensor<T>& x) {
  return permute_rows(g, x, /*gather=*/false, "eshuffle_inverse: input x");
}
template <class T>
DenseTensor<T> eshuffle_inverse_backward(const Graph& g, const DenseTensor<T>& grad_out) {
  return permute_rows(g, grad_out, /*gather=*/true, "eshuffle_inverse backward: grad_out");
}

#define GNNCHECK_INSTANTIATE(T)                                                               \
  template DenseTensor<T> eshuffle_forward<T>(const Graph&, const DenseTensor<T>&);           \
  template DenseTensor<T> eshuffle_backward<T>(const Graph&, const DenseTensor<T>&);          \
  template DenseTensor<T> eshuffle_inverse_forward<T>(const Graph&, const DenseTensor<T>&);   \
  template DenseTensor<T> eshuffle_inverse_backward<T>(const Graph&, const DenseTensor<T>&);
GNNCHECK_INSTANTIATE(double)
GNNCHECK_INSTANTIATE(float)
#undef GNNCHECK_INSTANTIATE

}  // namespace gnncheck::oracle
