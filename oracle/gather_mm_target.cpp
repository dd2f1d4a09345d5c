// The catalogue entry of gather_mm (DGL's gather_mm(a, b, idx_b), pyg-lib's grouped matmul, the
// per-relation message x_j · W_r of R-GCN): every edge row multiplied by the weight matrix of its
// type. The types are an index tensor (TensorSlot::index_range): a typed graph's edge relations.
#include "oracle/broadcast_operands.h"
#include "oracle/catalogue_support.h"
#include "oracle/gather_mm.h"
#include "oracle/wrong_variants.h"

namespace gnncheck::oracle {
namespace {

using namespace catalogue;

struct Widths {
  index_t relations, in, out;
};
Widths widths(const Attributes& a) {
  return {positive_size(a, "gather_mm", "relations"), positive_size(a, "gather_mm", "in_features"),
          positive_size(a, "gather_mm", "out_features")};
}

}  // namespace

TargetDef gather_mm_target() {
  TargetDef def = make_target(
      {"gather_mm", false,
       "y[k] = x[k] · weight[edge_type[k]] on every edge: one matrix per relation of a typed graph (R-GCN's messages)",
       {{"x", TensorKind::edges, true},
        {"edge_type", TensorKind::edges, false, "relations"},
        {"weight", TensorKind::parameter, true}},
       {{"y", TensorKind::edges, true}},
       {{"relations", std::int64_t{3}, "number of relations (edge types) R: weight holds one matrix per relation; ≥ 1"},
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
      [](const Graph& g, const Attributes& a) {
        const Widths n = widths(a);
        return Shapes{{"x", {g.num_edges(), n.in}}, {"edge_type", {g.num_edges()}}, {"weight", {n.relations, n.in, n.out}}};
      },
      [](const Graph& g, const Attributes& a) { return Shapes{{"y", {g.num_edges(), widths(a).out}}}; },
      []<class T>(const Graph&, const Attributes&, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        Evaluation<T> ev;
        const auto& x = get(in, "x");
        const auto& types = get(in, "edge_type");
        const auto& weight = get(in, "weight");
        ev.outputs["y"] = gather_mm_forward(x, types, weight);
        if (!gout.empty()) {
          auto grads = gather_mm_backward(x, types, weight, get(gout, "y"));
          ev.gradients["x"] = std::move(grads.grad_x);
          ev.gradients["weight"] = std::move(grads.grad_w);
        }
        return ev;
      });
  // Every element is a sum of products of two values (x·weight; grad_y·weight with k = out_features
  // for grad_x; x·grad_y with k = the relation's edges for grad_weight): the target on |inputs| is
  // Σ|terms| and on ones (the types kept) the term count.
  def.spec.tolerance = {ToleranceKind::closed_form, 3, "both factors rounded, their product"};
  def.spec.tolerance.storage_roundings = 2;  // the two factors; the product in the accumulation format
  def.wrong_variants = {weight_gradient_to_next_relation(), weight_not_transposed_in_backward("edge_type")};
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = false};
  return def;
}

}  // namespace gnncheck::oracle
