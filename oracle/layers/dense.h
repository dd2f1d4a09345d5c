// gnncheck/oracle/layers/dense.h — the dense algebra the oracle's layers are built from.
//
// Node tensors are viewed as rows() × row_size() matrices and weights as [in, out] matrices, both
// row-major. Products go through Eigen (deterministic for any thread count: Eigen splits the output,
// never a sum; matmul_at_b over more than 8192 rows sums fixed row groups' products in group order),
// except that matmul and matmul_at_b skip the exact zeros of a left operand that is
// ≥ 90% zeros (bag-of-words features) when the right operand is finite — the same sum without its
// zero terms. Each helper is instantiated for double (the oracle) and float (its float32 twin).
//
//   Tensor h = layers::matmul(x, weight);          // [n, in] · [in, out] -> [n, out]
//   Tensor grad_w = layers::matmul_at_b(x, grad_h); // xᵀ · grad_h         -> [in, out]
//   Tensor grad_x = layers::matmul_a_bt(grad_h, weight);
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include "core/tensor.h"
#include "oracle/layers/kink_side.h"

namespace gnncheck::oracle::layers {

// Sums over the rows of a tall operand (matmul_at_b, GAT's attention gradients) run over this many
// fixed row groups — at least 4096 rows each, at most 64 — each summed in row order, the groups
// added in group order: the result depends on the shape alone, never on the thread count.
inline index_t row_groups(index_t rows) { return std::clamp<index_t>(rows / 4096, 1, 64); }

// a · b: a is [m, k] (any trailing shape flattened), b is [k, n] -> [m, n].
template <class T> DenseTensor<T> matmul(const DenseTensor<T>& a, const DenseTensor<T>& b);
// aᵀ · b: a is [m, k], b is [m, n] -> [k, n] (the weight gradient of a product).
template <class T> DenseTensor<T> matmul_at_b(const DenseTensor<T>& a, const DenseTensor<T>& b);
// a · bᵀ: a is [m, n], b is [k, n] -> [m, k] (the input gradient of a product).
template <class T> DenseTensor<T> matmul_a_bt(const DenseTensor<T>& a, const DenseTensor<T>& b);

// y[i, :] += bias for every row i; bias has y.row_size() values.
template <class T> void add_bias(DenseTensor<T>& y, const DenseTensor<T>& bias);
// Σ_i g[i, :] as a tensor of shape [g.row_size()] (the gradient of add_bias w.r.t. the bias).
template <class T> DenseTensor<T> column_sums(const DenseTensor<T>& g);

// y += alpha · x (same number of values).
template <class T> void add_scaled(DenseTensor<T>& y, T alpha, const DenseTensor<T>& x);
// The first n rows of x (a destination-node view of a source-node tensor).
template <class T> DenseTensor<T> first_rows(const DenseTensor<T>& x, index_t n);
// y[i, :] += alpha · x[i, :] for the first x.rows() rows of y.
template <class T> void add_into_first_rows(DenseTensor<T>& y, T alpha, const DenseTensor<T>& x);

// |x| element by element: the magnitudes the kink hooks and the tolerance floors evaluate a layer on.
template <class T> DenseTensor<T> absolute(DenseTensor<T> x) {
  for (T& v : x.values()) v = std::abs(v);
  return x;
}

// ReLU and LeakyReLU with their backwards (taken at the pre-activation z; at z = 0 the side's
// derivative: left counts the kink as negative, as PyTorch does).
template <class T> DenseTensor<T> relu(const DenseTensor<T>& z);
// `flipped`: sorted flat indices of z that take the other side (KinkFlips).
template <class T>
DenseTensor<T> relu_backward(const DenseTensor<T>& z, const DenseTensor<T>& grad, KinkSide side = KinkSide::left,
                             std::span<const index_t> flipped = {});
template <class T> DenseTensor<T> leaky_relu(const DenseTensor<T>& z, T negative_slope);
template <class T>
DenseTensor<T> leaky_relu_backward(const DenseTensor<T>& z, T negative_slope, const DenseTensor<T>& grad,
                                   KinkSide side = KinkSide::left, std::span<const index_t> flipped = {});

// Throws InputError "<what>: expected shape [..], got [..]" unless w is exactly [rows, cols].
template <class T>
void require_matrix(const DenseTensor<T>& w, index_t rows, index_t cols, const std::string& what) {
  require_shape(w, {rows, cols}, what);
}

}  // namespace gnncheck::oracle::layers
