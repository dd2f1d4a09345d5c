// gnncheck/oracle/typed_rows_target.h — the catalogue entry of a target whose every row of x takes
// the weight matrix of its type (oracle/gather_mm.h): gather_mm's edges by their relation,
// typed_linear's nodes by their node type. Each target's spec says what its rows and types are; the
// shapes, the evaluation, the tolerance rule, the wrong variants and the GPU facts are shared.
//
//   return typed_rows_target(spec, {"node_type", "node_types", [](const Graph& g) { return g.n_src(); }});
#pragma once

#include <functional>
#include <string>

#include "oracle/targets.h"

namespace gnncheck::oracle {

struct TypedRows {
  std::string types;       // the index input, each row's type: "edge_type", "node_type"
  std::string type_count;  // the attribute that counts the types (weight's matrices): "relations", "node_types"
  std::function<index_t(const Graph&)> rows;  // x's rows on a graph: its edges, its source nodes
};

// The entry of `spec`, whose inputs are x [rows, in_features], the index input and the parameter
// weight [types, in_features, out_features], its output y [rows, out_features], its attributes the
// type count, in_features and out_features.
TargetDef typed_rows_target(TargetSpec spec, TypedRows rows);

}  // namespace gnncheck::oracle
