// The catalogue entries of the sparse ops (DESIGN.md "Ops"): one TargetDef per op, each with its
// spec, the shapes of its tensors for a graph and attributes, and its evaluation in float64 and
// float32 (the same template code).
//
// Shapes: node tensors are [N, H·C] (H = heads, C = features per head), edge tensors [E, H].
// Output and input names follow the op headers (x, y, z, edge_values, u, v, a, b, e, logits, alpha).
#include <fmt/format.h>

#include "oracle/catalogue_support.h"
#include "oracle/degree_norm.h"
#include "oracle/edge_softmax.h"
#include "oracle/wrong_variants.h"
#include "oracle/eshuffle.h"
#include "oracle/sddmm.h"
#include "oracle/spmm.h"
#include "oracle/spmm_ve.h"
#include "oracle/targets.h"

namespace gnncheck::oracle {
namespace {

using namespace catalogue;

AttributeSpec norm_attribute() {
  return drawn_as({"norm", std::string("symmetric"),
                   "degree normalization: symmetric (D_dst^-1/2 A D_src^-1/2) or row_mean (D_dst^-1 A)",
                   {std::string("symmetric"), std::string("row_mean")}},
                  AttributeDraw::one_of({std::string("symmetric"), std::string("row_mean")}),
                  {{{"norm", std::string("row_mean")}}});
}

// A size attribute that must be at least 1; the error names the target and the attribute.
index_t positive_attribute(const Attributes& attrs, const std::string& name, const std::string& target) {
  const std::int64_t value = attrs.get_int(name);
  if (value < 1) throw InputError(fmt::format("target '{}': attribute '{}' must be at least 1, got {}", target, name, value));
  return value;
}

struct Sizes {
  index_t heads;
  index_t width;  // heads · features
};
Sizes sizes(const Attributes& attrs, const std::string& target, bool has_heads) {
  const index_t heads = has_heads ? positive_attribute(attrs, "heads", target) : 1;
  const index_t features = positive_attribute(attrs, "features", target);
  return {heads, heads * features};
}

// Every input arrives in float64 and is rounded once to the declared precision (one rounding per
// factor); a product adds one: r counts those roundings per term besides the k additions of the sum.
// Of r, `stored` happen in the storage format (the inputs read, values an unfused implementation
// stores) and `computed` in the accumulation format (products, degree factors): one declaration,
// r = stored + computed (checks/tolerance.md, "Storage and accumulation").
TargetDef with_closed_form(TargetDef def, int stored, int computed, std::string why) {
  def.spec.tolerance = {ToleranceKind::closed_form, stored + computed, std::move(why)};
  def.spec.tolerance.storage_roundings = stored;
  return def;
}

// The receptive field of an op whose row i reads only its own edges, their sources and the values
// on them (scale/neighbourhood.h).
ReceptiveField rows_read_own_edges(const Attributes&) { return {}; }

TargetDef spmm_target() {
  TargetDef def = with_closed_form(make_target(
      {"spmm", false, "Y = A·X, sum over each destination's in-neighbors",
       {{"x", TensorKind::src_nodes, true}}, {{"y", TensorKind::dst_nodes, true}}, {features_attribute()}, false,
       "y[i] = Σ_{e ∈ row i} x[col_e]",
       {"Every edge counts once per occurrence: a duplicate edge adds its source row again, a self-loop (i, i) adds x[i].",
        "A destination without in-edges (an empty row) gets y[i] = 0. The graph may be non-square; no self-loops are added.",
        "Backward: grad_x = Aᵀ·grad_y, grad_x[j] = Σ_{e: col_e = j} grad_y[row_e]; a source without out-edges gets 0."}},
      [](const Graph& g, const Attributes& a) { return Shapes{{"x", {g.n_src(), sizes(a, "spmm", false).width}}}; },
      [](const Graph& g, const Attributes& a) { return Shapes{{"y", {g.n_dst(), sizes(a, "spmm", false).width}}}; },
      []<class T>(const Graph& g, const Attributes&, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        Evaluation<T> ev;
        ev.outputs["y"] = spmm_forward(g, get(in, "x"));
        if (!gout.empty()) ev.gradients["x"] = spmm_backward(g, get(gout, "y"));
        return ev;
      }),
      1, 0, "x rounded to the declared precision");
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = false};
  def.receptive_field = rows_read_own_edges;
  return def;
}

TargetDef spmm_transposed_target() {
  return with_closed_form(make_target(
      {"spmm_transposed", false, "Z = Aᵀ·Y, sum over each source's out-neighbors",
       {{"y", TensorKind::dst_nodes, true}}, {{"z", TensorKind::src_nodes, true}}, {features_attribute()}, false,
       "z[j] = Σ_{e: col_e = j} y[row_e]",
       {"The sum runs over source j's out-edges (column j of A), duplicates counted; a source without out-edges gets z[j] = 0.",
        "Backward: grad_y = A·grad_z, grad_y[i] = Σ_{e ∈ row i} grad_z[col_e]."}},
      [](const Graph& g, const Attributes& a) {
        return Shapes{{"y", {g.n_dst(), sizes(a, "spmm_transposed", false).width}}};
      },
      [](const Graph& g, const Attributes& a) {
        return Shapes{{"z", {g.n_src(), sizes(a, "spmm_transposed", false).width}}};
      },
      []<class T>(const Graph& g, const Attributes&, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        Evaluation<T> ev;
        ev.outputs["z"] = spmm_transposed_forward(g, get(in, "y"));
        if (!gout.empty()) ev.gradients["y"] = spmm_transposed_backward(g, get(gout, "z"));
        return ev;
      }),
      1, 0, "y rounded to the declared precision");
}

TargetDef spmm_ve_target() {
  TargetDef def = with_closed_form(make_target(
      {"spmm_ve", false, "Y[i,h] = Σ_e w[e,h]·X[col_e,h], edge-weighted SpMM per head",
       {{"edge_values", TensorKind::edges, true}, {"x", TensorKind::src_nodes, true}},
       {{"y", TensorKind::dst_nodes, true}},
       {heads_attribute(), features_attribute()}, false,
       "y[i, h·C + c] = Σ_{e ∈ row i} edge_values[e, h] · x[col_e, h·C + c]    (C = features, h < heads, c < C)",
       {"edge_values is [E, heads] in edge-id order (an edge's id is its position in col_idx); node rows are head-major: "
        "head h holds columns h·C to h·C + C − 1.",
        "Duplicate edges each contribute with their own value; an empty row gives y[i] = 0.",
        "Backward: grad_edge_values[e, h] = Σ_c grad_y[row_e, h·C + c] · x[col_e, h·C + c]; "
        "grad_x[j, h·C + c] = Σ_{e: col_e = j} edge_values[e, h] · grad_y[row_e, h·C + c]."}},
      [](const Graph& g, const Attributes& a) {
        const Sizes s = sizes(a, "spmm_ve", true);
        return Shapes{{"edge_values", {g.num_edges(), s.heads}}, {"x", {g.n_src(), s.width}}};
      },
      [](const Graph& g, const Attributes& a) { return Shapes{{"y", {g.n_dst(), sizes(a, "spmm_ve", true).width}}}; },
      []<class T>(const Graph& g, const Attributes&, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        Evaluation<T> ev;
        const auto& w = get(in, "edge_values");
        const auto& x = get(in, "x");
        ev.outputs["y"] = spmm_ve_forward(g, w, x);
        if (!gout.empty()) {
          auto grads = spmm_ve_backward(g, w, x, get(gout, "y"));
          ev.gradients["edge_values"] = std::move(grads.grad_edge_values);
          ev.gradients["x"] = std::move(grads.grad_x);
        }
        return ev;
      }),
      2, 1, "w and x rounded, their product");
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = true};
  def.receptive_field = rows_read_own_edges;
  return def;
}

