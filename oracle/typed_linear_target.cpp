// The catalogue entry of typed_linear (DGL's TypedLinear, PyG's HeteroLinear without bias, the
// per-node-type projections of HGT): every node's row multiplied by the weight matrix of its type.
// The node types are an index tensor (TensorSlot::index_range), drawn like a typed graph's relations:
// one type for every node, a type no node has, or any mix (properties/build_case.cpp).
#include "oracle/broadcast_operands.h"
#include "oracle/catalogue_support.h"
#include "oracle/gather_mm.h"
#include "oracle/wrong_variants.h"

namespace gnncheck::oracle {
namespace {

using namespace catalogue;

struct Widths {
  index_t types, in, out;
};
Widths widths(const Attributes& a) {
  return {positive_size(a, "typed_linear", "node_types"), positive_size(a, "typed_linear", "in_features"),
          positive_size(a, "typed_linear", "out_features")};
}

}  // namespace

TargetDef typed_linear_target() {
  TargetDef def = make_target(
      {"typed_linear", false,
       "y[i] = x[i] · weight[node_type[i]] on every node: one matrix per node type (HGT's projections, DGL's "
       "TypedLinear, PyG's HeteroLinear)",
       {{"x", TensorKind::src_nodes, true},
        {"node_type", TensorKind::src_nodes, false, "node_types"},
        {"weight", TensorKind::parameter, true}},
       {{"y", TensorKind::src_nodes, true}},
       {{"node_types", std::int64_t{3}, "number of node types T: weight holds one matrix per type; ≥ 1"},
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
      [](const Graph& g, const Attributes& a) {
        const Widths n = widths(a);
        return Shapes{{"x", {g.n_src(), n.in}}, {"node_type", {g.n_src()}}, {"weight", {n.types, n.in, n.out}}};
      },
      [](const Graph& g, const Attributes& a) { return Shapes{{"y", {g.n_src(), widths(a).out}}}; },
      []<class T>(const Graph&, const Attributes&, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        // gather_mm's rows are any rows: here the nodes, each with its type (oracle/gather_mm.h).
        Evaluation<T> ev;
        const auto& x = get(in, "x");
        const auto& types = get(in, "node_type");
        const auto& weight = get(in, "weight");
        ev.outputs["y"] = gather_mm_forward(x, types, weight);
        if (!gout.empty()) {
          auto grads = gather_mm_backward(x, types, weight, get(gout, "y"));
          ev.gradients["x"] = std::move(grads.grad_x);
          ev.gradients["weight"] = std::move(grads.grad_w);
        }
        return ev;
      });
  // As gather_mm: every element is a sum of products of two values.
  def.spec.tolerance = {ToleranceKind::closed_form, 3, "both factors rounded, their product"};
  def.spec.tolerance.storage_roundings = 2;  // the two factors; the product in the accumulation format
  def.wrong_variants = {weight_gradient_to_next_relation(), weight_not_transposed_in_backward("node_type")};
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = false};
  return def;
}

}  // namespace gnncheck::oracle
