// The catalogue entry of gather_mm (DGL's gather_mm(a, b, idx_b), pyg-lib's grouped matmul, the
// per-relation message x_j · W_r of R-GCN): every edge row multiplied by the weight matrix of its
// type. The types are an index tensor (TensorSlot::index_range): a typed graph's edge relations.
#include "oracle/catalogue_support.h"
#include "oracle/typed_rows_target.h"

namespace gnncheck::oracle {

TargetDef gather_mm_target() {
  return typed_rows_target(
      {"gather_mm", false,
       "y[k] = x[k] · weight[edge_type[k]] on every edge: one matrix per relation of a typed graph (R-GCN's messages)",
       {{"x", TensorKind::edges, true},
        {"edge_type", TensorKind::edges, false, "relations"},
        {"weight", TensorKind::parameter, true}},
       {{"y", TensorKind::edges, true}},
       {catalogue::type_count_attribute("relations", "number of relations (edge types) R: weight holds one matrix per relation; ≥ 1",
                             true),
        {"in_features", std::int64_t{8}, "width of x's rows and of each weight matrix's rows; ≥ 1"},
        {"out_features", std::int64_t{5}, "width of y's rows and of each weight matrix's columns; ≥ 1"}},
       false,
       "y[k, o] = Σ_f x[k, f] · weight[edge_type[k], f, o]    (f < in_features, o < out_features)",
       {"x is [E, in_features] and edge_type is [E], both in edge-id order: edge k's relation is edge_type[k], an "
        "integer in [0, relations) stored as a number (an index tensor: convert it to integers; it has no gradient).",
        "weight is [relations, in_features, out_features], applied as x[k] · weight[edge_type[k]] (DGL's "
        "gather_mm(x, weight, idx_b=edge_type)); y is [E, out_features] in edge-id order. The graph's structure is "
        "not read: only its edge count.",
        "A relation no edge has keeps its matrix and gets a zero gradient; one relation only is a plain matmul.",
        "Backward: grad_x[k] = grad_y[k] · weight[edge_type[k]]ᵀ; grad_weight[r] = Σ_{k: edge_type[k] = r} x[k]ᵀ · "
        "grad_y[k]."}},
      {"edge_type", "relations", [](const Graph& g) { return g.num_edges(); }});
}

}  // namespace gnncheck::oracle
