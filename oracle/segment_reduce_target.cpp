// The catalogue entry of segment reduction (DGL's segment_reduce, torch.segment_reduce, PyG's
// segment): each destination row's edges are one contiguous segment of x's rows, in edge-id order,
// reduced by sum, mean, max or min. It is gspmm (oracle/gspmm.h) with the message copy_e on one
// head, so it shares gspmm's oracle, closed form, valid gradients at ties and kinks.
#include "oracle/catalogue_support.h"
#include "oracle/gspmm.h"

namespace gnncheck::oracle {
namespace {

using namespace catalogue;

// x is gspmm's e.
const GspmmInputNames kNames{"", "x"};

GspmmConfig segment_config(const Attributes& a) {
  GspmmConfig config;
  config.message = MessageOp::copy_e;
  config.reduce = parse_choice<Reduction>(a, "segment_reduce", "reduce", kReductionNames);
  config.heads = 1;
  config.features = positive_size(a, "segment_reduce", "features");
  config.e_broadcast = Broadcast::none;
  config.empty_rows = parse_choice<EmptyRows>(a, "segment_reduce", "empty_rows", kEmptyRowsNames);
  return config;
}

template <class T>
Evaluation<T> evaluate_segments(const Graph& g, const Attributes& a, const TensorMapOf<T>& in,
                                const TensorMapOf<T>& gout, TiePolicy ties) {
  const GspmmConfig config = segment_config(a);
  const DenseTensor<T>& x = get(in, "x");
  Evaluation<T> ev;
  ev.outputs["y"] = gspmm_forward<T>(g, config, nullptr, &x);
  if (!gout.empty()) ev.gradients["x"] = gspmm_backward<T>(g, config, nullptr, &x, get(gout, "y"), ties).grad_e;
  return ev;
}

GspmmConfig case_config(const Case& c) {
  return segment_config(with_defaults(entry_of(c).spec, c.attributes));
}

}  // namespace

TargetDef segment_reduce_target() {
  TargetDef def = make_target(
      {"segment_reduce", false,
       "y[i] = reduce of x over the segment of row i (its edges, in edge-id order): segment sum, mean, max or min",
       {{"x", TensorKind::edges, true}},
       {{"y", TensorKind::dst_nodes, true}},
       {drawn_choice("reduce", "sum", "the reduction per segment: sum, mean, max or min", kReductionNames),
        features_attribute(),
        empty_rows_attribute("max and min over an empty segment: zero (PyG, DGL) or identity (−∞ for max, +∞ for min)",
                             kEmptyRowsNames)},
       false,
       "y[i, f] = reduce_{k ∈ [row_ptr[i], row_ptr[i+1])} x[k, f]    (reduce: sum, mean, max or min; f < features)",
       {"x is [E, features]: one row per edge in edge-id order, so row i's edges are the contiguous rows "
        "row_ptr[i] … row_ptr[i+1]−1 of x (segment lengths = the destinations' in-degrees, duplicate edges "
        "counted). Only the graph's row pointers matter; its columns are not read.",
        "sum and mean give 0 on an empty segment; max and min give the convention empty_rows there: 0 (zero) or "
        "−∞ / +∞ (identity). mean divides by the segment's length.",
        "Backward: grad_x[k] = grad_y[i] for sum, grad_y[i] / length(i) for mean, and for max and min grad_y[i] on the "
        "selected row of the segment only (0 elsewhere).",
        "Ties: where several rows of a segment give the max (or min) within rounding, any convex combination of them "
        "may receive the gradient — all to the first or the last, an even split (torch.segment_reduce, "
        "torch.scatter_reduce) — and every one is accepted; the oracle sends it to the first."}},
      [](const Graph& g, const Attributes& a) { return Shapes{{"x", {g.num_edges(), segment_config(a).width()}}}; },
      [](const Graph& g, const Attributes& a) { return Shapes{{"y", {g.n_dst(), segment_config(a).width()}}}; },
      []<class T>(const Graph& g, const Attributes& a, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        return evaluate_segments(g, a, in, gout, TiePolicy::first);
      });
  def.spec.tolerance = {ToleranceKind::closed_form, 0,
                        "per term: x and grad_y rounded, mean's 1/length (gspmm's closed form under copy_e; "
                        "oracle/gspmm.cpp)"};
  def.spec.tolerance.storage_roundings = 2;  // a term reads at most two stored inputs: x and grad_y
  def.closed_form_terms = [](const Case& c, double u) {
    const GspmmConfig config = case_config(c);
    const auto grad_y = c.grad_outputs.find("y");
    const bool gradients = grad_y != c.grad_outputs.end();
    GspmmTerms t = gspmm_closed_form_terms(*c.graph, config, nullptr, &c.inputs.at("x"),
                                           gradients ? &grad_y->second : nullptr, u);
    TargetDef::ClosedFormTerms out;
    out.abs_sums.outputs["y"] = std::move(t.y_abs);
    out.term_counts.outputs["y"] = std::move(t.y_count);
    if (gradients)
      out.abs_sums.gradients["x"] = std::move(t.grad_e_abs), out.term_counts.gradients["x"] = std::move(t.grad_e_count);
    return out;
  };
  def.subgradients = [](const Case& c, double u) {
    return gspmm_subgradients(*c.graph, case_config(c), nullptr, &c.inputs.at("x"), c.grad_outputs.at("y"), u, kNames);
  };
  def.kinks.arguments = [](const Case& c, const Attributes& a, KinkArguments& k) {
    gspmm_kink_arguments(c, segment_config(a), kNames, k);
  };
  def.kinks.ties = true;
  // The other one-sided derivative at a tie: the last tied row instead of the first.
  def.kinks.evaluate_f32_right = [](const Graph& g, const Attributes& a, const TensorMapOf<float>& in,
                                    const TensorMapOf<float>& gout) {
    return evaluate_segments(g, a, in, gout, TiePolicy::last);
  };
  // gpu/op_targets.cpp: gpu/gspmm.cu under copy_e, no edge_perm.
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = false};
  return def;
}

}  // namespace gnncheck::oracle
