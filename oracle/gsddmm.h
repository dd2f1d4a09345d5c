// gnncheck/oracle/gsddmm.h — the generalized SDDMM: one value per edge from two operands, each on the
// edge's source, its destination or the edge itself (DGL's gsddmm).
//
//   out[k, c] = op(lhs[r_l(k), c_l], rhs[r_r(k), c_r])       op ∈ {add, sub, mul, div, copy_lhs, copy_rhs}
//   out[k, h] = Σ_f lhs[r_l(k), c_l] · rhs[r_r(k), c_r]      op = dot, c = h·F + f
//
// An operand's side says which row edge k reads: u the source col_k (n_src rows), v the destination
// row_k (n_dst rows), e the edge k itself (E rows, edge-id order). Columns c = h·F + f (H heads of F
// features); each operand is broadcast over features, heads or both as in gspmm
// (oracle/broadcast_operands.h), c_l and c_r being c's column in each. dot is mul summed over the
// feature axis (NumPy's (lhs * rhs).sum(-1)): one value per head.
//
// Conventions (the catalogue entry's, oracle/gsddmm_target.cpp):
// - lhs and rhs are separate inputs even on the same side (u·u reads two source-node tensors), so
//   every pair of sides is a function of two inputs; a copy reads only its operand.
// - Backward through a broadcast operand sums over the axes it was broadcast along; a node or edge
//   that no edge reads gets 0.
//
// Written plainly over the edges in edge-id order, so results are bit-identical for any thread
// count. Bad attributes or shapes throw InputError naming the op and the attribute or tensor.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "core/case.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "oracle/broadcast_operands.h"

namespace gnncheck::oracle {

enum class SddmmOp { add, sub, mul, div, dot, copy_lhs, copy_rhs };
// Where an operand lives: u = source nodes, v = destination nodes, e = edges.
enum class OperandSide { u, v, e };

// Each enumeration's names in declaration order: its attribute's values in the catalogue.
inline constexpr std::array<std::string_view, 7> kSddmmOpNames = {"add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs"};
inline constexpr std::array<std::string_view, 3> kOperandSideNames = {"u", "v", "e"};
inline std::string_view to_string(SddmmOp op) { return kSddmmOpNames[static_cast<std::size_t>(op)]; }
inline std::string_view to_string(OperandSide s) { return kOperandSideNames[static_cast<std::size_t>(s)]; }

// heads, features and the operands' broadcasts: oracle/broadcast_operands.h.
struct GsddmmConfig : BroadcastShape {
  SddmmOp op = SddmmOp::dot;
  OperandSide lhs = OperandSide::u;
  OperandSide rhs = OperandSide::v;
  Broadcast lhs_broadcast = Broadcast::none;
  Broadcast rhs_broadcast = Broadcast::none;

  // The elementwise operation of one term (dot: a product, then summed over the features).
  BinaryOp binary() const;
  bool uses_lhs() const { return reads_lhs(binary()); }
  bool uses_rhs() const { return reads_rhs(binary()); }
  // Output values per edge: heads for dot, heads·features otherwise.
  index_t out_width() const { return op == SddmmOp::dot ? heads : width(); }
  // The columns c summed into output column o: the F features of head o for dot, o alone otherwise.
  index_t terms_per_output() const { return op == SddmmOp::dot ? features : 1; }
  index_t first_column(index_t o) const { return o * terms_per_output(); }
  index_t output_of(index_t c) const { return c / terms_per_output(); }
};

// The attributes op, lhs, rhs, heads, features, lhs_broadcast, rhs_broadcast (defaults filled in);
// throws InputError naming the attribute and the accepted values.
GsddmmConfig gsddmm_config(const Attributes& attrs);

// The input names of the operands: "lhs_" or "rhs_" and the side ("lhs_u", "rhs_e"); the catalogue
// declares all six, and a case carries the two its sides name (one for a copy).
std::string lhs_input_name(const GsddmmConfig& config);
std::string rhs_input_name(const GsddmmConfig& config);

// The rows of a tensor on `side`, and the row edge k reads there.
index_t side_rows(const Graph& g, OperandSide side);
inline index_t side_row(const Graph& g, OperandSide side, index_t k) {
  switch (side) {
    case OperandSide::u: return g.col_idx()[k];
    case OperandSide::v: return g.row_of_edge()[k];
    case OperandSide::e: return k;
  }
  return k;
}

// Edge k's operands for column c, read through their sides and broadcasts (a missing operand reads 0).
template <class T>
struct GsddmmOperands {
  const Graph& g;
  const GsddmmConfig& config;
  const DenseTensor<T>* lhs;
  const DenseTensor<T>* rhs;

  index_t lhs_index(index_t k, index_t c) const { return config.index(config.lhs_broadcast, side_row(g, config.lhs, k), c); }
  index_t rhs_index(index_t k, index_t c) const { return config.index(config.rhs_broadcast, side_row(g, config.rhs, k), c); }
  T lhs_at(index_t k, index_t c) const { return operand_value(lhs, lhs_index(k, c)); }
  T rhs_at(index_t k, index_t c) const { return operand_value(rhs, rhs_index(k, c)); }
};

// lhs: [side_rows(lhs), columns(lhs_broadcast)] or null when op does not read it; rhs likewise.
template <class T>
DenseTensor<T> gsddmm_forward(const Graph& g, const GsddmmConfig& config, const DenseTensor<T>* lhs,
                              const DenseTensor<T>* rhs);

template <class T>
struct GsddmmGrads {
  DenseTensor<T> grad_lhs;  // empty when op does not read lhs
  DenseTensor<T> grad_rhs;  // empty when op does not read rhs
};
template <class T>
GsddmmGrads<T> gsddmm_backward(const Graph& g, const GsddmmConfig& config, const DenseTensor<T>* lhs,
                               const DenseTensor<T>* rhs, const DenseTensor<T>& grad_out);

// For the closed-form tolerance (checks/tolerance.h), per element of out and of each gradient:
// Σ|terms| and the count of terms plus one term's roundings (checks/tolerance.md, "The bound of gsddmm").
struct GsddmmTerms {
  Tensor out_abs, out_count;
  Tensor grad_lhs_abs, grad_lhs_count;  // empty without grad_out or when op does not read lhs
  Tensor grad_rhs_abs, grad_rhs_count;  // likewise for rhs
};
GsddmmTerms gsddmm_closed_form_terms(const Graph& g, const GsddmmConfig& config, const Tensor* lhs, const Tensor* rhs,
                                     const Tensor* grad_out);

}  // namespace gnncheck::oracle
