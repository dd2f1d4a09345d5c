// The catalogue entry of fused attention: edge softmax and the weighted aggregation in one op, as GAT
// kernels fuse them (the attention itself is never an output). Forward and backward are the two ops'
// own (oracle/edge_softmax.h, oracle/spmm_ve.h), composed.
#include "oracle/broadcast_operands.h"
#include "oracle/catalogue_support.h"
#include "oracle/edge_softmax.h"
#include "oracle/softmax_rows.h"
#include "oracle/spmm_ve.h"

namespace gnncheck::oracle {

using namespace catalogue;

namespace {

std::vector<SoftmaxRow> attention_softmax_rows(const Case& c, const Attributes& attrs) {
  const auto it = c.inputs.find("logits");
  if (it == c.inputs.end()) throw InternalError("attention_softmax_rows: the case has no 'logits'");
  return softmax_rows_of(*c.graph, it->second.values(), attrs.get_int("heads"));
}

}  // namespace

TargetDef attention_target() {
  TargetDef def = make_target(
      {"attention", false,
       "y[i,h] = Σ_e softmax_row(logits)[e,h]·x[col_e,h]: edge softmax and aggregation fused (GAT's kernel)",
       {{"logits", TensorKind::edges, true}, {"x", TensorKind::src_nodes, true}},
       {{"y", TensorKind::dst_nodes, true}},
       {heads_attribute(), features_attribute()}, false,
       "alpha[k, h] = exp(logits[k, h] − m[i, h]) / Σ_{k' ∈ row i} exp(logits[k', h] − m[i, h]);  "
       "y[i, h·C + c] = Σ_{k ∈ row i} alpha[k, h] · x[col_k, h·C + c]    (i = row_k, C = features, h < heads)",
       {"logits is [E, heads] in edge-id order; x is [n_src, heads·features], head-major. The output is y only: a "
        "fused kernel never writes alpha.",
        "The softmax runs over each destination's in-edges, per head; duplicate edges are separate entries; an empty "
        "row gives y[i] = 0.",
        "Backward: grad_x[j, h·C + c] = Σ_{k: col_k = j} alpha[k, h] · grad_y[row_k, h·C + c]; with "
        "ḡ[k, h] = Σ_c grad_y[row_k, h·C + c] · x[col_k, h·C + c], "
        "grad_logits[k, h] = alpha[k, h] · (ḡ[k, h] − Σ_{k' ∈ row i} alpha[k', h] · ḡ[k', h])."}},
      [](const Graph& g, const Attributes& a) {
        const BroadcastShape s = broadcast_shape(a, "attention");
        return Shapes{{"logits", {g.num_edges(), s.heads}}, {"x", {g.n_src(), s.width()}}};
      },
      [](const Graph& g, const Attributes& a) { return Shapes{{"y", {g.n_dst(), broadcast_shape(a, "attention").width()}}}; },
      []<class T>(const Graph& g, const Attributes&, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        Evaluation<T> ev;
        const auto& x = get(in, "x");
        const DenseTensor<T> alpha = edge_softmax_forward(g, get(in, "logits"));
        ev.outputs["y"] = spmm_ve_forward(g, alpha, x);
        if (!gout.empty()) {
          auto grads = spmm_ve_backward(g, alpha, x, get(gout, "y"));
          ev.gradients["logits"] = edge_softmax_backward(g, alpha, grads.grad_edge_values);
          ev.gradients["x"] = std::move(grads.grad_x);
        }
        return ev;
      });
  // No closed form (exp and a quotient): the measured model, plus the softmax backward's own rounding
  // where a near one-hot row cancels (checks/tolerance.md, "Fused attention's floor").
  def.spec.tolerance = {ToleranceKind::measured, 0, {}, {ToleranceFloor::attention_logits}};
  def.spec.tolerance.softmax_rows = attention_softmax_rows;
  def.spec.tolerance.logit_scales = {"logits"};
  // gpu/op_targets.cpp: edge softmax, then spmm_ve, whose backward walks the CSC (edge_perm).
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = true};
  def.receptive_field = [](const Attributes&) { return ReceptiveField{}; };
  return def;
}

}  // namespace gnncheck::oracle
