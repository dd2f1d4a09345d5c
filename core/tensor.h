// gnncheck/core/tensor.h — the dense tensor every op and system exchanges.
//
// DenseTensor<T> is row-major with an explicit shape. Node tensors are [N, H, C] or [N, H·C]
// (stored alike, N rows of H·C values); edge tensors are [E, H] in edge-id (CSR) order.
// `rows()` is the leading dimension and `row_size()` the product of the others, which is all the
// sparse ops need. Tensor = float64 (the oracle's type); TensorF = float32.
//
//   gnncheck::Tensor x({n_src, 16});      // zero-filled
//   x.at(3, 5) = 1.0;                     // row 3, column 5 of the flattened row
//   auto y = gnncheck::cast<float>(x);    // TensorF
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace gnncheck {

// Indices and sizes are 64-bit everywhere in the oracle: graphs beyond 2^31 edges are in scope.
using index_t = std::int64_t;

// Total element count of `shape`; refuses negative dimensions and products that overflow.
inline index_t shape_size(const std::vector<index_t>& shape) {
  index_t n = 1;
  for (index_t d : shape) {
    if (d < 0) throw InputError(fmt::format("tensor shape {} has a negative dimension", shape));
    if (d != 0 && n > INT64_MAX / d) throw InputError(fmt::format("tensor shape {} overflows 64 bits", shape));
    n *= d;
  }
  return n;
}

// Told of a tensor's fresh memory (its data and size in bytes) before the first touch; nullptr: none.
// A program may set one to choose how the memory is backed (the scale check asks for huge pages,
// scale/huge_pages.h); it must not change a value.
using FreshMemoryHook = void (*)(void* data, std::size_t bytes);

namespace detail {
inline std::atomic<FreshMemoryHook> fresh_memory_hook{nullptr};

// n values in fresh memory, set by fill(vector) after the hook (if any) saw the allocation: the fill
// is the memory's first touch.
template <class T, class Fill>
std::vector<T> fresh_values(size_t n, Fill fill) {
  std::vector<T> v;
  v.reserve(n);
  if (const FreshMemoryHook hook = fresh_memory_hook.load(std::memory_order_acquire); hook && n != 0)
    hook(v.data(), n * sizeof(T));
  fill(v);
  return v;
}
}  // namespace detail

// Sets the fresh-memory hook for the whole process (nullptr removes it); returns the one it replaces.
inline FreshMemoryHook set_fresh_memory_hook(FreshMemoryHook hook) {
  return detail::fresh_memory_hook.exchange(hook, std::memory_order_acq_rel);
}

template <class T>
class DenseTensor {
 public:
  using value_type = T;

  DenseTensor() = default;
  explicit DenseTensor(std::vector<index_t> shape, T fill = T{}) : shape_(std::move(shape)) {
    const auto n = static_cast<size_t>(shape_size(shape_));
    data_ = detail::fresh_values<T>(n, [&](std::vector<T>& v) { v.assign(n, fill); });
  }
  DenseTensor(std::vector<index_t> shape, std::vector<T> values) : shape_(std::move(shape)), data_(std::move(values)) {
    if (static_cast<index_t>(data_.size()) != shape_size(shape_))
      throw InputError(fmt::format("tensor of shape {} needs {} values, got {}", shape_, shape_size(shape_), data_.size()));
  }
  // A copy is fresh memory too (the tolerance model copies whole cases to reorder them).
  DenseTensor(const DenseTensor& other)
      : shape_(other.shape_), data_(detail::fresh_values<T>(other.data_.size(), [&](std::vector<T>& v) {
          v.assign(other.data_.begin(), other.data_.end());
        })) {}
  DenseTensor& operator=(const DenseTensor& other) {
    if (this != &other) *this = DenseTensor(other);
    return *this;
  }
  DenseTensor(DenseTensor&&) noexcept = default;
  DenseTensor& operator=(DenseTensor&&) noexcept = default;
  ~DenseTensor() = default;

  const std::vector<index_t>& shape() const { return shape_; }
  index_t rank() const { return static_cast<index_t>(shape_.size()); }
  index_t dim(index_t i) const { return shape_.at(static_cast<size_t>(i)); }
  index_t size() const { return static_cast<index_t>(data_.size()); }
  bool empty() const { return data_.empty(); }
  // Leading dimension (1 for a rank-0 tensor) and the number of values per leading index.
  index_t rows() const { return shape_.empty() ? 1 : shape_[0]; }
  index_t row_size() const {
    index_t n = 1;
    for (size_t i = 1; i < shape_.size(); ++i) n *= shape_[i];
    return n;
  }

  T* data() { return data_.data(); }
  const T* data() const { return data_.data(); }
  T* row(index_t r) { return data_.data() + r * row_size(); }
  const T* row(index_t r) const { return data_.data() + r * row_size(); }
  T& operator[](index_t i) { return data_[static_cast<size_t>(i)]; }
  const T& operator[](index_t i) const { return data_[static_cast<size_t>(i)]; }
  // Element (r, c) of the rows() × row_size() view.
  T& at(index_t r, index_t c) { return data_[static_cast<size_t>(r * row_size() + c)]; }
  const T& at(index_t r, index_t c) const { return data_[static_cast<size_t>(r * row_size() + c)]; }
  std::vector<T>& values() { return data_; }
  const std::vector<T>& values() const { return data_; }

  friend bool operator==(const DenseTensor&, const DenseTensor&) = default;

 private:
  std::vector<index_t> shape_;
  std::vector<T> data_;
};

using Tensor = DenseTensor<double>;
using TensorF = DenseTensor<float>;

template <class To, class From>
DenseTensor<To> cast(const DenseTensor<From>& t) {
  const std::vector<From>& from = t.values();
  return DenseTensor<To>(t.shape(), detail::fresh_values<To>(from.size(), [&](std::vector<To>& v) {
                           v.assign(from.begin(), from.end());
                         }));
}

// Throws InputError "<what>: expected shape [..], got [..]" unless `t` has exactly `expected`.
template <class T>
void require_shape(const DenseTensor<T>& t, const std::vector<index_t>& expected, const std::string& what) {
  if (t.shape() != expected)
    throw InputError(fmt::format("{}: expected shape {}, got {}", what, expected, t.shape()));
}

// Throws InputError unless `t` has `rows` rows (any trailing shape).
template <class T>
void require_rows(const DenseTensor<T>& t, index_t rows, const std::string& what) {
  if (t.rank() < 1 || t.rows() != rows)
    throw InputError(fmt::format("{}: expected {} rows, got shape {}", what, rows, t.shape()));
}

// Shape of a node tensor with `rows` rows and the same trailing shape as `like`.
template <class T>
std::vector<index_t> shape_with_rows(const DenseTensor<T>& like, index_t rows) {
  std::vector<index_t> s = like.shape();
  if (s.empty()) s.push_back(rows); else s[0] = rows;
  return s;
}

}  // namespace gnncheck