TargetDef spmm_ve_transposed_target() {
  return with_closed_form(make_target(
      {"spmm_ve_transposed", false, "Z[j,h] = Σ_{e: col_e = j} w[e,h]·Y[row_e,h], edge-weighted Aᵀ per head",
       {{"edge_values", TensorKind::edges, true}, {"y", TensorKind::dst_nodes, true}},
       {{"z", TensorKind::src_nodes, true}},
       {heads_attribute(), features_attribute()}, false,
       "z[j, h·C + c] = Σ_{e: col_e = j} edge_values[e, h] · y[row_e, h·C + c]    (C = features, h < heads, c < C)",
       {"edge_values is [E, heads] in edge-id order, not CSC order; node rows are head-major.",
        "A source without out-edges gets z[j] = 0.",
        "Backward: grad_edge_values[e, h] = Σ_c grad_z[col_e, h·C + c] · y[row_e, h·C + c]; "
        "grad_y[i, h·C + c] = Σ_{e ∈ row i} edge_values[e, h] · grad_z[col_e, h·C + c]."}},
      [](const Graph& g, const Attributes& a) {
        const Sizes s = sizes(a, "spmm_ve_transposed", true);
        return Shapes{{"edge_values", {g.num_edges(), s.heads}}, {"y", {g.n_dst(), s.width}}};
      },
      [](const Graph& g, const Attributes& a) {
        return Shapes{{"z", {g.n_src(), sizes(a, "spmm_ve_transposed", true).width}}};
      },
      []<class T>(const Graph& g, const Attributes&, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        Evaluation<T> ev;
        const auto& w = get(in, "edge_values");
        const auto& y = get(in, "y");
        ev.outputs["z"] = spmm_ve_transposed_forward(g, w, y);
        if (!gout.empty()) {
          auto grads = spmm_ve_transposed_backward(g, w, y, get(gout, "z"));
          ev.gradients["edge_values"] = std::move(grads.grad_edge_values);
          ev.gradients["y"] = std::move(grads.grad_y);
        }
        return ev;
      }),
      2, 1, "w and y rounded, their product");
}

