#include "oracle/segment_mm.h"

#include <fmt/format.h>

#include "core/parallel.h"
#include "oracle/sparse_kernels.h"

namespace gnncheck::oracle {
namespace {

struct Widths {
  index_t in;
  index_t out;
};

template <class T>
Widths check_operands(const Graph& g, const DenseTensor<T>& x, const DenseTensor<T>& w, const char* op) {
  if (x.rank() != 2)
    throw InputError(fmt::format("{}: input x must be [E, in_features] (one row per edge), got shape {}", op, x.shape()));
  require_rows(x, g.num_edges(), fmt::format("{}: input x (one row per edge)", op));
  if (w.rank() != 3)
    throw InputError(fmt::format("{}: input w must be [n_dst, in_features, out_features] (one matrix per segment), "
                                 "got shape {}",
                                 op, w.shape()));
  require_rows(w, g.n_dst(), fmt::format("{}: input w (one matrix per segment, i.e. per destination)", op));
  if (w.shape()[1] != x.shape()[1])
    throw InputError(fmt::format("{}: x has {} features per row but w's matrices have {} rows; they must match", op,
                                 x.shape()[1], w.shape()[1]));
  return {w.shape()[1], w.shape()[2]};
}

}  // namespace

template <class T>
DenseTensor<T> segment_mm_forward(const Graph& g, const DenseTensor<T>& x, const DenseTensor<T>& w) {
  const Widths n = check_operands(g, x, w, "segment_mm");
  DenseTensor<T> y({g.num_edges(), n.out});
  const auto row_ptr = g.row_ptr();
#pragma omp parallel for schedule(dynamic, detail::kRowChunk) if (worth_parallel(g.num_edges() * n.in * n.out))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const T* wi = w.data() + i * n.in * n.out;
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      for (index_t o = 0; o < n.out; ++o) {
        T sum = T(0);
        for (index_t f = 0; f < n.in; ++f) sum += x[k * n.in + f] * wi[f * n.out + o];
        y[k * n.out + o] = sum;
      }
  }
  return y;
}

template <class T>
SegmentMmGrads<T> segment_mm_backward(const Graph& g, const DenseTensor<T>& x, const DenseTensor<T>& w,
                                      const DenseTensor<T>& grad_y) {
  const Widths n = check_operands(g, x, w, "segment_mm backward");
  require_shape(grad_y, {g.num_edges(), n.out}, "segment_mm backward: grad_y (one row of out_features per edge)");
  SegmentMmGrads<T> grads{DenseTensor<T>(x.shape()), DenseTensor<T>(w.shape())};
  const auto row_ptr = g.row_ptr();
#pragma omp parallel for schedule(dynamic, detail::kRowChunk) if (worth_parallel(g.num_edges() * n.in * n.out))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const T* wi = w.data() + i * n.in * n.out;
    T* gwi = grads.grad_w.data() + i * n.in * n.out;
    // grad_x[k, f] = Σ_o grad_y[k, o] · w[i, f, o]  (w[i]ᵀ)
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      for (index_t f = 0; f < n.in; ++f) {
        T sum = T(0);
        for (index_t o = 0; o < n.out; ++o) sum += grad_y[k * n.out + o] * wi[f * n.out + o];
        grads.grad_x[k * n.in + f] = sum;
      }
    // grad_w[i, f, o] = Σ_{k ∈ segment i} x[k, f] · grad_y[k, o], in edge-id order.
    for (index_t f = 0; f < n.in; ++f)
      for (index_t o = 0; o < n.out; ++o) {
        T sum = T(0);
        for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) sum += x[k * n.in + f] * grad_y[k * n.out + o];
        gwi[f * n.out + o] = sum;
      }
  }
  return grads;
}

#define GNNCHECK_INSTANTIATE(T)                                                                              \
  template DenseTensor<T> segment_mm_forward<T>(const Graph&, const DenseTensor<T>&, const DenseTensor<T>&); \
  template SegmentMmGrads<T> segment_mm_backward<T>(const Graph&, const DenseTensor<T>&, const DenseTensor<T>&, \
                                                    const DenseTensor<T>&);
GNNCHECK_INSTANTIATE(double)
GNNCHECK_INSTANTIATE(float)
#undef GNNCHECK_INSTANTIATE

}  // namespace gnncheck::oracle
