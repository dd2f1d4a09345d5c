// The catalogue entry of the generalized SDDMM (oracle/gsddmm.h): its spec, shapes, evaluation, the
// closed form's own terms and the divisor generators keep off 0.
#include "oracle/catalogue_support.h"
#include "oracle/gsddmm.h"

namespace gnncheck::oracle {
namespace {

using namespace catalogue;

std::vector<AttributeSpec> gsddmm_attributes() {
  const char* side_help = "u (the edge's source: row col_k of n_src), v (its destination: row row_k of n_dst) or e (the "
                          "edge: row k of E)";
  const char* broadcast_help = "values per row: none (heads·features), features (one per head), heads (one per "
                               "feature) or both (one)";
  // What the selfcheck tries: every op on every pair of sides (the same side twice included), and
  // each broadcast of each operand through a quotient and an inner product; on the large graph an
  // edge operand divided by a source operand and a broadcast inner product of a destination and an
  // edge operand (with the defaults' u·v, every one of its six inputs).
  std::vector<Attributes> every_op_and_side;
  for (std::string_view op : kSddmmOpNames)
    for (std::string_view lhs : kOperandSideNames)
      for (std::string_view rhs : kOperandSideNames)
        if (!(op == "dot" && lhs == "u" && rhs == "v"))  // the defaults
          every_op_and_side.push_back(
              {{"op", std::string(op)}, {"lhs", std::string(lhs)}, {"rhs", std::string(rhs)}});
  const auto broadcast_attribute = [&](std::string name, std::string help) {
    AttributeSpec a = drawn_choice(std::move(name), "none", std::move(help), kBroadcastNames);
    for (const AttrValue& broadcast : a.choices)
      for (const char* op : {"div", "dot"})
        a.selfcheck_variants.push_back({{"op", std::string(op)}, {a.name, broadcast}, {"lhs", std::string("e")},
                                        {"heads", std::int64_t{2}}});
    return a;
  };
  return {selfchecked(drawn_choice("op", "dot",
                                   "the value per edge: add, sub, mul or div of lhs and rhs, dot (their inner product "
                                   "over the features, one value per head), copy_lhs or copy_rhs",
                                   kSddmmOpNames),
                      std::move(every_op_and_side),
                      {{{"op", std::string("div")}, {"lhs", std::string("e")}, {"rhs", std::string("u")}},
                       {{"op", std::string("dot")}, {"lhs", std::string("v")}, {"rhs", std::string("e")},
                        {"rhs_broadcast", std::string("heads")}, {"heads", std::int64_t{2}}}}),
          drawn_choice("lhs", "u", fmt::format("where lhs lives: {}", side_help), kOperandSideNames),
          drawn_choice("rhs", "v", fmt::format("where rhs lives: {}", side_help), kOperandSideNames),
          heads_attribute(), features_attribute(),
          broadcast_attribute("lhs_broadcast", fmt::format("lhs's {}", broadcast_help)),
          broadcast_attribute("rhs_broadcast", fmt::format("rhs's {}", broadcast_help))};
}

// The operand inputs of a case's attributes (one for a copy), each with its shape.
Shapes operand_shapes(const Graph& g, const GsddmmConfig& config) {
  Shapes shapes;
  if (config.uses_lhs()) shapes[lhs_input_name(config)] = {side_rows(g, config.lhs), config.columns(config.lhs_broadcast)};
  if (config.uses_rhs()) shapes[rhs_input_name(config)] = {side_rows(g, config.rhs), config.columns(config.rhs_broadcast)};
  return shapes;
}

template <class T>
const DenseTensor<T>* lhs_of(const GsddmmConfig& config, const TensorMapOf<T>& in) {
  return config.uses_lhs() ? optional_tensor(in, lhs_input_name(config)) : nullptr;
}
template <class T>
const DenseTensor<T>* rhs_of(const GsddmmConfig& config, const TensorMapOf<T>& in) {
  return config.uses_rhs() ? optional_tensor(in, rhs_input_name(config)) : nullptr;
}

}  // namespace

// DGL's generalized SDDMM (apply_edges with a binary op of u, v and e; dgl.ops.gsddmm).
TargetDef gsddmm_target() {
  TargetDef def = make_target(
      {"gsddmm", false,
       "out[k] = op(lhs[side_l(k)], rhs[side_r(k)]) on every edge: the generalized SDDMM (u, v or e operands)",
       {{"lhs_u", TensorKind::src_nodes, true},
        {"lhs_v", TensorKind::dst_nodes, true},
        {"lhs_e", TensorKind::edges, true},
        {"rhs_u", TensorKind::src_nodes, true},
        {"rhs_v", TensorKind::dst_nodes, true},
        {"rhs_e", TensorKind::edges, true}},
       {{"out", TensorKind::edges, true}},
       gsddmm_attributes(), false,
       "out[k, h·F + f] = op(L, R) (add L + R, sub L − R, mul L·R, div L / R, copy_lhs L, copy_rhs R);  "
       "out[k, h] = Σ_f L·R (dot);  L = lhs_S[r_S(k), h·F + f] with S = the attribute lhs, R = rhs_T[r_T(k), h·F + f] "
       "with T = rhs, r_u(k) = col_k, r_v(k) = row_k, r_e(k) = k, each column read through its broadcast    "
       "(F = features, h < heads, f < F)",
       {"The operands are the inputs named by the sides: lhs_u, lhs_v or lhs_e as lhs says, rhs_u, rhs_v or rhs_e as "
        "rhs says; u is [n_src, W] on sources (edge k reads row col_k), v [n_dst, W] on destinations (row row_k), e "
        "[E, W] on edges in edge-id order (row k). A case carries only those two (copy_lhs only lhs's, copy_rhs only "
        "rhs's); lhs and rhs may be on the same side, as two tensors (lhs = rhs = u reads lhs_u and rhs_u).",
        "W = heads·features (broadcast none), heads (features: one value per head, used for each of its features), "
        "features (heads: one value per feature, used for every head) or 1 (both), as NumPy broadcasts [H, 1], "
        "[1, F] or [1, 1] against [H, F].",
        "out is [E, heads·features] in edge-id order ([E, heads] for dot), duplicate edges each with their own value. "
        "dot is NumPy's (L * R).sum(-1) over the broadcast [H, F]: an operand broadcast over features repeats its "
        "value for each feature (a kernel that needs F values of both for dot declares the broadcasts it implements).",
        "Backward: grad_lhs_* and grad_rhs_* collect grad_out[k]·∂out[k]/∂operand over every edge that reads them "
        "(∂(L/R)/∂R = −L/R², dot's ∂/∂L = R); a broadcast operand sums over the axes it was broadcast along; a node "
        "no edge reads (an isolated source, an empty row) gets 0.",
        "Divisors: with op div the generators keep rhs at least 1/2 from 0; a case with rhs = 0 has no finite answer "
        "to check."}},
      [](const Graph& g, const Attributes& a) { return operand_shapes(g, gsddmm_config(a)); },
      [](const Graph& g, const Attributes& a) { return Shapes{{"out", {g.num_edges(), gsddmm_config(a).out_width()}}}; },
      []<class T>(const Graph& g, const Attributes& a, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        const GsddmmConfig config = gsddmm_config(a);
        const DenseTensor<T>* lhs = lhs_of(config, in);
        const DenseTensor<T>* rhs = rhs_of(config, in);
        Evaluation<T> ev;
        ev.outputs["out"] = gsddmm_forward(g, config, lhs, rhs);
        if (!gout.empty()) {
          auto grads = gsddmm_backward(g, config, lhs, rhs, get(gout, "out"));
          if (config.uses_lhs()) ev.gradients[lhs_input_name(config)] = std::move(grads.grad_lhs);
          if (config.uses_rhs()) ev.gradients[rhs_input_name(config)] = std::move(grads.grad_rhs);
        }
        return ev;
      });
  def.spec.tolerance = {ToleranceKind::closed_form, 0,
                        "per term: the operands and grad_out rounded, the operation and its derivative (1 to 6 "
                        "roundings by op; dot sums F products; oracle/gsddmm.cpp)"};
  def.spec.tolerance.storage_roundings = 3;  // a term reads at most three stored inputs: both operands and grad_out
  def.closed_form_terms = [](const Case& c, double) {
    const GsddmmConfig config = gsddmm_config(with_defaults(entry_of(c).spec, c.attributes));
    const auto grad_out = c.grad_outputs.find("out");
    const bool gradients = grad_out != c.grad_outputs.end();
    GsddmmTerms t = gsddmm_closed_form_terms(*c.graph, config, lhs_of(config, c.inputs), rhs_of(config, c.inputs),
                                             gradients ? &grad_out->second : nullptr);
    TargetDef::ClosedFormTerms out;
    out.abs_sums.outputs["out"] = std::move(t.out_abs);
    out.term_counts.outputs["out"] = std::move(t.out_count);
    if (gradients && config.uses_lhs()) {
      out.abs_sums.gradients[lhs_input_name(config)] = std::move(t.grad_lhs_abs);
      out.term_counts.gradients[lhs_input_name(config)] = std::move(t.grad_lhs_count);
    }
    if (gradients && config.uses_rhs()) {
      out.abs_sums.gradients[rhs_input_name(config)] = std::move(t.grad_rhs_abs);
      out.term_counts.gradients[rhs_input_name(config)] = std::move(t.grad_rhs_count);
    }
    return out;
  };
  def.divisors = [](const Attributes& a) {
    const GsddmmConfig config = gsddmm_config(a);
    return config.op == SddmmOp::div ? std::vector<std::string>{rhs_input_name(config)} : std::vector<std::string>{};
  };
  // gpu/gsddmm.cu: the row-ordered COO and atomics, no edge_perm.
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = false};
  return def;
}

}  // namespace gnncheck::oracle
