// The catalogue entry of AGNN (oracle/layers/agnn.h).
#include <fmt/format.h>

#include "oracle/layers/self_loops.h"
#include "oracle/layer_target_support.h"
#include "oracle/layers/agnn.h"
#include "oracle/softmax_rows.h"

namespace gnncheck::oracle {

using namespace layers;
using namespace layer_catalogue;
using catalogue::make_target;

namespace {

void agnn_kink_arguments(const Case& c, const Attributes&, KinkArguments& k) {
  constexpr double kNormFloor = 1e-12;  // oracle/layers/agnn.cpp
  const Tensor& x = tensor_of(c, "x");
  for (index_t i = 0; i < x.rows(); ++i) {
    double sq = 0;
    for (index_t f = 0; f < x.row_size(); ++f) sq += x.at(i, f) * x.at(i, f);
    const double norm = std::sqrt(sq);
    k.offsets.push_back(norm - kNormFloor);
    k.abs_terms.push_back(norm);
    k.terms.push_back(static_cast<double>(x.row_size() + 4));
  }
  k.upstream = {"x"};
  k.describe = [](std::size_t n) { return fmt::format("the norm of row {} of x at AGNN's floor max(‖x_i‖, 1e-12)", n); };
}

std::vector<SoftmaxRow> agnn_softmax_rows(const Case& c, const Attributes& attrs) {
  // β·cos(x_i, x_j), |cos| ≤ 1: every logit is within |β|.
  const auto beta_it = c.parameters.find("beta");
  if (beta_it == c.parameters.end()) throw InternalError("agnn_softmax_rows: the case has no 'beta'");
  const double beta = std::abs(beta_it->second[0]);
  const layers::AggregationGraph agg(*c.graph, attrs.get_bool("self_loops"));
  const auto row_ptr = agg->row_ptr();
  std::vector<SoftmaxRow> rows;
  for (index_t i = 0; i < agg->n_dst(); ++i) {
    const double length = static_cast<double>(row_ptr[i + 1] - row_ptr[i]);
    rows.push_back({length > 0 ? beta : 0.0, length});
  }
  return rows;
}

}  // namespace

TargetDef agnn_target() {
  TargetSpec spec{"agnn", true, "AGNN layer: attention by cosine similarity scaled by a learnable beta",
                  {kX, parameter("beta")},
                  {kY},
                  {{"features", std::int64_t{8}, "width of x and y (the layer has no weight matrix)"},
                   catalogue::coin_attribute("self_loops", true, "attend over A + I (true) or A (false)")},
                  false};
  spec.formula =
      "n[j] = x[j] / max(‖x[j]‖₂, 1e-12);  Ã = A + I (self_loops) or A\n"
      "alpha[e] = softmax over e ∈ row i of Ã of beta · ⟨n[i], n[col_e]⟩\n"
      "y[i] = Σ_{e ∈ row i of Ã} alpha[e] · x[col_e]";
  spec.conventions = {
      "Destination i's normalized row is n[i], from its own source row x[i] (the destinations are the first n_dst "
      "sources): n_dst ≤ n_src is required.",
      "A zero row of x stays zero (the 1e-12 floor of PyG's F.normalize): its cosines are 0, and at the floor the divisor "
      "is a constant, so the gradient through the normalization is grad_n / 1e-12.",
      "Self-loops: edge (i, i) is appended to every destination row i (an existing self-loop is kept); without them an "
      "empty row gives y[i] = 0.",
      "The aggregation uses x, not n. beta is a parameter of shape [1]; there is no weight matrix (in = out = features)."};
  spec.tolerance = {ToleranceKind::measured, 0, {}, {ToleranceFloor::agnn_attention}};
  spec.tolerance.softmax_rows = agnn_softmax_rows;
  spec.tolerance.logit_scales = {"beta"};
  auto inputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"x", {g.n_src(), AgnnConfig::from_attributes(a).features}}, {"beta", {1}}};
  };
  auto outputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"y", {g.n_dst(), AgnnConfig::from_attributes(a).features}}};
  };
  auto evaluate_at = [](KinkSide side) {
    return [side](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
      using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
      auto cfg = AgnnConfig::from_attributes(a);
      cfg.kink_side = side;
      Evaluation<T> ev;
      ev.outputs["y"] = agnn_forward(g, cfg, input(in, "x"), input(in, "beta"));
      if (!grad_out.empty()) {
        auto grads = agnn_backward(g, cfg, input(in, "x"), input(in, "beta"), input(grad_out, "y"));
        ev.gradients["x"] = std::move(grads.grad_x);
        ev.gradients["beta"] = std::move(grads.grad_beta);
      }
      return ev;
    };
  };
  TargetDef def = make_target(std::move(spec), inputs, outputs, evaluate_at(KinkSide::left));
  def.kinks = {agnn_kink_arguments, in_float32(evaluate_at(KinkSide::right))};
  def.receptive_field = reads_own_features;
  return def;
}

}  // namespace gnncheck::oracle
