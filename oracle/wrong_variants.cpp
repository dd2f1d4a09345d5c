#include "oracle/wrong_variants.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "oracle/degree_norm.h"
#include "oracle/spmm_ve.h"

namespace gnncheck::oracle {
namespace {

// The oracle's float64 answer; nullopt when the oracle rejects the transformed case.
std::optional<Result> answer(const Case& c) {
  Result r = evaluate(c, Precision::float64);
  if (!r.ok()) return std::nullopt;
  return r;
}

bool is_edge_kind(TensorKind k) { return k == TensorKind::edges || k == TensorKind::edges_csc; }

const Tensor* case_tensor(const Case& c, const std::string& name) {
  if (auto it = c.inputs.find(name); it != c.inputs.end()) return &it->second;
  if (auto it = c.parameters.find(name); it != c.parameters.end()) return &it->second;
  return nullptr;
}

// Every input slot of `kind` the case holds, by name, with the map holding it.
std::vector<std::pair<TensorMap*, std::string>> slots_of(Case& c, const TargetSpec& spec, TensorKind kind) {
  std::vector<std::pair<TensorMap*, std::string>> out;
  for (const auto& slot : spec.inputs) {
    if (slot.kind != kind) continue;
    if (c.inputs.count(slot.name)) out.emplace_back(&c.inputs, slot.name);
    if (c.parameters.count(slot.name)) out.emplace_back(&c.parameters, slot.name);
  }
  for (const auto& slot : spec.outputs)
    if (slot.kind == kind && c.grad_outputs.count(slot.name)) out.emplace_back(&c.grad_outputs, slot.name);
  return out;
}

// Rows of `t` taken in the order `from` (row r of the result is row from[r] of t).
Tensor gather_rows(const Tensor& t, const std::vector<index_t>& from) {
  Tensor out(t.shape(), 0.0);
  const index_t w = t.row_size();
  for (size_t r = 0; r < from.size(); ++r)
    for (index_t k = 0; k < w; ++k) out[static_cast<index_t>(r) * w + k] = t[from[r] * w + k];
  return out;
}

// The inverse of gather_rows: row from[r] of the result is row r of t.
Tensor scatter_rows(const Tensor& t, const std::vector<index_t>& from) {
  Tensor out(t.shape(), 0.0);
  const index_t w = t.row_size();
  for (size_t r = 0; r < from.size(); ++r)
    for (index_t k = 0; k < w; ++k) out[from[r] * w + k] = t[static_cast<index_t>(r) * w + k];
  return out;
}

bool all_zero(const Tensor& t) {
  return std::all_of(t.values().begin(), t.values().end(), [](double v) { return v == 0.0; });
}

WrongVariant zero_gradient(const std::string& input) {
  return {fmt::format("zero_gradient_{}", input), "gradient_dropped",
          fmt::format("the gradient of '{}' is zero: a gradient term dropped (no gradient reaches it, the TLPGNN and "
                      "missing-bias bug class)",
                      input),
          10, [input](const Case& c, const VariantContext&) -> std::optional<Result> {
            if (c.grad_outputs.empty() || !case_tensor(c, input)) return std::nullopt;
            std::optional<Result> r = answer(c);
            if (!r || !r->gradients.count(input) || all_zero(r->gradients.at(input))) return std::nullopt;
            Tensor& g = r->gradients.at(input);
            g = Tensor(g.shape(), 0.0);
            return r;
          }};
}

// The correct outputs with the gradients of the same case on the transposed graph: every
// aggregation of the backward walks A where it needs Aᵀ. Square graphs only (the shapes stay);
// edge tensors are carried to Aᵀ's edge order (Aᵀ's CSR position p is A's CSC position p, edge
// edge_perm[p]) and their gradients back.
WrongVariant transposed_graph_in_backward() {
  return {"transposed_graph_in_backward", "a_for_at",
          "backward uses A where Aᵀ is needed (the TC-GNN bug class)", 20,
          [](const Case& c, const VariantContext&) -> std::optional<Result> {
            if (c.grad_outputs.empty() || !c.graph || !c.graph->is_square() || c.graph->is_symmetric())
              return std::nullopt;
            const TargetSpec& spec = entry_of(c).spec;
            for (const auto* slots : {&spec.inputs, &spec.outputs})
              for (const auto& slot : *slots)
                if (slot.kind == TensorKind::edges_csc) return std::nullopt;
            const Graph& g = *c.graph;
            std::vector<index_t> dst, src, from;
            for (index_t p = 0; p < g.num_edges(); ++p) {
              const index_t e = g.edge_perm()[p];
              dst.push_back(g.col_idx()[e]);
              src.push_back(g.row_of_edge()[e]);
              from.push_back(e);
            }
            Case t = c;
            t.graph = std::make_shared<const Graph>(Graph::from_edges(g.n_src(), g.n_dst(), dst, src));
            for (auto& [map, name] : slots_of(t, spec, TensorKind::edges)) (*map)[name] = gather_rows(map->at(name), from);
            std::optional<Result> correct = answer(c), transposed = answer(t);
            if (!correct || !transposed) return std::nullopt;
            Result r = std::move(*correct);
            r.gradients = std::move(transposed->gradients);
            for (const auto& slot : spec.inputs)
              if (slot.kind == TensorKind::edges && r.gradients.count(slot.name))
                r.gradients[slot.name] = scatter_rows(r.gradients.at(slot.name), from);
            return r;
          }};
}

// The case evaluated with another value of one enumerated attribute.
WrongVariant other_choice(const AttributeSpec& attribute, const AttrValue& value) {
  const std::string shown = to_plain_string(value);
  return {fmt::format("{}={}", attribute.name, shown), fmt::format("convention_{}", attribute.name),
          fmt::format("computes with {0} = {1} where the case asks for another value: the convention {0} confused",
                      attribute.name, shown),
          30, [name = attribute.name, value](const Case& c, const VariantContext&) -> std::optional<Result> {
            const Attributes attrs = with_defaults(entry_of(c).spec, c.attributes);
            if (attrs.has(name) && attrs.values().at(name) == value) return std::nullopt;
            Case t = c;
            t.attributes.set(name, value);
            return answer(t);
          }};
}

WrongVariant one_head_for_all_heads() {
  return {"one_head_for_all_heads", "one_head", "head 0's values used for every head (the per-head offset ignored)", 40,
          [](const Case& c, const VariantContext&) -> std::optional<Result> {
            const TargetSpec& spec = entry_of(c).spec;
            Case t = c;
            bool changed = false;
            for (auto& [map, name] : slots_of(t, spec, TensorKind::edges)) {
              if (map == &t.grad_outputs) continue;
              Tensor& w = map->at(name);
              const index_t heads = w.rank() >= 2 ? w.row_size() : 1;
              if (heads < 2) continue;
              for (index_t e = 0; e < w.rows(); ++e)
                for (index_t h = 1; h < heads; ++h) {
                  changed = changed || w.at(e, h) != w.at(e, 0);
                  w.at(e, h) = w.at(e, 0);
                }
            }
            if (!changed) return std::nullopt;
            return answer(t);
          }};
}

// Targets without edge tensors only: a collapsed edge would need a value.
WrongVariant duplicates_coalesced() {
  return {"duplicates_coalesced", "duplicates_collapsed",
          "duplicate edges collapsed into one (the multigraph coalesced before aggregating)", 50,
          [](const Case& c, const VariantContext&) -> std::optional<Result> {
            if (!c.graph) return std::nullopt;
            const Graph& g = *c.graph;
            std::vector<index_t> dst, src;
            for (index_t i = 0; i < g.n_dst(); ++i) {
              std::set<index_t> seen;
              for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e)
                if (seen.insert(g.col_idx()[e]).second) {
                  dst.push_back(i);
                  src.push_back(g.col_idx()[e]);
                }
            }
            if (static_cast<index_t>(dst.size()) == g.num_edges()) return std::nullopt;
            Case t = c;
            t.graph = std::make_shared<const Graph>(Graph::from_edges(g.n_dst(), g.n_src(), dst, src));
            return answer(t);
          }};
}

// [E, H] read as [H, E]: element (e, h) taken from flat position h·E + e, and written there.
Tensor transposed_layout(const Tensor& t, bool reading) {
  Tensor out(t.shape(), 0.0);
  const index_t rows = t.rows(), heads = t.row_size();
  for (index_t e = 0; e < rows; ++e)
    for (index_t h = 0; h < heads; ++h) {
      if (reading) out[e * heads + h] = t[h * rows + e];
      else out[h * rows + e] = t[e * heads + h];
    }
  return out;
}

WrongVariant edge_layout_transposed() {
  return {"edge_layout_transposed", "edge_layout", "[E, H] edge tensors read and written as [H, E] (the layout transposed)",
          60, [](const Case& c, const VariantContext&) -> std::optional<Result> {
            const TargetSpec& spec = entry_of(c).spec;
            Case t = c;
            bool any = false;
            for (auto& [map, name] : slots_of(t, spec, TensorKind::edges)) {
              Tensor& w = map->at(name);
              if (w.rank() < 2 || w.row_size() < 2 || w.rows() < 2) continue;
              w = transposed_layout(w, true);
              any = true;
            }
            if (!any) return std::nullopt;
            std::optional<Result> r = answer(t);
            if (!r) return std::nullopt;
            for (const auto& slot : spec.outputs)
              if (slot.kind == TensorKind::edges && r->outputs.count(slot.name) && r->outputs.at(slot.name).rank() >= 2)
                r->outputs[slot.name] = transposed_layout(r->outputs.at(slot.name), false);
            for (const auto& slot : spec.inputs)
              if (slot.kind == TensorKind::edges && r->gradients.count(slot.name) && r->gradients.at(slot.name).rank() >= 2)
                r->gradients[slot.name] = transposed_layout(r->gradients.at(slot.name), false);
            return r;
          }};
}

// The previous call's inputs answered in place of this case's (with this case's output gradients):
// an answer left over from the call before.
WrongVariant previous_case_answer() {
  return {"previous_case_answer", "stale_state",
          "the answer computed from the previous call's inputs: state left over from the call before", 15,
          [](const Case& c, const VariantContext& context) -> std::optional<Result> {
            if (!context.previous || context.previous->target != c.target) return std::nullopt;
            Case t = *context.previous;
            t.grad_outputs = c.grad_outputs;
            return answer(t);
          }};
}

}  // namespace