TargetDef sddmm_dot_target() {
  TargetDef def = with_closed_form(make_target(
      {"sddmm_dot", false, "e[k,h] = ⟨U[row_k,h], V[col_k,h]⟩ on every edge, per head",
       {{"u", TensorKind::dst_nodes, true}, {"v", TensorKind::src_nodes, true}},
       {{"e", TensorKind::edges, true}},
       {heads_attribute(), features_attribute()}, false,
       "e[k, h] = Σ_c u[row_k, h·C + c] · v[col_k, h·C + c]    (C = features)",
       {"u lives on destinations (indexed by the edge's row), v on sources (by its column): on a non-square graph u has "
        "n_dst rows and v n_src.",
        "One value per edge in edge-id order, duplicate edges included.",
        "Backward: grad_u[i, h·C + c] = Σ_{k ∈ row i} grad_e[k, h] · v[col_k, h·C + c]; "
        "grad_v[j, h·C + c] = Σ_{k: col_k = j} grad_e[k, h] · u[row_k, h·C + c]; a node without edges gets 0."}},
      [](const Graph& g, const Attributes& a) {
        const Sizes s = sizes(a, "sddmm_dot", true);
        return Shapes{{"u", {g.n_dst(), s.width}}, {"v", {g.n_src(), s.width}}};
      },
      [](const Graph& g, const Attributes& a) {
        return Shapes{{"e", {g.num_edges(), sizes(a, "sddmm_dot", true).heads}}};
      },
      []<class T>(const Graph& g, const Attributes& a, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        Evaluation<T> ev;
        const index_t heads = a.get_int("heads");
        const auto& u = get(in, "u");
        const auto& v = get(in, "v");
        ev.outputs["e"] = sddmm_dot_forward(g, u, v, heads);
        if (!gout.empty()) {
          auto grads = sddmm_dot_backward(g, u, v, heads, get(gout, "e"));
          ev.gradients["u"] = std::move(grads.grad_u);
          ev.gradients["v"] = std::move(grads.grad_v);
        }
        return ev;
      }),
      2, 1, "u and v rounded, their product");
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = true};
  def.receptive_field = rows_read_own_edges;
  return def;
}

