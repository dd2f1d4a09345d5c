// The catalogue entry of the generalized SpMM (oracle/gspmm.h): its spec, shapes, evaluation, the
// closed form's own terms, the valid gradients at ties, and the divisors generators keep off 0.
#include "oracle/catalogue_support.h"
#include "oracle/gspmm.h"

namespace gnncheck::oracle {
namespace {

using namespace catalogue;

// What the selfcheck tries: every message with every reduction, each broadcast of each operand
// (with mul, which reads both), and the identity on empty rows; on the large graph the two operands
// through a selection and a mean.
std::vector<Attributes> every_message_and_reduction() {
  std::vector<Attributes> variants;
  for (std::string_view message : kMessageOpNames)
    for (std::string_view reduce : kReductionNames)
      if (!(message == "copy_u" && reduce == "sum"))  // the defaults
        variants.push_back({{"message", std::string(message)}, {"reduce", std::string(reduce)}});
  return variants;
}

AttributeSpec broadcast_attribute(std::string name, std::string default_value, std::string help) {
  AttributeSpec a = drawn_choice(std::move(name), std::move(default_value), std::move(help), kBroadcastNames);
  for (const AttrValue& broadcast : a.choices)
    a.selfcheck_variants.push_back({{"message", std::string("mul")}, {a.name, broadcast}, {"heads", std::int64_t{2}}});
  return a;
}

std::vector<AttributeSpec> gspmm_attributes() {
  return {selfchecked(drawn_choice("message", "copy_u",
                                   "the message per edge: copy_u, copy_e, add, sub, mul or div of u and e",
                                   kMessageOpNames),
                      every_message_and_reduction(),
                      {{{"message", std::string("mul")}, {"reduce", std::string("max")}},
                       {{"message", std::string("div")}, {"reduce", std::string("mean")}}}),
          drawn_choice("reduce", "sum", "the reduction per destination: sum, mean, max or min",
                       kReductionNames),
          heads_attribute(), features_attribute(),
          broadcast_attribute("u_broadcast", "none",
                              "u's values per row: none (heads·features), features (one per head), heads (one per "
                              "feature) or both (one)"),
          broadcast_attribute("e_broadcast", "features",
                              "e's values per edge: none (heads·features), features (one per head), heads (one per "
                              "feature) or both (one)"),
          empty_rows_attribute("max and min over an empty row: zero (PyG, DGL) or identity (−∞ for max, +∞ for min)",
                               kEmptyRowsNames)};
}

// Evaluates gspmm on a case's inputs, by name (the unused operand is absent).
template <class T>
Evaluation<T> evaluate_gspmm(const Graph& g, const Attributes& a, const TensorMapOf<T>& in, const TensorMapOf<T>& gout,
                         TiePolicy ties) {
  const GspmmConfig config = gspmm_config(a);
  Evaluation<T> ev;
  ev.outputs["y"] = gspmm_forward(g, config, optional_tensor(in, "u"), optional_tensor(in, "e"));
  if (!gout.empty()) {
    auto grads = gspmm_backward(g, config, optional_tensor(in, "u"), optional_tensor(in, "e"), get(gout, "y"), ties);
    if (config.uses_u()) ev.gradients["u"] = std::move(grads.grad_u);
    if (config.uses_e()) ev.gradients["e"] = std::move(grads.grad_e);
  }
  return ev;
}

}  // namespace

// DGL's generalized SpMM (update_all with a binary message and a reduce) and PyG's aggregations.
TargetDef gspmm_target() {
  TargetDef def = make_target(
      {"gspmm", false, "y[i] = reduce over row i of op(u[col_e], e[e]): the generalized SpMM (message × reduction)",
       {{"u", TensorKind::src_nodes, true}, {"e", TensorKind::edges, true}},
       {{"y", TensorKind::dst_nodes, true}},
       gspmm_attributes(), false,
       "m[k, h·F + f] = op(u[col_k, ·], e[k, ·]);  y[i, h·F + f] = reduce_{k ∈ row i} m[k, h·F + f]    "
       "(F = features, h < heads; op: copy_u = u, copy_e = e, add u + e, sub u − e, mul u·e, div u / e)",
       {"u is [n_src, W_u] and e is [E, W_e] in edge-id order, where W = heads·features (broadcast none), heads "
        "(features: one value per head, used for each of its features), features (heads: one value per feature, "
        "used for every head) or 1 (both), as NumPy broadcasts [H, 1], [1, F] or [1, 1] against [H, F]. copy_u has no "
        "input e and copy_e no input u.",
        "mean divides the row's sum by the destination's in-degree, duplicate edges counted; sum and mean give 0 on an "
        "empty row. max and min give the convention empty_rows there: 0 (zero) or −∞ / +∞ (identity).",
        "Backward: grad_u[j] and grad_e[k] collect g·∂m/∂u and g·∂m/∂e of every message they enter (∂(u/e)/∂e = "
        "−u/e²), with g = grad_y[i] for sum, grad_y[i] / in_degree(i) for mean, and for max and min grad_y[i] on the "
        "selected edge only; a broadcast operand sums over the axes it was broadcast along.",
        "Ties: where several edges of a row give the max (or min) within rounding, any convex combination of them may "
        "receive the gradient — all to the first or the last, an even split (torch.scatter_reduce) — and every one "
        "is accepted; the oracle sends it to the first in edge-id order.",
        "Divisors: with message div the generators keep e at least 1/2 from 0; a case with e = 0 has no finite "
        "answer to check."}},
      [](const Graph& g, const Attributes& a) {
        const GspmmConfig config = gspmm_config(a);
        Shapes shapes;
        if (config.uses_u()) shapes["u"] = {g.n_src(), config.columns(config.u_broadcast)};
        if (config.uses_e()) shapes["e"] = {g.num_edges(), config.columns(config.e_broadcast)};
        return shapes;
      },
      [](const Graph& g, const Attributes& a) { return Shapes{{"y", {g.n_dst(), gspmm_config(a).width()}}}; },
      []<class T>(const Graph& g, const Attributes& a, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        return evaluate_gspmm(g, a, in, gout, TiePolicy::first);
      });
  def.spec.tolerance = {ToleranceKind::closed_form, 0,
                        "per term: the operands and grad_y rounded, the operation and its derivative, mean's 1/deg "
                        "(1 to 9 roundings by op and reduction; oracle/gspmm.cpp)"};
  def.spec.tolerance.storage_roundings = 3;  // a term reads at most three stored inputs: u, e and grad_y
  def.closed_form_terms = [](const Case& c, double u) {
    const Attributes attrs = with_defaults(entry_of(c).spec, c.attributes);
    const auto grad_y = c.grad_outputs.find("y");
    const GspmmConfig config = gspmm_config(attrs);
    const bool gradients = grad_y != c.grad_outputs.end();
    GspmmTerms t = gspmm_closed_form_terms(*c.graph, config, optional_tensor(c.inputs, "u"), optional_tensor(c.inputs, "e"),
                                       gradients ? &grad_y->second : nullptr, u);
    TargetDef::ClosedFormTerms out;
    out.abs_sums.outputs["y"] = std::move(t.y_abs);
    out.term_counts.outputs["y"] = std::move(t.y_count);
    if (gradients && config.uses_u())
      out.abs_sums.gradients["u"] = std::move(t.grad_u_abs), out.term_counts.gradients["u"] = std::move(t.grad_u_count);
    if (gradients && config.uses_e())
      out.abs_sums.gradients["e"] = std::move(t.grad_e_abs), out.term_counts.gradients["e"] = std::move(t.grad_e_count);
    return out;
  };
  def.subgradients = [](const Case& c, double u) {
    const Attributes attrs = with_defaults(entry_of(c).spec, c.attributes);
    return gspmm_subgradients(*c.graph, gspmm_config(attrs), optional_tensor(c.inputs, "u"), optional_tensor(c.inputs, "e"),
                          c.grad_outputs.at("y"), u);
  };
  def.kinks.arguments = [](const Case& c, const Attributes& a, KinkArguments& k) { gspmm_kink_arguments(c, a, k); };
  def.kinks.ties = true;
  // gpu/gspmm.cu: CSR rows and atomics, no edge_perm.
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = false};
  // The other one-sided derivative at a tie: the last tied edge instead of the first.
  def.kinks.evaluate_f32_right = [](const Graph& g, const Attributes& a, const TensorMapOf<float>& in,
                                const TensorMapOf<float>& gout) {
    return evaluate_gspmm(g, a, in, gout, TiePolicy::last);
  };
  def.divisors = [](const Attributes& a) {
    return gspmm_config(a).message == MessageOp::div ? std::vector<std::string>{"e"} : std::vector<std::string>{};
  };
  return def;
}


}  // namespace gnncheck::oracle