WrongVariant softmax_backward_without_subtraction() {
  return {"softmax_backward_without_subtraction", "softmax_backward_no_subtraction",
          "the softmax backward without its subtraction term: alpha ⊙ grad_alpha instead of alpha ⊙ (grad_alpha − "
          "Σ_row alpha·grad_alpha)",
          35, [](const Case& c, const VariantContext&) -> std::optional<Result> {
            if (c.grad_outputs.empty()) return std::nullopt;
            std::optional<Result> r = answer(c);
            if (!r) return std::nullopt;
            const Tensor& alpha = r->outputs.at("alpha");
            const Tensor& grad_alpha = c.grad_outputs.at("alpha");
            Tensor g = alpha;
            for (index_t k = 0; k < g.size(); ++k) g[k] *= grad_alpha[k];
            r->gradients["logits"] = std::move(g);
            return r;
          }};
}

WrongVariant backward_normalized_in_forward_order() {
  return {"backward_normalized_in_forward_order", "degree_side",
          "the backward normalized in the forward's order: D_dst^-1/2 Aᵀ D_src^-1/2 ḡ instead of D_src^-1/2 Aᵀ "
          "D_dst^-1/2 ḡ (row_mean: D^-1 Aᵀ ḡ instead of Aᵀ D^-1 ḡ), the degrees of the wrong sides",
          35, [](const Case& c, const VariantContext&) -> std::optional<Result> {
            if (c.grad_outputs.empty() || !c.graph || !c.graph->is_square()) return std::nullopt;
            const Attributes attrs = with_defaults(entry_of(c).spec, c.attributes);
            const DegreeNorm norm = parse_degree_norm(attrs.get_string("norm"));
            if (norm == DegreeNorm::symmetric && parse_source_degree(attrs.get_string("source_degree")) == SourceDegree::in)
              return std::nullopt;
            std::optional<Result> r = answer(c);
            if (!r) return std::nullopt;
            // Aᵀ with edge values built from the swapped degrees: the gradient enters at row_e's
            // out-degree and leaves at col_e's in-degree.
            const Graph& g = *c.graph;
            Tensor wrong_w({g.num_edges(), 1});
            for (index_t e = 0; e < g.num_edges(); ++e) {
              const index_t i = g.row_of_edge()[e], j = g.col_idx()[e];
              wrong_w[e] = norm == DegreeNorm::symmetric
                               ? 1.0 / std::sqrt(static_cast<double>(g.out_degree(i) * g.in_degree(j)))
                               : (g.in_degree(j) > 0 ? 1.0 / static_cast<double>(g.in_degree(j)) : 0.0);
              if (!std::isfinite(wrong_w[e])) wrong_w[e] = 0.0;
            }
            r->gradients["x"] = spmm_ve_transposed_forward(g, wrong_w, c.grad_outputs.at("y"));
            return r;
          }};
}

