// gnncheck/oracle/broadcast_operands.h — what the generalized ops (gspmm, gsddmm) share: operands
// broadcast NumPy-style over [heads, features], the elementwise binary operations with their
// derivatives and rounding counts, and the reading of their attributes.
//
// An operand row holds H·F values (broadcast none), H (features: one value per head, [H, 1]),
// F (heads: one value per feature, [1, F]) or 1 (both, [1, 1]); output column c = h·F + f reads
// column column(b, c) of it. A backward through a broadcast operand sums over the broadcast axes,
// which is what adding into index column(b, c) for every c does.
//
//   BroadcastShape shape{.heads = 2, .features = 3};
//   shape.columns(Broadcast::features);     // 2 values per row
//   shape.column(Broadcast::features, 4);   // output column 4 (h = 1, f = 1) reads column 1
//   apply_binary(BinaryOp::div, 1.0, 4.0);  // 0.25
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/case.h"
#include "core/tensor.h"

namespace gnncheck::oracle {

// Which axes of [H, F] an operand is broadcast over (its values per row: H·F, H, F, 1).
enum class Broadcast { none, features, heads, both };
inline constexpr std::array<std::string_view, 4> kBroadcastNames = {"none", "features", "heads", "both"};
inline std::string_view to_string(Broadcast b) { return kBroadcastNames[static_cast<std::size_t>(b)]; }

struct BroadcastShape {
  index_t heads = 1;
  index_t features = 1;

  index_t width() const { return heads * features; }
  // Values per row of an operand broadcast by b.
  index_t columns(Broadcast b) const {
    switch (b) {
      case Broadcast::none: return heads * features;
      case Broadcast::features: return heads;
      case Broadcast::heads: return features;
      case Broadcast::both: return 1;
    }
    return 1;
  }
  // The operand's column for output column c.
  index_t column(Broadcast b, index_t c) const {
    switch (b) {
      case Broadcast::none: return c;
      case Broadcast::features: return c / features;
      case Broadcast::heads: return c % features;
      case Broadcast::both: return 0;
    }
    return 0;
  }
  // The flat index of output column c's value in row `row` of an operand broadcast by b.
  index_t index(Broadcast b, index_t row, index_t c) const { return row * columns(b) + column(b, c); }
};

// The value at flat index `at` of an operand, or 0 for one the op does not read (null).
template <class T>
T operand_value(const DenseTensor<T>* operand, index_t at) {
  return operand ? (*operand)[at] : T(0);
}

// An elementwise operation of a left and a right operand (gspmm: u and e; gsddmm: lhs and rhs).
enum class BinaryOp { copy_lhs, copy_rhs, add, sub, mul, div };

inline bool reads_lhs(BinaryOp op) { return op != BinaryOp::copy_rhs; }
inline bool reads_rhs(BinaryOp op) { return op != BinaryOp::copy_lhs; }

template <class T>
T apply_binary(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::copy_lhs: return a;
    case BinaryOp::copy_rhs: return b;
    case BinaryOp::add: return a + b;
    case BinaryOp::sub: return a - b;
    case BinaryOp::mul: return a * b;
    case BinaryOp::div: return a / b;
  }
  return a;
}

// ∂(a op b)/∂a and ∂(a op b)/∂b.
template <class T>
std::pair<T, T> binary_partials(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::copy_lhs: return {T(1), T(0)};
    case BinaryOp::copy_rhs: return {T(0), T(1)};
    case BinaryOp::add: return {T(1), T(1)};
    case BinaryOp::sub: return {T(1), T(-1)};
    case BinaryOp::mul: return {b, a};
    case BinaryOp::div: return {T(1) / b, -a / (b * b)};
  }
  return {T(0), T(0)};
}

// Σ|terms| of a op b: what its rounding scales with (|a| + |b| for a sum or difference, |a·b|, |a/b|).
inline double binary_magnitude(BinaryOp op, double a, double b) {
  a = std::abs(a), b = std::abs(b);
  switch (op) {
    case BinaryOp::copy_lhs: return a;
    case BinaryOp::copy_rhs: return b;
    case BinaryOp::add:
    case BinaryOp::sub: return a + b;
    case BinaryOp::mul: return a * b;
    case BinaryOp::div: return a / b;
  }
  return a + b;
}

// Roundings of a op b from float64 operands in a lower precision (checks/tolerance.md, "The bound of
// gspmm"): a copy rounds its operand once; otherwise both operands and the operation.
inline int binary_roundings(BinaryOp op) { return op == BinaryOp::copy_lhs || op == BinaryOp::copy_rhs ? 1 : 3; }
// Roundings of ∂/∂a besides the output gradient's: the other operand and the product or quotient.
inline int lhs_partial_roundings(BinaryOp op) { return op == BinaryOp::mul || op == BinaryOp::div ? 2 : 0; }
// Roundings of ∂/∂b: mul as ∂/∂a; div's −a/b² rounds a and b, b², the quotient and the product.
inline int rhs_partial_roundings(BinaryOp op) { return op == BinaryOp::mul ? 2 : op == BinaryOp::div ? 5 : 0; }

// The enumerator whose name (in `names`, declaration order) is the attribute's value; an
// InputError naming the target, the attribute and the accepted values otherwise.
template <class E, std::size_t N>
E parse_choice(const Attributes& attrs, std::string_view target, const char* name,
               const std::array<std::string_view, N>& names) {
  const std::string value = attrs.get_string(name);
  for (std::size_t k = 0; k < N; ++k)
    if (names[k] == value) return static_cast<E>(k);
  throw InputError(fmt::format("target '{}': attribute '{}' is '{}'; expected one of {}", target, name, value,
                               fmt::join(names, ", ")));
}

// A size attribute (heads, features) that must be at least 1.
inline index_t positive_size(const Attributes& attrs, std::string_view target, const char* name) {
  const std::int64_t value = attrs.get_int(name);
  if (value < 1) throw InputError(fmt::format("target '{}': attribute '{}' must be at least 1, got {}", target, name, value));
  return value;
}

// The attributes heads and features, each at least 1.
inline BroadcastShape broadcast_shape(const Attributes& attrs, std::string_view target) {
  return {positive_size(attrs, target, "heads"), positive_size(attrs, target, "features")};
}

// Checks an operand's rows and its values per row against its broadcast; `what` names the op and
// the tensor ("gspmm: input e"), `where` what a row is, `attribute` the broadcast's attribute.
template <class T>
void require_broadcast_operand(const DenseTensor<T>& t, index_t rows, const BroadcastShape& shape, Broadcast b,
                               std::string_view what, std::string_view where, std::string_view attribute) {
  require_rows(t, rows, fmt::format("{} (one row per {})", what, where));
  if (t.row_size() != shape.columns(b))
    throw InputError(fmt::format("{} has {} values per row; {} = {} with heads = {} and features = {} needs {}", what,
                                 t.row_size(), attribute, to_string(b), shape.heads, shape.features, shape.columns(b)));
}

}  // namespace gnncheck::oracle
