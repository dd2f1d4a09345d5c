// gnncheck/oracle/gspmm.h — the generalized SpMM: a message per edge, reduced per destination.
//
//   m[k, c] = op(u[col_k, c_u], e[k, c_e])        op ∈ {copy_u, copy_e, add, sub, mul, div}
//   y[i, c] = reduce_{k ∈ row i} m[k, c]          reduce ∈ {sum, mean, max, min}
//
// Output columns are c = h·F + f (H heads of F features). Each operand is [rows, H·F] or broadcast
// over features ([rows, H]: one value per head), over heads ([rows, F]) or both ([rows, 1]), the way
// NumPy broadcasts [H, 1] or [1, F] against [H, F]; c_u and c_e are c's column in each.
//
// Conventions (the catalogue entry's, oracle/op_targets.cpp):
// - An empty row gives 0 for sum and mean; for max and min the attribute empty_rows says: 0 (PyG,
//   DGL) or the reduction's identity, −∞ for max and +∞ for min (torch.scatter_reduce with
//   include_self on a −∞/+∞-filled output).
// - Backward of max and min: the whole output gradient goes to the selected edge. At a tie any
//   convex combination of the tied edges is valid (SubgradientChoices); the oracle's own choice is
//   the first tied edge in CSR order (the lowest edge id of the row).
// - Backward through a broadcast operand sums over the axes it was broadcast along.
//
// Every quantity is written plainly over the CSR in one fixed order, so results are bit-identical
// for any thread count. Bad attributes or shapes throw InputError naming the op and the tensor.
#pragma once

#include <array>
#include <cmath>
#include <string>
#include <string_view>
#include <utility>

#include "core/case.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "oracle/broadcast_operands.h"
#include "oracle/kink_arguments.h"
#include "oracle/subgradients.h"

namespace gnncheck::oracle {

enum class MessageOp { copy_u, copy_e, add, sub, mul, div };
enum class Reduction { sum, mean, max, min };
enum class EmptyRows { zero, identity };

// The message as an operation of u (the left operand) and e (the right; oracle/broadcast_operands.h).
inline BinaryOp binary_op(MessageOp m) {
  switch (m) {
    case MessageOp::copy_u: return BinaryOp::copy_lhs;
    case MessageOp::copy_e: return BinaryOp::copy_rhs;
    case MessageOp::add: return BinaryOp::add;
    case MessageOp::sub: return BinaryOp::sub;
    case MessageOp::mul: return BinaryOp::mul;
    case MessageOp::div: return BinaryOp::div;
  }
  return BinaryOp::copy_lhs;
}

// heads, features and the operands' broadcasts: oracle/broadcast_operands.h.
struct GspmmConfig : BroadcastShape {
  MessageOp message = MessageOp::copy_u;
  Reduction reduce = Reduction::sum;
  Broadcast u_broadcast = Broadcast::none;
  Broadcast e_broadcast = Broadcast::features;
  EmptyRows empty_rows = EmptyRows::zero;

  bool uses_u() const { return reads_lhs(binary_op(message)); }
  bool uses_e() const { return reads_rhs(binary_op(message)); }
  bool selects() const { return reduce == Reduction::max || reduce == Reduction::min; }
};

// Each enumeration's names in declaration order: its attribute's values in the catalogue, what
// gspmm_config parses and what to_string prints.
inline constexpr std::array<std::string_view, 6> kMessageOpNames = {"copy_u", "copy_e", "add", "sub", "mul", "div"};
inline constexpr std::array<std::string_view, 4> kReductionNames = {"sum", "mean", "max", "min"};
inline constexpr std::array<std::string_view, 2> kEmptyRowsNames = {"zero", "identity"};
inline std::string_view to_string(MessageOp op) { return kMessageOpNames[static_cast<std::size_t>(op)]; }
inline std::string_view to_string(Reduction r) { return kReductionNames[static_cast<std::size_t>(r)]; }
inline std::string_view to_string(EmptyRows e) { return kEmptyRowsNames[static_cast<std::size_t>(e)]; }

// The attributes message, reduce, heads, features, u_broadcast, e_broadcast, empty_rows (defaults
// filled in); throws InputError naming the attribute and the accepted values.
GspmmConfig gspmm_config(const Attributes& attrs);

// The operands of edge k's message for output column c, read through the broadcast (a missing
// operand reads 0), the message and its derivatives: what the oracle, its tolerance terms and the
// bug replicas of gspmm (adapters/replicas) share.
template <class T>
struct GspmmOperands {
  const Graph& g;
  const GspmmConfig& config;
  const DenseTensor<T>* u;
  const DenseTensor<T>* e;

