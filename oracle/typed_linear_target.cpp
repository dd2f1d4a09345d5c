// The catalogue entry of typed_linear (DGL's TypedLinear, PyG's HeteroLinear without bias, the
// per-node-type projections of HGT): every node's row multiplied by the weight matrix of its type.
// The node types are an index tensor (TensorSlot::index_range), drawn like a typed graph's relations:
// one type for every node, a type no node has, or any mix (properties/build_case.cpp).
#include "oracle/catalogue_support.h"
#include "oracle/typed_rows_target.h"

namespace gnncheck::oracle {

TargetDef typed_linear_target() {
  return typed_rows_target(
      {"typed_linear", false,
       "y[i] = x[i] · weight[node_type[i]] on every node: one matrix per node type (HGT's projections, DGL's "
       "TypedLinear, PyG's HeteroLinear)",
       {{"x", TensorKind::src_nodes, true},
        {"node_type", TensorKind::src_nodes, false, "node_types"},
        {"weight", TensorKind::parameter, true}},
       {{"y", TensorKind::src_nodes, true}},
       {catalogue::type_count_attribute("node_types", "number of node types T: weight holds one matrix per type; ≥ 1", false),
        {"in_features", std::int64_t{8}, "width of x's rows and of each weight matrix's rows; ≥ 1"},
        {"out_features", std::int64_t{5}, "width of y's rows and of each weight matrix's columns; ≥ 1"}},
       false,
       "y[i, o] = Σ_f x[i, f] · weight[node_type[i], f, o]    (f < in_features, o < out_features)",
       {"x is [n_src, in_features] and node_type is [n_src], one row per (source) node: node i's type is "
        "node_type[i], an integer in [0, node_types) stored as a number (an index tensor: convert it to integers; it "
        "has no gradient). Nodes of one type need not be contiguous: an implementation that sorts them by type "
        "(pyg-lib's segment_matmul) must put y back in node order.",
        "weight is [node_types, in_features, out_features], applied as x[i] · weight[node_type[i]] (DGL's "
        "TypedLinear(x, node_type), PyG's HeteroLinear(x, node_type) with bias=False); y is [n_src, out_features]. "
        "The graph's edges are not read: only its source count.",
        "A type no node has keeps its matrix and gets a zero gradient; one type only is a plain matmul.",
        "Backward: grad_x[i] = grad_y[i] · weight[node_type[i]]ᵀ; grad_weight[t] = Σ_{i: node_type[i] = t} x[i]ᵀ · "
        "grad_y[i]."}},
      {"node_type", "node_types", [](const Graph& g) { return g.n_src(); }});
}

}  // namespace gnncheck::oracle
