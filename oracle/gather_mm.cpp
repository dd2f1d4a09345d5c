#include "oracle/gather_mm.h"

#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/parallel.h"

namespace gnncheck::oracle {
namespace {

struct Operands {
  index_t rows, in, out, relations;
  std::vector<index_t> type;  // per row
};

template <class T>
Operands check_operands(const DenseTensor<T>& x, const DenseTensor<T>& types, const DenseTensor<T>& w, const char* op) {
  if (x.rank() != 2) throw InputError(fmt::format("{}: input x must be [rows, in_features], got shape {}", op, x.shape()));
  if (w.rank() != 3)
    throw InputError(fmt::format("{}: weight must be [relations, in_features, out_features] (one matrix per type), got shape {}",
                                 op, w.shape()));
  if (w.shape()[1] != x.shape()[1])
    throw InputError(fmt::format("{}: x has {} features per row but the weight's matrices have {} rows; they must match", op,
                                 x.shape()[1], w.shape()[1]));
  if (types.rank() != 1 || types.shape()[0] != x.shape()[0])
    throw InputError(fmt::format("{}: the types must be [rows] (one per row of x, {} rows), got shape {}", op, x.shape()[0],
                                 types.shape()));
  Operands n{x.shape()[0], w.shape()[1], w.shape()[2], w.shape()[0], std::vector<index_t>(types.size())};
  for (index_t k = 0; k < n.rows; ++k) {
    const double t = static_cast<double>(types[k]);
    if (!(t >= 0 && t < static_cast<double>(n.relations)) || t != static_cast<double>(static_cast<index_t>(t)))
      throw InputError(fmt::format("{}: row {} has type {:.17g}; types are integers in [0, {}) (one per weight matrix)", op, k, t,
                                   n.relations));
    n.type[k] = static_cast<index_t>(t);
  }
  return n;
}

}  // namespace

template <class T>
DenseTensor<T> gather_mm_forward(const DenseTensor<T>& x, const DenseTensor<T>& types, const DenseTensor<T>& w) {
  const Operands n = check_operands(x, types, w, "gather_mm");
  DenseTensor<T> y({n.rows, n.out});
#pragma omp parallel for schedule(static) if (worth_parallel(n.rows * n.in * n.out))
  for (index_t k = 0; k < n.rows; ++k) {
    const T* wk = w.data() + n.type[k] * n.in * n.out;
    for (index_t o = 0; o < n.out; ++o) {
      T sum = T(0);
      for (index_t f = 0; f < n.in; ++f) sum += x[k * n.in + f] * wk[f * n.out + o];
      y[k * n.out + o] = sum;
    }
  }
  return y;
}

template <class T>
GatherMmGrads<T> gather_mm_backward(const DenseTensor<T>& x, const DenseTensor<T>& types, const DenseTensor<T>& w,
                                    const DenseTensor<T>& grad_y) {
  const Operands n = check_operands(x, types, w, "gather_mm backward");
  require_shape(grad_y, {n.rows, n.out}, "gather_mm backward: grad_y (one row of out_features per row of x)");
  GatherMmGrads<T> grads{DenseTensor<T>(x.shape()), DenseTensor<T>(w.shape())};
  // grad_x[k, f] = Σ_o grad_y[k, o] · w[t_k, f, o]  (w[t_k]ᵀ)
#pragma omp parallel for schedule(static) if (worth_parallel(n.rows * n.in * n.out))
  for (index_t k = 0; k < n.rows; ++k) {
    const T* wk = w.data() + n.type[k] * n.in * n.out;
    for (index_t f = 0; f < n.in; ++f) {
      T sum = T(0);
      for (index_t o = 0; o < n.out; ++o) sum += grad_y[k * n.out + o] * wk[f * n.out + o];
      grads.grad_x[k * n.in + f] = sum;
    }
  }
  // grad_w[r, f, o] = Σ_{k: t_k = r} x[k, f] · grad_y[k, o], rows in order; one relation per thread.
#pragma omp parallel for schedule(static) if (worth_parallel(n.rows * n.in * n.out))
  for (index_t r = 0; r < n.relations; ++r) {
    T* gw = grads.grad_w.data() + r * n.in * n.out;
    for (index_t k = 0; k < n.rows; ++k) {
      if (n.type[k] != r) continue;
      for (index_t f = 0; f < n.in; ++f)
        for (index_t o = 0; o < n.out; ++o) gw[f * n.out + o] += x[k * n.in + f] * grad_y[k * n.out + o];
    }
  }
  return grads;
}

#define GNNCHECK_INSTANTIATE(T)                                                                                           \
  template DenseTensor<T> gather_mm_forward<T>(const DenseTensor<T>&, const DenseTensor<T>&, const DenseTensor<T>&); \
  template GatherMmGrads<T> gather_mm_backward<T>(const DenseTensor<T>&, const DenseTensor<T>&, const DenseTensor<T>&, \
                                                  const DenseTensor<T>&);
GNNCHECK_INSTANTIATE(double)
GNNCHECK_INSTANTIATE(float)
#undef GNNCHECK_INSTANTIATE

}  // namespace gnncheck::oracle
