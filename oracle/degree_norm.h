// gnncheck/oracle/degree_norm.h — degree normalizations of A and their fused forms with SpMM.
//
//   symmetric:  Â = D_dst^-½ · A · D_src^-½   ŵ_e = 1 / sqrt(in_degree(row_e) · d_src(col_e))
//   row_mean:   Â = D_dst^-1 · A              ŵ_e = 1 / in_degree(row_e)
// in_degree(i) is destination i's row length and out_degree(j) source j's column length (each
// duplicate edge counts). The source's degree d_src is a convention (SourceDegree):
//   out  d_src(j) = out_degree(j), column j's length: Kipf & Welling's D^-½ A D^-½ read with
//        the rows as destinations and the columns as sources (the default);
//   in   d_src(j) = in_degree(j), the length of row j — source j is destination j (ids below
//        n_dst name one node on both sides) —, 0 for j ≥ n_dst: one degree per node, as PyG's
//        gcn_norm (deg = scatter over the edges' targets) and GNNAdvisor compute it.
// They agree where every source's in- and out-degree are equal (a symmetric graph). On graphs whose
// in- and out-degrees differ the two sides are NOT interchangeable — exactly what the op-order
// check exploits. With `out` a source of degree 0 has no edges, so its factor is never used; with
// `in` a source j with out-edges but no in-edges (or j ≥ n_dst) meets 1/sqrt(0), a convention
// (ZeroDegree): factor 0 by default, as PyG does (it sends nothing), or degree 1 (GNNAdvisor).
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
// Which degree scales the source side of the symmetric normalization (row_mean has no source factor).
enum class SourceDegree { out, in };
// What a source degree of 0 scales by, where the math is undefined (1/sqrt(0)): `zero` gives the
// factor 0 (PyG's gcn_norm masks the infinity to 0), `one` takes the degree as 1 (GNNAdvisor). Only
// source_degree = in meets it: a source with out-edges but no in-edges, or a source j >= n_dst.
enum class ZeroDegree { zero, one };

// "symmetric" / "row_mean"; parse throws InputError naming the accepted values.
std::string_view to_string(DegreeNorm norm);
DegreeNorm parse_degree_norm(std::string_view name);
// "out" / "in"; parse throws InputError naming the accepted values.
std::string_view to_string(SourceDegree source_degree);
SourceDegree parse_source_degree(std::string_view name);
// "zero" / "one"; parse throws InputError naming the accepted values.
std::string_view to_string(ZeroDegree zero_degree);
ZeroDegree parse_zero_degree(std::string_view name);
// The attribute both `normalized_spmm` and `gcn` declare (one help text for both).
inline constexpr std::string_view kSourceDegreeHelp =
    "degree scaling source j in the symmetric normalization: out (j's out-degree, D_src) | in (j's own in-degree as "
    "destination j, 0 for j >= n_dst: PyG's gcn_norm, GNNAdvisor); row_mean has no source factor";
inline constexpr std::string_view kZeroDegreeHelp =
    "what a source of degree 0 scales by in the symmetric normalization (with source_degree = in, a source with "
    "out-edges but no in-edges, or j >= n_dst): zero (factor 0: PyG's gcn_norm) | one (degree taken as 1: GNNAdvisor)";

// The normalized edge values ŵ as an [E, 1] edge tensor (feed them to spmm_ve for the unfused path).
template <class T>
DenseTensor<T> degree_norm_edge_values(const Graph& g, DegreeNorm norm, SourceDegree source_degree = SourceDegree::out,
                                       ZeroDegree zero_degree = ZeroDegree::zero);

template <class T>
DenseTensor<T> normalized_spmm_forward(const Graph& g, DegreeNorm norm, const DenseTensor<T>& x,
                                       SourceDegree source_degree = SourceDegree::out, ZeroDegree zero_degree = ZeroDegree::zero);
template <class T>
DenseTensor<T> normalized_spmm_backward(const Graph& g, DegreeNorm norm, const DenseTensor<T>& grad_y,
                                        SourceDegree source_degree = SourceDegree::out, ZeroDegree zero_degree = ZeroDegree::zero);

}  // namespace gnncheck::oracle