WrongVariant weight_gradient_to_next_relation() {
  return {"weight_gradient_to_next_relation", "relation_gradient_misrouted",
          "the weight gradient of relation r accumulated into relation r + 1 (a relation's gradient summed into the "
          "wrong relation)",
          35, [](const Case& c, const VariantContext&) -> std::optional<Result> {
            if (c.grad_outputs.empty() || !c.graph) return std::nullopt;
            std::optional<Result> r = answer(c);
            if (!r) return std::nullopt;
            const Tensor& correct = r->gradients.at("weight");
            Tensor moved(correct.shape(), 0.0);
            const index_t rows = correct.rows(), w = correct.row_size();
            for (index_t t = 0; t < rows; ++t)
              for (index_t v = 0; v < w; ++v) moved[((t + 1) % rows) * w + v] = correct[t * w + v];
            if (moved.values() == correct.values()) return std::nullopt;
            r->gradients["weight"] = std::move(moved);
            return r;
          }};
}

WrongVariant weight_not_transposed_in_backward(const std::string& types_name) {
  return {"weight_not_transposed_in_backward", "weight_not_transposed",
          "grad_x = grad_y · weight[t] instead of grad_y · weight[t]ᵀ (the forward weight used where its transpose is "
          "needed)",
          36, [types_name](const Case& c, const VariantContext&) -> std::optional<Result> {
            if (c.grad_outputs.empty() || !c.graph) return std::nullopt;
            std::optional<Result> r = answer(c);
            if (!r) return std::nullopt;
            const Tensor& weight = c.parameters.at("weight");
            const Tensor& types = c.inputs.at(types_name);
            const index_t n = weight.shape()[1];
            if (n < 2 || weight.shape()[2] != n) return std::nullopt;
            const Tensor& grad_y = c.grad_outputs.at("y");
            Tensor grad_x(r->gradients.at("x").shape(), 0.0);
            for (index_t k = 0; k < types.size(); ++k) {
              const auto t = static_cast<index_t>(types[k]);
              for (index_t f = 0; f < n; ++f) {
                double sum = 0.0;
                for (index_t o = 0; o < n; ++o) sum += grad_y[k * n + o] * weight[(t * n + o) * n + f];
                grad_x[k * n + f] = sum;
              }
            }
            if (grad_x.values() == r->gradients.at("x").values()) return std::nullopt;
            r->gradients["x"] = std::move(grad_x);
            return r;
          }};
}