  index_t u_index(index_t k, index_t c) const { return config.index(config.u_broadcast, g.col_idx()[k], c); }
  index_t e_index(index_t k, index_t c) const { return config.index(config.e_broadcast, k, c); }
  T u_at(index_t k, index_t c) const { return operand_value(u, u_index(k, c)); }
  T e_at(index_t k, index_t c) const { return operand_value(e, e_index(k, c)); }
  T message_at(index_t k, index_t c) const { return apply_binary(binary_op(config.message), u_at(k, c), e_at(k, c)); }
  // ∂m/∂u and ∂m/∂e of edge k's message in column c.
  std::pair<T, T> derivatives_at(index_t k, index_t c) const {
    return binary_partials(binary_op(config.message), u_at(k, c), e_at(k, c));
  }
  // Σ|terms| of the message: what its rounding scales with.
  double magnitude_at(index_t k, index_t c) const {
    return binary_magnitude(binary_op(config.message), double(u_at(k, c)), double(e_at(k, c)));
  }
};

// The edge a max or min selects in row i, column c: the first extreme in CSR order; −1 for an empty row.
index_t gspmm_selected_edge(const GspmmOperands<double>& ops, index_t i, index_t c);

// u: [n_src, columns(u_broadcast)] or null when the message does not read it; e likewise [E, …].
template <class T>
DenseTensor<T> gspmm_forward(const Graph& g, const GspmmConfig& config, const DenseTensor<T>* u,
                             const DenseTensor<T>* e);

// Where the whole output gradient of a max or min goes when candidates are exactly equal: the first
// (the oracle's), the last, or split evenly among them (torch.scatter_reduce's amax and amin).
enum class TiePolicy { first, last, split };

template <class T>
struct GspmmGrads {
  DenseTensor<T> grad_u;  // empty when the message does not read u
  DenseTensor<T> grad_e;  // empty when the message does not read e
};
template <class T>
GspmmGrads<T> gspmm_backward(const Graph& g, const GspmmConfig& config, const DenseTensor<T>* u,
                             const DenseTensor<T>* e, const DenseTensor<T>& grad_y, TiePolicy ties = TiePolicy::first);

// For the closed-form tolerance (checks/tolerance.h), per element of y and of each gradient: Σ|terms|
// (of every candidate a correct implementation may select within the rounding of unit roundoff
// `unit_roundoff`) and the count of terms and roundings of the element.
struct GspmmTerms {
  Tensor y_abs, y_count;
  Tensor grad_u_abs, grad_u_count;  // empty when the message does not read u
  Tensor grad_e_abs, grad_e_count;  // likewise for e
};
GspmmTerms gspmm_closed_form_terms(const Graph& g, const GspmmConfig& config, const Tensor* u, const Tensor* e,
                                   const Tensor* grad_y, double unit_roundoff);

// The case's input names of u and e: gspmm's own, or those of a target built on it (segment_reduce's
// x is e under copy_e).
struct GspmmInputNames {
  std::string u = "u";
  std::string e = "e";
};

// Every valid gradient of a max or min reduction: one group per output element whose candidates tie
// within the rounding of `unit_roundoff` (no group for sum and mean); gradients named by `names`.
SubgradientChoices gspmm_subgradients(const Graph& g, const GspmmConfig& config, const Tensor* u, const Tensor* e,
                                      const Tensor& grad_y, double unit_roundoff, const GspmmInputNames& names = {});

// The catalogue's kink hook: for max and min, per output element and non-selected edge of its row,
// the gap between the selected message and that edge's (a kink where it reaches 0).
void gspmm_kink_arguments(const Case& c, const Attributes& attrs, KinkArguments& k);
// The same for a target built on gspmm: its configuration and the names its case gives u and e.
void gspmm_kink_arguments(const Case& c, const GspmmConfig& config, const GspmmInputNames& names, KinkArguments& k);

}  // namespace gnncheck::oracle
