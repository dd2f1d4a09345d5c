// gnncheck/oracle/wrong_variants.h — the generic known-wrong variants of targets (WrongVariant,
// oracle/targets.h): mistakes that need no replica, each a transform of the case or of the oracle's
// answer, evaluated in float64.
//
// The catalogue adds to every target the transforms its spec admits (generic_wrong_variants), in
// this order of simplicity:
//   10 zero_gradient_<input>          a gradient term dropped: one input's gradient is zero
//   15 previous_case_answer           the previous call's inputs answered (state checks only)
//   20 transposed_graph_in_backward   the gradients of the case on Aᵀ (A where Aᵀ is needed)
//   30 <attribute>=<value>            another value of an enumerated convention (the other degree
//                                     side, the other normalization power)
//   40 one_head_for_all_heads         head 0's edge values for every head
//   50 duplicates_coalesced           the case on its graph with duplicate edges collapsed
//   60 edge_layout_transposed         [E, H] edge tensors read and written as [H, E]
// A target's entry may declare its own besides (edge_softmax: its backward without the
// subtraction term, softmax_backward_without_subtraction; normalized_spmm: its backward in the
// forward's order, backward_normalized_in_forward_order).
//
//   for (const auto& v : gnncheck::oracle::find_target("spmm").wrong_variants)
//     if (auto answer = v.evaluate(c, {.precision = Precision::float32})) fmt::print("{}: {}\n", v.name, v.description);
#pragma once

#include <vector>

#include "oracle/targets.h"

namespace gnncheck::oracle {

// The generic transforms that apply to targets of this spec, in order of simplicity.
std::vector<WrongVariant> generic_wrong_variants(const TargetSpec& spec);

// edge_softmax's backward without its subtraction term: grad_logits = alpha ⊙ grad_alpha instead
// of alpha ⊙ (grad_alpha − Σ_row alpha·grad_alpha).
WrongVariant softmax_backward_without_subtraction();

// normalized_spmm's backward scaled with the degrees of the wrong sides, in the forward's order:
// D_dst^-½ Aᵀ D_src^-½ ḡ instead of D_src^-½ Aᵀ D_dst^-½ ḡ (symmetric), D^-1 Aᵀ ḡ instead of
// Aᵀ D^-1 ḡ (row_mean), each degree looked up by node id (the GNNAdvisor and Seastar bug class).
// Only on a square graph, and not for symmetric with one degree per node (source_degree = in),
// where both orders give the same factors.
WrongVariant backward_normalized_in_forward_order();

// The weight gradient of relation r accumulated into relation r + 1 (mod relations), for a target
// whose parameter `weight` holds one matrix per relation (gather_mm, rgat): a relation's gradient
// summed into the wrong relation, as a type id off by one in the scatter does.
WrongVariant weight_gradient_to_next_relation();

// grad_x = grad_y · weight[t] where grad_y · weight[t]ᵀ is needed, for a target that multiplies each
// row of x by the matrix of its type (the index input `types`: gather_mm's edge_type, typed_linear's
// node_type): the forward weight used where its transpose is needed. Only square matrices (in = out
// ≥ 2) keep the shapes; elsewhere the variant does not apply.
WrongVariant weight_not_transposed_in_backward(const std::string& types);

// y's rows in the order of a stable sort of the rows by their type (the index input `types`) instead
// of the rows' own order, gradients exact: a kernel that sorts rows by type for a segment matmul
// (PyG's HeteroLinear over pyg-lib's segment_matmul) and never permutes the output back. Nothing
// where the types are already in order.
WrongVariant rows_left_sorted_by_type(const std::string& types);

}  // namespace gnncheck::oracle