WrongVariant rows_left_sorted_by_type(const std::string& types_name) {
  return {"rows_left_sorted_by_type", "rows_left_sorted",
          "y's rows left in the order of a stable sort by type instead of the rows' own (sorted for a segment "
          "matmul, never permuted back)",
          37, [types_name](const Case& c, const VariantContext&) -> std::optional<Result> {
            if (!c.graph) return std::nullopt;
            std::optional<Result> r = answer(c);
            if (!r) return std::nullopt;
            const Tensor& types = c.inputs.at(types_name);
            std::vector<index_t> order(static_cast<std::size_t>(types.size()));
            for (index_t k = 0; k < types.size(); ++k) order[static_cast<std::size_t>(k)] = k;
            std::stable_sort(order.begin(), order.end(), [&](index_t a, index_t b) { return types[a] < types[b]; });
            if (std::is_sorted(order.begin(), order.end())) return std::nullopt;
            Tensor& y = r->outputs.at("y");
            Tensor sorted(y.shape(), 0.0);
            for (std::size_t j = 0; j < order.size(); ++j)
              std::copy_n(y.row(order[j]), y.row_size(), sorted.row(static_cast<index_t>(j)));
            y = std::move(sorted);
            return r;
          }};
}

std::vector<WrongVariant> generic_wrong_variants(const TargetSpec& spec) {
  std::vector<WrongVariant> out;
  bool edge_tensors = false, edge_inputs = false, differentiable = false;
  for (const auto& slot : spec.inputs) {
    edge_inputs = edge_inputs || slot.kind == TensorKind::edges;
    edge_tensors = edge_tensors || is_edge_kind(slot.kind);
    differentiable = differentiable || slot.differentiable;
    if (slot.differentiable) out.push_back(zero_gradient(slot.name));
  }
  for (const auto& slot : spec.outputs) edge_tensors = edge_tensors || is_edge_kind(slot.kind);
  out.push_back(previous_case_answer());
  if (differentiable) out.push_back(transposed_graph_in_backward());
  for (const auto& attribute : spec.attributes)
    for (const auto& value : attribute.choices) out.push_back(other_choice(attribute, value));
  if (edge_inputs) out.push_back(one_head_for_all_heads());
  if (!edge_tensors) out.push_back(duplicates_coalesced());
  if (edge_inputs) out.push_back(edge_layout_transposed());
  return out;
}

}  // namespace gnncheck::oracle