// FusedMM (Rahman et al.): SDDMM and SpMM in one kernel, the edge scores never written.
TargetDef sddmm_spmm_target() {
  TargetDef def = with_closed_form(make_target(
      {"sddmm_spmm", false, "y[i,h] = Σ_e ⟨U[i,h], V[col_e,h]⟩·X[col_e,h]: SDDMM and SpMM fused (FusedMM)",
       {{"u", TensorKind::dst_nodes, true}, {"v", TensorKind::src_nodes, true}, {"x", TensorKind::src_nodes, true}},
       {{"y", TensorKind::dst_nodes, true}},
       {heads_attribute(), features_attribute()}, false,
       "s[k, h] = Σ_c u[row_k, h·C + c] · v[col_k, h·C + c];  y[i, h·C + c] = Σ_{k ∈ row i} s[k, h] · x[col_k, h·C + c]"
       "    (C = features)",
       {"u lives on destinations, v and x on sources; all three are [rows, heads·features], head-major. The edge "
        "scores s are never an output: a fused kernel does not write them.",
        "Duplicate edges each contribute; an empty row gives y[i] = 0.",
        "Backward: with grad_s[k, h] = Σ_c grad_y[row_k, h·C + c] · x[col_k, h·C + c]: "
        "grad_x[j, h·C + c] = Σ_{k: col_k = j} s[k, h] · grad_y[row_k, h·C + c]; "
        "grad_u[i, h·C + c] = Σ_{k ∈ row i} grad_s[k, h] · v[col_k, h·C + c]; "
        "grad_v[j, h·C + c] = Σ_{k: col_k = j} grad_s[k, h] · u[row_k, h·C + c]."}},
      [](const Graph& g, const Attributes& a) {
        const Sizes s = sizes(a, "sddmm_spmm", true);
        return Shapes{{"u", {g.n_dst(), s.width}}, {"v", {g.n_src(), s.width}}, {"x", {g.n_src(), s.width}}};
      },
      [](const Graph& g, const Attributes& a) { return Shapes{{"y", {g.n_dst(), sizes(a, "sddmm_spmm", true).width}}}; },
      []<class T>(const Graph& g, const Attributes& a, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        Evaluation<T> ev;
        const index_t heads = a.get_int("heads");
        const auto& u = get(in, "u");
        const auto& v = get(in, "v");
        const auto& x = get(in, "x");
        const DenseTensor<T> scores = sddmm_dot_forward(g, u, v, heads);
        ev.outputs["y"] = spmm_ve_forward(g, scores, x);
        if (!gout.empty()) {
          auto aggregation = spmm_ve_backward(g, scores, x, get(gout, "y"));
          auto products = sddmm_dot_backward(g, u, v, heads, aggregation.grad_edge_values);
          ev.gradients["u"] = std::move(products.grad_u);
          ev.gradients["v"] = std::move(products.grad_v);
          ev.gradients["x"] = std::move(aggregation.grad_x);
        }
        return ev;
      }),
      // Each term is a product of three inputs (or of grad_y and two inputs), k = the row's terms
      // times C; the nested sums' C + d roundings are within k + 1.
      // Stored: the three factors and the edge score (an unfused SDDMM then SpMM stores it).
      4, 2, "three factors rounded, their two products, the edge score rounded");
  // gpu/op_targets.cpp: sddmm_dot, then spmm_ve, whose backward walks the CSC (edge_perm).
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = true};
  def.receptive_field = rows_read_own_edges;
  return def;
}

