// The catalogue entry of segment_mm (pyg-lib's segment_matmul, DGL's segment_mm): one weight matrix
// per contiguous segment of edge rows (one per node or edge type in R-GCN and HGT), the segments given
// by the graph as in segment_reduce. Its oracle is oracle/segment_mm.h; besides the generic wrong
// variants it carries two of its own.
#include <optional>
#include <utility>

#include "oracle/broadcast_operands.h"
#include "oracle/catalogue_support.h"
#include "oracle/segment_mm.h"
#include "oracle/wrong_variants.h"

namespace gnncheck::oracle {
namespace {

using namespace catalogue;

// segment_mm's own mistakes (besides the generic ones): each the float64 answer rewritten.
std::optional<Result> segment_mm_answer(const Case& c) {
  if (c.grad_outputs.empty() || !c.graph) return std::nullopt;
  Result r = evaluate(c, Precision::float64);
  if (!r.ok()) return std::nullopt;
  return r;
}

// The weight gradient of segment i written to segment i + 1 (the segment index off by one in the
// scatter of grad_weight; the last segment's is lost, the first gets 0).
WrongVariant segment_mm_weight_gradient_to_next_segment() {
  return {"weight_gradient_to_next_segment", "segment_off_by_one",
          "the weight gradient of segment i accumulated into segment i + 1 (a segment index or boundary off by one)", 35,
          [](const Case& c, const VariantContext&) -> std::optional<Result> {
            std::optional<Result> r = segment_mm_answer(c);
            if (!r) return std::nullopt;
            const Tensor& correct = r->gradients.at("weight");
            Tensor shifted(correct.shape(), 0.0);
            const index_t w = correct.row_size();
            for (index_t i = 1; i < correct.rows(); ++i)
              for (index_t v = 0; v < w; ++v) shifted[i * w + v] = correct[(i - 1) * w + v];
            if (shifted.values() == correct.values()) return std::nullopt;
            r->gradients["weight"] = std::move(shifted);
            return r;
          }};
}

// grad_x from weight[i] where weight[i]ᵀ is needed; only square matrices (in = out ≥ 2) keep the shapes.
WrongVariant segment_mm_weight_not_transposed_in_backward() {
  return {"weight_not_transposed_in_backward", "weight_not_transposed",
          "grad_x = grad_y · weight[i] instead of grad_y · weight[i]ᵀ (the weight not transposed in backward)", 36,
          [](const Case& c, const VariantContext&) -> std::optional<Result> {
            std::optional<Result> r = segment_mm_answer(c);
            if (!r) return std::nullopt;
            const Tensor& weight = c.inputs.at("weight");
            const index_t n = weight.rank() == 3 ? weight.shape()[1] : 0;
            if (n < 2 || weight.shape()[2] != n) return std::nullopt;
            const Tensor& grad_y = c.grad_outputs.at("y");
            const Graph& g = *c.graph;
            Tensor grad_x(r->gradients.at("x").shape(), 0.0);
            for (index_t k = 0; k < g.num_edges(); ++k) {
              const index_t i = g.row_of_edge()[k];
              for (index_t f = 0; f < n; ++f) {
                double sum = 0.0;
                for (index_t o = 0; o < n; ++o) sum += grad_y[k * n + o] * weight[(i * n + o) * n + f];
                grad_x[k * n + f] = sum;
              }
            }
            if (grad_x.values() == r->gradients.at("x").values()) return std::nullopt;
            r->gradients["x"] = std::move(grad_x);
            return r;
          }};
}

struct SegmentMmWidths {
  index_t in, out;
};
SegmentMmWidths segment_mm_widths(const Attributes& a) {
  return {positive_size(a, "segment_mm", "in_features"), positive_size(a, "segment_mm", "out_features")};
}

}  // namespace

TargetDef segment_mm_target() {
  TargetDef def = make_target(
      {"segment_mm", false,
       "y[k] = x[k] · weight[i] for every row k of segment i (its edges, in edge-id order): one matrix per segment",
       {{"x", TensorKind::edges, true}, {"weight", TensorKind::dst_nodes, true}},
       {{"y", TensorKind::edges, true}},
       {{"in_features", std::int64_t{8}, "width of x's rows and of each weight matrix's rows; ≥ 1"},
        {"out_features", std::int64_t{5}, "width of y's rows and of each weight matrix's columns; ≥ 1"}},
       false,
       "y[k, o] = Σ_f x[k, f] · weight[i, f, o]  for k ∈ [row_ptr[i], row_ptr[i+1])    (f < in_features, "
       "o < out_features)",
       {"x is [E, in_features]: one row per edge in edge-id order, so segment i is the contiguous rows row_ptr[i] … "
        "row_ptr[i+1]−1 of x (segment lengths = the destinations' in-degrees, duplicate edges counted). Only the "
        "graph's row pointers matter; its columns are not read.",
        "weight is [n_dst, in_features, out_features]: one matrix per segment, applied as x · weight[i] (pyg-lib's "
        "segment_matmul(inputs, ptr, other), DGL's segment_mm(a, b, seglen_a) with ptr = row_ptr, seglen = in-degrees). "
        "y is [E, out_features], in x's row order.",
        "An empty segment produces no rows; its weight still exists and gets a zero gradient.",
        "Backward: grad_x[k] = grad_y[k] · weight[i]ᵀ (grad_x[k, f] = Σ_o grad_y[k, o] · weight[i, f, o]); "
        "grad_weight[i] = Σ_{k ∈ segment i} x[k]ᵀ · grad_y[k] (grad_weight[i, f, o] = Σ_k x[k, f] · grad_y[k, o])."}},
      [](const Graph& g, const Attributes& a) {
        const SegmentMmWidths n = segment_mm_widths(a);
        return Shapes{{"x", {g.num_edges(), n.in}}, {"weight", {g.n_dst(), n.in, n.out}}};
      },
      [](const Graph& g, const Attributes& a) { return Shapes{{"y", {g.num_edges(), segment_mm_widths(a).out}}}; },
      []<class T>(const Graph& g, const Attributes&, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        Evaluation<T> ev;
        const auto& x = get(in, "x");
        const auto& weight = get(in, "weight");
        ev.outputs["y"] = segment_mm_forward(g, x, weight);
        if (!gout.empty()) {
          auto grads = segment_mm_backward(g, x, weight, get(gout, "y"));
          ev.gradients["x"] = std::move(grads.grad_x);
          ev.gradients["weight"] = std::move(grads.grad_w);
        }
        return ev;
      });
  // Every element is a sum of products of two values (x·weight; grad_y·weight with k = out_features
  // for grad_x; x·grad_y with k = the segment's length for grad_weight), so the target on |inputs|
  // is Σ|terms| and on ones the term count: no closed_form_terms of its own.
  def.spec.tolerance = {ToleranceKind::closed_form, 3, "both factors rounded, their product"};
  def.spec.tolerance.storage_roundings = 2;  // the two factors; the product in the accumulation format
  def.wrong_variants = {segment_mm_weight_gradient_to_next_segment(), segment_mm_weight_not_transposed_in_backward()};
  // gpu/op_targets.cpp: gpu/segment_mm.cu, row pointers only.
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = false};
  return def;
}

}  // namespace gnncheck::oracle
