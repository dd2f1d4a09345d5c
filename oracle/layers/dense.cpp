#include "oracle/layers/dense.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Core>

#include "oracle/sparse_kernels.h"

namespace gnncheck::oracle::layers {
namespace {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <class T>
Eigen::Map<const Matrix<T>> view(const DenseTensor<T>& t) {
  return {t.data(), t.rows(), t.row_size()};
}
template <class T>
Eigen::Map<Matrix<T>> view(DenseTensor<T>& t) {
  return {t.data(), t.rows(), t.row_size()};
}

void require_same_size(index_t a, index_t b, const char* op, const char* what) {
  if (a != b) throw InputError(fmt::format("{}: {} differ ({} vs {})", op, what, a, b));
}

// Node features are often bag-of-words vectors, ~99% exact zeros (Cora: 1.3% nonzero). A product
// whose left operand is mostly zeros skips them: the result is the same sum without its exactly-zero
// terms, which is also what the dense product computes — unless the right operand holds an Inf or
// NaN (0·Inf = NaN), so the shortcut is taken only when every value there is finite.
template <class T>
bool use_zero_skipping(const DenseTensor<T>& a, const DenseTensor<T>& b) {
  if (a.size() < 4096) return false;  // small products: the dense kernel is as fast
  index_t zeros = 0;
  for (const T& v : a.values()) zeros += v == T(0);
  if (zeros * 10 < a.size() * 9) return false;
  for (const T& v : b.values())
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

template <class T>
DenseTensor<T> matmul(const DenseTensor<T>& a, const DenseTensor<T>& b) {
  require_same_size(a.row_size(), b.rows(), "matmul", "inner dimensions");
  DenseTensor<T> out({a.rows(), b.row_size()});
  if (use_zero_skipping(a, b)) {
    // out[i, :] = Σ_k a[i, k] · b[k, :] over the nonzero a[i, k], k increasing; rows are independent.
    const index_t inner = a.row_size(), width = b.row_size();
#pragma omp parallel for schedule(static)
    for (index_t i = 0; i < a.rows(); ++i) {
      T* y = out.row(i);
      const T* x = a.row(i);
      for (index_t k = 0; k < inner; ++k) {
        if (x[k] == T(0)) continue;
        const T* w = b.row(k);
        for (index_t c = 0; c < width; ++c) y[c] += x[k] * w[c];
      }
    }
    return out;
  }
  view(out).noalias() = view(a) * view(b);
  return out;
}

template <class T>
DenseTensor<T> matmul_at_b(const DenseTensor<T>& a, const DenseTensor<T>& b) {
  require_same_size(a.rows(), b.rows(), "matmul_at_b", "row counts");
  DenseTensor<T> out({a.row_size(), b.row_size()});
  if (use_zero_skipping(a, b)) {
    // out[k, :] = Σ_i a[i, k] · b[i, :] over the nonzero a[i, k], i increasing.
    const index_t inner = a.row_size(), width = b.row_size();
    for (index_t i = 0; i < a.rows(); ++i) {
      const T* x = a.row(i);
      const T* g = b.row(i);
      for (index_t k = 0; k < inner; ++k) {
        if (x[k] == T(0)) continue;
        T* y = out.row(k);
        for (index_t c = 0; c < width; ++c) y[c] += x[k] * g[c];
      }
    }
    return out;
  }
  // Eigen parallelises a product over its result's columns and synchronises its threads once per
  // block of the inner dimension: for xᵀ·g with a 16×16 result and 10^6 rows that is thousands of
  // spin-waits, 50–150× slower than one thread on a shared machine. The rows are cut instead into
  // row_groups (dense.h); each group's product runs on one thread (Eigen does not nest inside a
  // parallel region) and the partial products are added in group order. One group (< 8192 rows)
  // is Eigen's own product, as before.
  const index_t rows = a.rows();
  const index_t groups = row_groups(rows);
  if (groups == 1) {
    view(out).noalias() = view(a).transpose() * view(b);
    return out;
  }
  std::vector<Matrix<T>> partial(static_cast<size_t>(groups));
#pragma omp parallel for schedule(dynamic, 1)
  for (index_t k = 0; k < groups; ++k) {
    const index_t begin = rows * k / groups, end = rows * (k + 1) / groups;
    partial[static_cast<size_t>(k)].noalias() = view(a).middleRows(begin, end - begin).transpose() * view(b).middleRows(begin, end - begin);
  }
  auto result = view(out);
  for (const auto& p : partial) result += p;
  return out;
}

template <class T>
DenseTensor<T> matmul_a_bt(const DenseTensor<T>& a, const DenseTensor<T>& b) {
  require_same_size(a.row_size(), b.row_size(), "matmul_a_bt", "row sizes");
  DenseTensor<T> out({a.rows(), b.rows()});
  view(out).noalias() = view(a) * view(b).transpose();
  return out;
}

template <class T>
void add_bias(DenseTensor<T>& y, const DenseTensor<T>& bias) {
  require_same_size(y.row_size(), bias.size(), "add_bias", "row size and bias length");
  const index_t width = y.row_size();
#pragma omp parallel for schedule(static) if (worth_parallel(y.size()))
  for (index_t i = 0; i < y.rows(); ++i) {
    T* row = y.row(i);
    for (index_t c = 0; c < width; ++c) row[c] += bias[c];
  }
}

template <class T>
DenseTensor<T> column_sums(const DenseTensor<T>& g) {
  const index_t width = g.row_size();
  DenseTensor<T> out({width});
  for (index_t i = 0; i < g.rows(); ++i) {
    const T* row = g.row(i);
    for (index_t c = 0; c < width; ++c) out[c] += row[c];
  }
  return out;
}

template <class T>
void add_scaled(DenseTensor<T>& y, T alpha, const DenseTensor<T>& x) {
  require_same_size(y.size(), x.size(), "add_scaled", "sizes");
  for (index_t i = 0; i < y.size(); ++i) y[i] += alpha * x[i];
}

template <class T>
DenseTensor<T> first_rows(const DenseTensor<T>& x, index_t n) {
  if (n > x.rows()) throw InputError(fmt::format("first_rows: asked for {} rows of a tensor with {}", n, x.rows()));
  std::vector<T> values(x.values().begin(), x.values().begin() + n * x.row_size());
  return DenseTensor<T>(shape_with_rows(x, n), std::move(values));
}

template <class T>
void add_into_first_rows(DenseTensor<T>& y, T alpha, const DenseTensor<T>& x) {
  require_same_size(y.row_size(), x.row_size(), "add_into_first_rows", "row sizes");
  if (x.rows() > y.rows())
    throw InputError(fmt::format("add_into_first_rows: {} rows do not fit into {}", x.rows(), y.rows()));
  for (index_t i = 0; i < x.size(); ++i) y[i] += alpha * x[i];
}

template <class T>
DenseTensor<T> relu(const DenseTensor<T>& z) {
  DenseTensor<T> out = z;
  for (auto& v : out.values()) v = v > T(0) ? v : T(0);
  return out;
}

namespace {

// Whether z's derivative is the positive side's: z > 0 (z ≥ 0 for KinkSide::right), the other way
// round for a flipped unit (KinkFlips: the side opposite to the one z was computed on).
template <class T>
bool positive_side(T z, KinkSide side, std::span<const index_t> flipped, index_t i) {
  const bool positive = side == KinkSide::left ? z > T(0) : !(z < T(0));
  return flipped.empty() || !std::binary_search(flipped.begin(), flipped.end(), i) ? positive : !positive;
}

}  // namespace

template <class T>
DenseTensor<T> relu_backward(const DenseTensor<T>& z, const DenseTensor<T>& grad, KinkSide side,
                             std::span<const index_t> flipped) {
  require_same_size(z.size(), grad.size(), "relu_backward", "sizes");
  DenseTensor<T> out = grad;
  for (index_t i = 0; i < z.size(); ++i)
    if (!positive_side(z[i], side, flipped, i)) out[i] = T(0);
  return out;
}

template <class T>
DenseTensor<T> leaky_relu(const DenseTensor<T>& z, T negative_slope) {
  DenseTensor<T> out = z;
  // Element-wise (one value per edge and head for GAT's logits: 10^8 at Reddit scale): any thread
  // order gives the same values.
#pragma omp parallel for schedule(static) if (worth_parallel(out.size()))
  for (index_t i = 0; i < out.size(); ++i) out[i] = out[i] > T(0) ? out[i] : negative_slope * out[i];
  return out;
}

template <class T>
DenseTensor<T> leaky_relu_backward(const DenseTensor<T>& z, T negative_slope, const DenseTensor<T>& grad,
                                   KinkSide side, std::span<const index_t> flipped) {
  require_same_size(z.size(), grad.size(), "leaky_relu_backward", "sizes");
  DenseTensor<T> out = grad;
#pragma omp parallel for schedule(static) if (worth_parallel(out.size()))
  for (index_t i = 0; i < z.size(); ++i)
    if (!positive_side(z[i], side, flipped, i)) out[i] *= negative_slope;
  return out;
}

#define GNNCHECK_INSTANTIATE_DENSE(T)                                                                  \
  template DenseTensor<T> matmul(const DenseTensor<T>&, const DenseTensor<T>&);                         \
  template DenseTensor<T> matmul_at_b(const DenseTensor<T>&, const DenseTensor<T>&);                    \
  template DenseTensor<T> matmul_a_bt(const DenseTensor<T>&, const DenseTensor<T>&);                    \
  template void add_bias(DenseTensor<T>&, const DenseTensor<T>&);                                       \
  template DenseTensor<T> column_sums(const DenseTensor<T>&);                                           \
  template void add_scaled(DenseTensor<T>&, T, const DenseTensor<T>&);                                  \
  template DenseTensor<T> first_rows(const DenseTensor<T>&, index_t);                                   \
  template void add_into_first_rows(DenseTensor<T>&, T, const DenseTensor<T>&);                         \
  template DenseTensor<T> relu(const DenseTensor<T>&);                                                  \
  template DenseTensor<T> relu_backward(const DenseTensor<T>&, const DenseTensor<T>&, KinkSide, std::span<const index_t>);                  \
  template DenseTensor<T> leaky_relu(const DenseTensor<T>&, T);                                         \
  template DenseTensor<T> leaky_relu_backward(const DenseTensor<T>&, T, const DenseTensor<T>&, KinkSide, std::span<const index_t>);

GNNCHECK_INSTANTIATE_DENSE(double)
GNNCHECK_INSTANTIATE_DENSE(float)

}  // namespace gnncheck::oracle::layers