TargetDef sddmm_add_target() {
  TargetDef def = with_closed_form(make_target(
      {"sddmm_add", false, "e[k,h] = a[row_k,h] + b[col_k,h] on every edge (GAT's logits)",
       {{"a", TensorKind::dst_nodes, true}, {"b", TensorKind::src_nodes, true}},
       {{"e", TensorKind::edges, true}},
       {heads_attribute()}, false,
       "e[k, h] = a[row_k, h] + b[col_k, h]",
       {"a is the destination side (indexed by the edge's row), b the source side (by its column); in GAT a holds the "
        "destination scores (att_dst) and b the source scores (att_src).",
        "Backward: grad_a[i, h] = Σ_{k ∈ row i} grad_e[k, h] (an empty row gets 0); grad_b[j, h] = Σ_{k: col_k = j} grad_e[k, h]."}},
      [](const Graph& g, const Attributes& a) {
        const index_t heads = positive_attribute(a, "heads", "sddmm_add");
        return Shapes{{"a", {g.n_dst(), heads}}, {"b", {g.n_src(), heads}}};
      },
      [](const Graph& g, const Attributes& a) {
        return Shapes{{"e", {g.num_edges(), positive_attribute(a, "heads", "sddmm_add")}}};
      },
      []<class T>(const Graph& g, const Attributes&, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        Evaluation<T> ev;
        ev.outputs["e"] = sddmm_add_forward(g, get(in, "a"), get(in, "b"));
        if (!gout.empty()) {
          auto grads = sddmm_add_backward(g, get(gout, "e"));
          ev.gradients["a"] = std::move(grads.grad_u);
          ev.gradients["b"] = std::move(grads.grad_v);
        }
        return ev;
      }),
      2, 0, "a and b rounded (the backward sums grad_e rounded once)");
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = true};
  def.receptive_field = rows_read_own_edges;
  return def;
}

TargetDef edge_softmax_target() {
  TargetDef def = make_target(
      {"edge_softmax", false, "softmax of edge logits over each destination's in-edges, per head",
       {{"logits", TensorKind::edges, true}}, {{"alpha", TensorKind::edges, true}},
       {heads_attribute(), duplicate_edges_attribute()}, false,
       "alpha[k, h] = exp(logits[k, h] − m[i, h]) / Σ_{k' ∈ row i} exp(logits[k', h] − m[i, h]),  i = row_k,  "
       "m[i, h] = max_{k' ∈ row i} logits[k', h]",
       {"The softmax runs over each destination's in-edges (row i of A), per head — never over a source's out-edges.",
        "Duplicate edges (the same destination and source) are the convention duplicate_edges: separate entries "
        "(separate), or one entry whose logit is their sum and whose alpha each of them carries (coalesced, as "
        "torch.sparse.softmax coalesces its input; backward: each duplicate's logit gets the entry's gradient, from "
        "the sum of the duplicates' grad_alpha).",
        "A row of one edge gives alpha = 1; an empty row has no entries.",
        "Subtracting the row maximum keeps large logits finite; the value is the plain softmax's.",
        "Backward: grad_logits[k, h] = alpha[k, h] · (grad_alpha[k, h] − Σ_{k' ∈ row i} alpha[k', h] · grad_alpha[k', h])."}},
      [](const Graph& g, const Attributes& a) {
        return Shapes{{"logits", {g.num_edges(), positive_attribute(a, "heads", "edge_softmax")}}};
      },
      [](const Graph& g, const Attributes& a) {
        return Shapes{{"alpha", {g.num_edges(), positive_attribute(a, "heads", "edge_softmax")}}};
      },
      []<class T>(const Graph& g, const Attributes& a, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        Evaluation<T> ev;
        const DuplicateEdges duplicates = parse_duplicate_edges(a.get_string("duplicate_edges"));
        ev.outputs["alpha"] = edge_softmax_forward(g, get(in, "logits"), duplicates);
        if (!gout.empty())
          ev.gradients["logits"] = edge_softmax_backward(g, ev.outputs["alpha"], get(gout, "alpha"), duplicates);
        return ev;
      });
  def.spec.tolerance = {ToleranceKind::softmax_per_row};
  def.wrong_variants = {softmax_backward_without_subtraction()};
  // The GPU reference's kernel (gpu/edge_softmax.cu) treats duplicates as separate entries.
  def.spec.gpu = {.device_resident = true,
                  .reads_edge_perm = false,
                  .implemented = {{"duplicate_edges", {AttrValue{std::string("separate")}}}}};
  def.receptive_field = rows_read_own_edges;
  return def;
}

