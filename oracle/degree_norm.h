// gnncheck/oracle/degree_norm.h — degree normalizations of A and their fused forms with SpMM.
//
//   symmetric:  Â = D_dst^-½ · A · D_src^-½   ŵ_e = 1 / sqrt(in_degree(row_e) · out_degree(col_e))
//   row_mean:   Â = D_dst^-1 · A              ŵ_e = 1 / in_degree(row_e)
// in_degree(i) is destination i's row length and out_degree(j) source j's column length (each
// duplicate edge counts). On graphs whose in- and out-degrees differ the two sides are NOT
// interchangeable — exactly what the op-order check exploits. A zero degree has no edges, so its
// factor is never used (defined as 0, as PyG does).
//
//   normalized_spmm:  Y = Â·X,   backward  grad_X = Âᵀ·grad_Y = D_src^-½ Aᵀ D_dst^-½ grad_Y (symmetric)
//                                          grad_X = Aᵀ D_dst^-1 grad_Y (row_mean)
// The degrees are a function of the graph only, so X is the one differentiable input.
#pragma once

#include <string_view>

#include "core/graph.h"
#include "core/tensor.h"

namespace gnncheck::oracle {

enum class DegreeNorm { symmetric, row_mean };

// "symmetric" / "row_mean"; parse throws InputError naming the accepted values.
std::string_view to_string(DegreeNorm norm);
DegreeNorm parse_degree_norm(std::string_view name);

// The normalized edge values ŵ as an [E, 1] edge tensor (feed them to spmm_ve for the unfused path).
template <class T>
DenseTensor<T> degree_norm_edge_values(const Graph& g, DegreeNorm norm);

template <class T>
DenseTensor<T> normalized_spmm_forward(const Graph& g, DegreeNorm norm, const DenseTensor<T>& x);
template <class T>
DenseTensor<T> normalized_spmm_backward(const Graph& g, DegreeNorm norm, const DenseTensor<T>& grad_y);

}  // namespace gnncheck::oracle
