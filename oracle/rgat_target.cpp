// The catalogue entry of RGAT (oracle/layers/rgat.h): attention over the edges of a typed graph,
// each edge's relation an index tensor (TensorSlot::index_range), one softmax across relations.
#include <fmt/format.h>

#include "oracle/layer_target_support.h"
#include "oracle/layers/dense.h"
#include "oracle/layers/rgat.h"
#include "oracle/wrong_variants.h"
#include "oracle/softmax_rows.h"

namespace gnncheck::oracle {

using namespace layers;
using namespace layer_catalogue;
using catalogue::make_target;

namespace {

// The layer with each relation's edges normalized apart (PyG's attention_mechanism =
// "within-relation") where the default normalizes across them: the softmax grouped by (destination,
// relation) instead of by destination. It differs only where a row has edges of two relations.
WrongVariant softmax_within_relation() {
  return {"softmax_within_relation", "softmax_within_relation",
          "the attention softmax normalized over each relation's in-edges apart instead of over all of a "
          "destination's in-edges (within-relation where across-relation is meant)",
          37, [](const Case& c, const VariantContext&) -> std::optional<Result> {
            if (!c.graph) return std::nullopt;
            Result r = evaluate(c, Precision::float64);
            if (!r.ok()) return std::nullopt;
            RgatConfig cfg = RgatConfig::from_attributes(with_defaults(entry_of(c).spec, c.attributes));
            cfg.softmax = RgatSoftmax::within_relation;
            const auto tensor = [&c](const std::string& name) -> const Tensor& {
              const auto it = c.inputs.find(name);
              return it != c.inputs.end() ? it->second : c.parameters.at(name);
            };
            const RgatParameters<double> p{tensor("weight"), tensor("q"), tensor("k"),
                                           cfg.bias ? tensor("bias") : Tensor{}};
            const Tensor& x = tensor("x");
            const Tensor& types = tensor("edge_type");
            if (c.grad_outputs.empty()) {
              Tensor y = rgat_forward(*c.graph, cfg, x, types, p);
              if (y.values() == r.outputs.at("y").values()) return std::nullopt;
              r.outputs["y"] = std::move(y);
              return r;
            }
            RgatGrads<double> wrong = rgat_backward(*c.graph, cfg, x, types, p, c.grad_outputs.at("y"));
            if (wrong.y.values() == r.outputs.at("y").values()) return std::nullopt;
            r.outputs["y"] = std::move(wrong.y);
            r.gradients["x"] = std::move(wrong.grad_x);
            r.gradients["weight"] = std::move(wrong.grad.weight);
            r.gradients["q"] = std::move(wrong.grad.q);
            r.gradients["k"] = std::move(wrong.grad.k);
            if (cfg.bias) r.gradients["bias"] = std::move(wrong.grad.bias);
            return r;
          }};
}

}  // namespace

namespace {

void rgat_kink_arguments(const Case& c, const Attributes& a, KinkArguments& k) {
  if (a.get_double("negative_slope") == 1.0) return;  // LeakyReLU with slope 1 is the identity
  const auto cfg = layers::RgatConfig::from_attributes(a);
  const Tensor& x = tensor_of(c, "x");
  const Tensor& types = tensor_of(c, "edge_type");
  const layers::RgatParameters<double> p{tensor_of(c, "weight"), tensor_of(c, "q"), tensor_of(c, "k"), {}};
  const layers::RgatParameters<double> p_abs{absolute(p.weight), absolute(p.q), absolute(p.k), {}};
  // The bias is not read by z; the layer checks its shape only when configured with one.
  auto no_bias = cfg;
  no_bias.bias = false;
  const Tensor z = layers::rgat_pre_activation(*c.graph, no_bias, x, types, p);
  const Tensor z_abs = layers::rgat_pre_activation(*c.graph, no_bias, absolute(x), types, p_abs);
  // Terms: in_features products for out_i and out_j, heads·C for each of q·out_i and k·out_j, their
  // sum; roundings: the inputs and each product.
  const double terms = static_cast<double>(cfg.in_features + cfg.width() + 2 + 4);
  one_site_kink_arguments(k, z, z_abs, terms, {"x", "weight", "q", "k"});
  const index_t heads = cfg.heads;
  k.describe = [heads](std::size_t n) {
    return fmt::format("LeakyReLU logit of edge {}, head {}", static_cast<index_t>(n) / heads,
                       static_cast<index_t>(n) % heads);
  };
}

std::vector<SoftmaxRow> rgat_softmax_rows(const Case& c, const Attributes& attrs) {
  const double slope = attrs.get_double("negative_slope");
  std::vector<double> logits = leaky_relu_arguments(rgat_kink_arguments, c, attrs);
  for (double& s : logits) s = leaky_relu(s, slope);
  return softmax_rows_of(*c.graph, logits, attrs.get_int("heads"));
}

}  // namespace

TargetDef rgat_target() {
  TargetSpec spec{"rgat", true,
                  "RGAT layer (Busbridge et al.; PyG's RGATConv, additive self-attention across relations): a weight "
                  "per relation, one attention softmax over every in-edge of a destination",
                  {kX, {"edge_type", TensorKind::edges, false, "relations"}, parameter("weight"), parameter("q"),
                   parameter("k"), parameter("bias")},
                  {kY},
                  {in_features_attr(),
                   {"out_features", std::int64_t{4}, "channels per head (C)"},
                   catalogue::heads_attribute(2, "number of attention heads (H)"),
                   catalogue::type_count_attribute("relations", "number of relations (edge types) R; ≥ 1", true),
                   catalogue::concat_attribute(),
                   bias_attr(),
                   catalogue::negative_slope_attribute("slope of the LeakyReLU applied to the logits")},
                  false};
  spec.formula =
      "per edge e = (i ← j), r = edge_type[e]:  out_i[e] = x[i] · weight[r],  out_j[e] = x[j] · weight[r]  [heads·C]\n"
      "z[e, h] = Σ_m out_i[e, m] · q[m, h] + Σ_m out_j[e, m] · k[m, h]   (m over all heads·C channels)\n"
      "alpha[e, h] = softmax over e ∈ row i (every relation) of LeakyReLU(z[e, h], negative_slope)\n"
      "out[i, h·C + c] = Σ_{e ∈ row i} alpha[e, h] · out_j[e, h·C + c]\n"
      "y = out + bias (concat)  or  y[i, c] = (1 / heads) · Σ_h out[i, h·C + c] + bias (mean)";
  spec.conventions = {
      "edge_type is [E] in edge-id order: edge e's relation, an integer in [0, relations) stored as a number (an index "
      "tensor: convert it to integers; it has no gradient). Relations may be empty, and may be one.",
      "The softmax runs over all of destination i's in-edges, whatever their relation, per head (PyG's RGATConv "
      "with attention_mechanism='across-relation'); an empty row gives out[i] = 0, so y[i] = bias. Duplicate edges "
      "are separate entries. No self-loops are added, no attention dropout, no edge features.",
      "Both ends of an edge are projected by the edge's relation: out_i uses x[i], destination i's own source row "
      "(n_dst ≤ n_src), out_j uses x[j]. q and k are [heads·C, heads]: every head's query and key read all heads·C "
      "channels (PyG's q and k with dim = 1).",
      "weight is [relations, in_features, heads·C] with head-major columns (PyG's weight, no bases or blocks); bias is "
      "[heads·C] with concat = true and [C] with concat = false, added after the heads are joined, and absent with "
      "bias = false."};
  auto inputs = [](const Graph& g, const Attributes& a) {
    const auto cfg = RgatConfig::from_attributes(a);
    Shapes s{{"x", {g.n_src(), cfg.in_features}},
             {"edge_type", {g.num_edges()}},
             {"weight", {cfg.relations, cfg.in_features, cfg.width()}},
             {"q", {cfg.width(), cfg.heads}},
             {"k", {cfg.width(), cfg.heads}}};
    if (cfg.bias) s["bias"] = {cfg.output_width()};
    return s;
  };
  auto outputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"y", {g.n_dst(), RgatConfig::from_attributes(a).output_width()}}};
  };
  auto evaluate_at = [](KinkSide side, KinkFlips flips = {}) {
    return [side, flips](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
      using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
      auto cfg = RgatConfig::from_attributes(a);
      cfg.kink_side = side;
      cfg.kink_flips = flips;
      const RgatParameters<T> p{input(in, "weight"), input(in, "q"), input(in, "k"),
                                optional_input(in, "bias", cfg.bias)};
      Evaluation<T> ev;
      if (grad_out.empty()) {
        ev.outputs["y"] = rgat_forward(g, cfg, input(in, "x"), input(in, "edge_type"), p);
      } else {
        auto grads = rgat_backward(g, cfg, input(in, "x"), input(in, "edge_type"), p, input(grad_out, "y"));
        ev.outputs["y"] = std::move(grads.y);
        ev.gradients["x"] = std::move(grads.grad_x);
        ev.gradients["weight"] = std::move(grads.grad.weight);
        ev.gradients["q"] = std::move(grads.grad.q);
        ev.gradients["k"] = std::move(grads.grad.k);
        if (cfg.bias) ev.gradients["bias"] = std::move(grads.grad.bias);
      }
      return ev;
    };
  };
  // As GAT's: the measured model's normwise floor misses the rounding a near one-hot (or uniform,
  // cancelling) softmax row keeps in its gradient, here carried through q, k and each relation's W.
  spec.tolerance = {ToleranceKind::measured, 0, {}, {ToleranceFloor::rgat_attention}};
  spec.tolerance.softmax_rows = rgat_softmax_rows;
  spec.tolerance.logit_scales = {"q", "k"};
  // gpu/layers/layer_targets.cpp reads the graph through run.graph() only, and grad_x walks the CSC
  // with edge_perm to find each edge's relation.
  spec.gpu = {.device_resident = true, .reads_edge_perm = true};
  TargetDef def = make_target(std::move(spec), inputs, outputs, evaluate_at(KinkSide::left));
  def.kinks = one_sided_kink_hooks(rgat_kink_arguments, evaluate_at);
  // A dropped q or k gradient is the generic zero_gradient_q / zero_gradient_k.
  def.wrong_variants = {softmax_within_relation(), weight_gradient_to_next_relation()};
  // x's columns and the weights' in axis: only the projections contract them (TargetDef::contracted_axes).
  def.contracted_axes = {{"x", 1}, {"weight", 1}};
  return def;
}

}  // namespace gnncheck::oracle