TargetDef eshuffle_target(bool inverse) {
  const std::string name = inverse ? "eshuffle_inverse" : "eshuffle";
  const TensorKind from = inverse ? TensorKind::edges_csc : TensorKind::edges;
  const TensorKind to = inverse ? TensorKind::edges : TensorKind::edges_csc;
  return with_closed_form(make_target(
      {name, false,
       inverse ? "edge tensor from CSC order back to edge-id order: y[edge_perm[p]] = x[p]"
               : "edge tensor from edge-id order to CSC order: y[p] = x[edge_perm[p]]",
       {{"x", from, true}}, {{"y", to, true}}, {heads_attribute()}, false,
       inverse ? "y[edge_perm[p]] = x[p]    (p: a CSC position; edge_perm[p]: the id of the edge at that position)"
               : "y[p] = x[edge_perm[p]]    (p: a CSC position; edge_perm[p]: the id of the edge at that position)",
       {"CSC order sorts the edges by source column and, within a column, by increasing edge id (a stable sort of the edge "
        "ids by col_idx).",
        "A row of heads values moves as a whole.",
        inverse ? "Backward: grad_x[p] = grad_y[edge_perm[p]] (eshuffle applied to grad_y)."
                : "Backward: grad_x[edge_perm[p]] = grad_y[p] (eshuffle_inverse applied to grad_y)."}},
      [name](const Graph& g, const Attributes& a) {
        return Shapes{{"x", {g.num_edges(), positive_attribute(a, "heads", name)}}};
      },
      [name](const Graph& g, const Attributes& a) {
        return Shapes{{"y", {g.num_edges(), positive_attribute(a, "heads", name)}}};
      },
      [inverse]<class T>(const Graph& g, const Attributes&, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        Evaluation<T> ev;
        const auto& x = get(in, "x");
        ev.outputs["y"] = inverse ? eshuffle_inverse_forward(g, x) : eshuffle_forward(g, x);
        if (!gout.empty()) {
          const auto& gy = get(gout, "y");
          ev.gradients["x"] = inverse ? eshuffle_inverse_backward(g, gy) : eshuffle_backward(g, gy);
        }
        return ev;
      }),
      1, 0, "a copy of a rounded value");
}

