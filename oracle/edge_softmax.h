// gnncheck/oracle/edge_softmax.h — softmax over each destination's in-edges, per head.
//
//   alpha[k,h] = exp(s[k,h] - m[i,h]) / Σ_{k' ∈ row i} exp(s[k',h] - m[i,h]),  i = row_k,
//   m[i,h] = max_{k ∈ row i} s[k,h]   (max subtraction: finite for any finite logits)
// Backward: grad_s[k,h] = alpha[k,h] · (grad_alpha[k,h] − Σ_{k' ∈ row i} alpha[k',h] · grad_alpha[k',h]).
// Empty rows have no edges and contribute nothing. logits [E, H] (or [E]) -> alpha of the same shape.
// Each row's maximum, sum and normalization run in edge-id order on one thread: bit-identical for
// any thread count. Logits must be finite: a row whose logits are all −∞ gives NaN (0/0), as in DGL.
//
// Duplicate edges (the same destination and source) are separate entries of the softmax (DGL, PyG),
// or, with DuplicateEdges::coalesced, summed into one entry first — s_u = Σ_{k ∈ u} s[k] — whose
// alpha every duplicate then carries (torch.sparse.softmax coalesces its COO input so). Its backward:
// ḡ_u = Σ_{k ∈ u} grad_alpha[k], grad_s[k] = alpha_u·(ḡ_u − Σ_{u' ∈ row i} alpha_u'·ḡ_u') for every k ∈ u.
#pragma once

#include <string>
#include <string_view>

#include "core/graph.h"
#include "core/tensor.h"

namespace gnncheck::oracle {

enum class DuplicateEdges { separate, coalesced };
// "separate" / "coalesced"; InputError naming the attribute otherwise.
DuplicateEdges parse_duplicate_edges(const std::string& value);
inline constexpr std::string_view kDuplicateEdgesHelp =
    "separate: each duplicate edge (the same destination and source) is its own entry of the softmax (DGL, PyG); "
    "coalesced: duplicates' logits are summed into one entry first and each duplicate carries that entry's alpha "
    "(torch.sparse.softmax, which coalesces its input)";

// For each edge, the first edge of its row with the same source (itself when it has no earlier duplicate).
std::vector<index_t> duplicate_leaders(const Graph& g);

template <class T>
DenseTensor<T> edge_softmax_forward(const Graph& g, const DenseTensor<T>& logits,
                                    DuplicateEdges duplicates = DuplicateEdges::separate);
// Needs only the forward output alpha (what a GPU kernel would save for backward).
template <class T>
DenseTensor<T> edge_softmax_backward(const Graph& g, const DenseTensor<T>& alpha, const DenseTensor<T>& grad_alpha,
                                     DuplicateEdges duplicates = DuplicateEdges::separate);

}  // namespace gnncheck::oracle