// ŵ = 1/sqrt(d_i·d_j) costs up to 5 roundings (two rsqrt or sqrt+divide, their product) when formed
// per edge; scaling rows before and after the sum costs the same; plus x rounded and the product: 8
// covers every order of normalize and aggregate. A failing gradient is compared with the backward
// normalized on the wrong side (a wrong variant of the entry).
TargetDef normalized_spmm_target() {
  TargetDef def = with_closed_form(make_target(
      {"normalized_spmm", false, "Y = Â·X with Â the symmetric or row-mean degree normalization of A",
       {{"x", TensorKind::src_nodes, true}}, {{"y", TensorKind::dst_nodes, true}},
       {norm_attribute(), source_degree_attribute(), zero_degree_attribute(), features_attribute()}, false,
       "symmetric: y[i] = Σ_{e ∈ row i} x[col_e] / sqrt(in_degree(i) · d_src(col_e));  "
       "row_mean: y[i] = (1 / in_degree(i)) · Σ_{e ∈ row i} x[col_e]",
       {"in_degree(i) is destination i's row length in A, duplicate edges counted. d_src(j) is source j's column length in A "
        "(out_degree, source_degree = out) or, with source_degree = in, node j's own in-degree as a destination (PyG's gcn_norm, "
        "GNNAdvisor: one degree per node), 0 for j >= n_dst; on a non-square graph the two sides are different nodes.",
        "A source of degree 0 (source_degree = in: out-edges but no in-edges, or j >= n_dst) is the convention zero_degree: "
        "factor 0, so it sends nothing (zero, PyG's gcn_norm), or its degree taken as 1 (one, GNNAdvisor).",
        "No self-loops are added: A is normalized as given (a self-loop in A counts in both degrees like any edge).",
        "An empty row gives y[i] = 0; a node of degree 0 has no edge, so its factor is never used.",
        "Backward: grad_x = Âᵀ·grad_y with the same edge values: symmetric grad_x[j] = Σ_{e: col_e = j} grad_y[row_e] / "
        "sqrt(in_degree(row_e) · d_src(j)); row_mean grad_x[j] = Σ_{e: col_e = j} grad_y[row_e] / in_degree(row_e)."}},
      [](const Graph& g, const Attributes& a) {
        parse_degree_norm(a.get_string("norm"));  // reject a bad attribute before any tensor is built
        parse_source_degree(a.get_string("source_degree"));
        parse_zero_degree(a.get_string("zero_degree"));
        return Shapes{{"x", {g.n_src(), sizes(a, "normalized_spmm", false).width}}};
      },
      [](const Graph& g, const Attributes& a) {
        return Shapes{{"y", {g.n_dst(), sizes(a, "normalized_spmm", false).width}}};
      },
      []<class T>(const Graph& g, const Attributes& a, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        Evaluation<T> ev;
        const DegreeNorm norm = parse_degree_norm(a.get_string("norm"));
        const SourceDegree source_degree = parse_source_degree(a.get_string("source_degree"));
        const ZeroDegree zero_degree = parse_zero_degree(a.get_string("zero_degree"));
        ev.outputs["y"] = normalized_spmm_forward(g, norm, get(in, "x"), source_degree, zero_degree);
        if (!gout.empty()) ev.gradients["x"] = normalized_spmm_backward(g, norm, get(gout, "y"), source_degree, zero_degree);
        return ev;
      }),
      // Stored: x, the per-edge factor and the row-scaled values an unfused implementation keeps.
      3, 5, "x rounded, the degree factors (sqrt, divide, product: ≤ 5), the product, a row scaling");
  def.wrong_variants = {backward_normalized_in_forward_order()};
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = false};
  // The symmetric normalization reads each source's whole column (or its own row).
  def.receptive_field = [](const Attributes& a) {
    ReceptiveField field;
    if (a.get_string("norm") == "symmetric")
      field.source_degrees = a.get_string("source_degree") == "in" ? SourceDegrees::own_in_degree : SourceDegrees::out_degree;
    return field;
  };
  return def;
}

}  // namespace

AttributeSpec source_degree_attribute() {
  return drawn_as(
      {"source_degree", std::string("out"), std::string(kSourceDegreeHelp), {std::string("out"), std::string("in")}},
      AttributeDraw::one_of({std::string("out"), std::string("in")}), {{{"source_degree", std::string("in")}}});
}

AttributeSpec duplicate_edges_attribute() {
  return selfchecked_choices({"duplicate_edges", std::string("separate"), std::string(kDuplicateEdgesHelp),
                              {std::string("separate"), std::string("coalesced")}});
}

// zero_degree acts only with source_degree = in, on a source without in-edges.
AttributeSpec zero_degree_attribute() {
  return selfchecked(
      {"zero_degree", std::string("zero"), std::string(kZeroDegreeHelp), {std::string("zero"), std::string("one")}},
      {{{"source_degree", std::string("in")}, {"zero_degree", std::string("one")}}});
}

// gspmm, gsddmm, attention, segment_reduce, segment_aggregation and segment_mm: their own files (gspmm_target.cpp, …).
std::vector<TargetDef> op_targets() {
  return {spmm_target(),          spmm_transposed_target(), spmm_ve_target(),     spmm_ve_transposed_target(),
          sddmm_dot_target(),     sddmm_add_target(),       edge_softmax_target(), eshuffle_target(false),
          eshuffle_target(true),  normalized_spmm_target(),   gspmm_target(),       gsddmm_target(),
          attention_target(),     sddmm_spmm_target(),      segment_reduce_target(),
          segment_aggregation_target(), segment_mm_target(), gather_mm_target(), typed_linear_target()};
}

}  // namespace gnncheck::oracle
