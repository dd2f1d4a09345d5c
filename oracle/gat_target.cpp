// The catalogue entry of GAT (oracle/layers/gat.h).
#include <fmt/format.h>

#include "oracle/layers/self_loops.h"
#include "oracle/sddmm.h"
#include "oracle/layers/dense.h"
#include "oracle/layer_target_support.h"
#include "oracle/layers/dropout.h"
#include "oracle/layers/gat.h"
#include "oracle/softmax_rows.h"

namespace gnncheck::oracle {

using namespace layers;
using namespace layer_catalogue;
using catalogue::make_target;

namespace {

void gat_kink_arguments(const Case& c, const Attributes& a, KinkArguments& k) {
  if (a.get_double("negative_slope") == 1.0) return;  // LeakyReLU with slope 1 is the identity
  const Graph& g = *c.graph;
  const index_t heads = a.get_int("heads"), channels = a.get_int("out_features");
  const bool self_loops = a.get_bool("self_loops");
  const layers::AggregationGraph agg(g, self_loops);
  const Tensor& x = tensor_of(c, "x");
  const Tensor h = matmul(x, tensor_of(c, "weight")), h_abs = matmul(absolute(x), absolute(tensor_of(c, "weight")));
  auto scores = [&](const Tensor& hh, const Tensor& att, index_t rows) {
    Tensor s({rows, heads});
    for (index_t j = 0; j < rows; ++j)
      for (index_t head = 0; head < heads; ++head)
        for (index_t ch = 0; ch < channels; ++ch) s.at(j, head) += hh.at(j, head * channels + ch) * att.at(head, ch);
    return s;
  };
  const Tensor& att_src = tensor_of(c, "att_src");
  const Tensor& att_dst = tensor_of(c, "att_dst");
  const Tensor logits = sddmm_add_forward(*agg, scores(h, att_dst, g.n_dst()), scores(h, att_src, g.n_src()));
  const Tensor logits_abs = sddmm_add_forward(*agg, scores(h_abs, absolute(att_dst), g.n_dst()),
                                              scores(h_abs, absolute(att_src), g.n_src()));
  // Terms: in_features products for h, channels for each score, the sum of two scores; roundings:
  // the inputs and each product.
  const double terms = static_cast<double>(x.row_size() + channels + 2 + 4);
  one_site_kink_arguments(k, logits, logits_abs, terms, {"x", "weight", "att_src", "att_dst"});
  k.describe = [heads, self_loops](std::size_t n) {
    return fmt::format("LeakyReLU logit of edge {} (of A{}), head {}", static_cast<index_t>(n) / heads,
                       self_loops ? " + I" : "", static_cast<index_t>(n) % heads);
  };
}

std::vector<SoftmaxRow> gat_softmax_rows(const Case& c, const Attributes& attrs) {
  const double slope = attrs.get_double("negative_slope");
  std::vector<double> logits = leaky_relu_arguments(gat_kink_arguments, c, attrs);
  for (double& s : logits) s = leaky_relu(s, slope);
  const layers::AggregationGraph agg(*c.graph, attrs.get_bool("self_loops"));
  return softmax_rows_of(*agg, logits, attrs.get_int("heads"));
}

}  // namespace

TargetDef gat_target() {
  TargetSpec spec{
      "gat", true, "GAT layer (Velickovic et al.): multi-head attention, LeakyReLU(0.2) logits, edge softmax",
      {kX, parameter("weight"), parameter("att_src"), parameter("att_dst"), parameter("bias")},
      {kY},
      attention_layer_attributes(
          "slope of the LeakyReLU applied to the logits",
          // Dropout off in half the cases (the evaluation mode).
          {catalogue::drawn_as(
               {"attn_dropout", 0.0, "attention dropout probability in [0, 1); the mask is a function of dropout_seed"},
               AttributeDraw::one_of({0.0, 0.0, 0.3, 0.6})),
           catalogue::drawn_as({"dropout_seed", std::int64_t{0}, "seed of the deterministic attention-dropout mask"},
                               AttributeDraw::integers(0, 999))}),
      false};
  spec.formula =
      "h = x · weight  [n_src, heads·C], C = out_features;  Ã = A + I (self_loops) or A\n"
      "s_src[j, k] = Σ_c h[j, k·C + c] · att_src[k, c],  s_dst[i, k] = Σ_c h[i, k·C + c] · att_dst[k, c]\n"
      "alpha[e, k] = softmax over e ∈ row i of Ã of LeakyReLU(s_dst[i, k] + s_src[col_e, k], negative_slope)\n"
      "out[i, k·C + c] = Σ_{e ∈ row i of Ã} alpha[e, k] · mask[e, k] · h[col_e, k·C + c]\n"
      "y = out + bias (concat)  or  y[i, c] = (1 / heads) · Σ_k out[i, k·C + c] + bias (mean)";
  spec.conventions = {
      "att_dst pairs with the destination (s_dst[i] uses h[i], destination i's own source row), att_src with the source "
      "of each edge: the logit of edge (i ← j) is s_dst[i] + s_src[j].",
      "Self-loops: edge (i, i) is appended to every destination row i, on a non-square graph too; an existing self-loop "
      "is kept, so (i, i) can appear twice. n_dst ≤ n_src is required.",
      "The softmax runs over each destination's in-edges of Ã, per head; without self-loops an empty row gives out[i] = 0, "
      "so y[i] = bias.",
      "weight is [in_features, heads·C] with head-major columns; att_src and att_dst are [heads, C]; bias is [heads·C] "
      "with concat = true and [C] with concat = false, added after the heads are joined, and absent with bias = false.",
      "Attention dropout: mask[e, k] = 1 / (1 − attn_dropout) where layers/dropout.h keeps element e·heads + k for "
      "dropout_seed (e: the edge id in Ã), else 0; attn_dropout = 0 means mask = 1 (evaluation mode)."};
  auto inputs = [](const Graph& g, const Attributes& a) {
    const auto cfg = GatConfig::from_attributes(a);
    Shapes s{{"x", {g.n_src(), cfg.in_features}},
             {"weight", {cfg.in_features, cfg.heads * cfg.out_features}},
             {"att_src", {cfg.heads, cfg.out_features}},
             {"att_dst", {cfg.heads, cfg.out_features}}};
    if (cfg.bias) s["bias"] = {cfg.output_width()};
    return s;
  };
  auto outputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"y", {g.n_dst(), GatConfig::from_attributes(a).output_width()}}};
  };
  auto evaluate_at = [](KinkSide side, KinkFlips flips = {}) {
    return [side, flips](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
      using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
      auto cfg = GatConfig::from_attributes(a);
      cfg.kink_side = side;
      cfg.kink_flips = flips;
      const GatParameters<T> p{input(in, "weight"), input(in, "att_src"), input(in, "att_dst"),
                               optional_input(in, "bias", cfg.bias)};
      Evaluation<T> ev;
      if (grad_out.empty()) {
        ev.outputs["y"] = gat_forward(g, cfg, input(in, "x"), p);
      } else {
        // The backward computes the forward's activations and y on the way: one pass, not two.
        auto grads = gat_backward(g, cfg, input(in, "x"), p, input(grad_out, "y"));
        ev.outputs["y"] = std::move(grads.y);
        ev.gradients["x"] = std::move(grads.grad_x);
        ev.gradients["weight"] = std::move(grads.grad.weight);
        ev.gradients["att_src"] = std::move(grads.grad.att_src);
        ev.gradients["att_dst"] = std::move(grads.grad.att_dst);
        if (cfg.bias) ev.gradients["bias"] = std::move(grads.grad.bias);
      }
      return ev;
    };
  };
  // The measured model's normwise floor misses the rounding a near one-hot softmax row keeps in its
  // gradient; the layer adds that floor propagated into the attention, weight and x gradients.
  spec.tolerance = {ToleranceKind::measured, 0, {}, {ToleranceFloor::gat_attention}};
  spec.tolerance.softmax_rows = gat_softmax_rows;
  spec.tolerance.logit_scales = {"att_src", "att_dst"};
  spec.gpu = {.device_resident = true, .reads_edge_perm = true};
  TargetDef def = make_target(std::move(spec), inputs, outputs, evaluate_at(KinkSide::left));
  def.kinks = one_sided_kink_hooks(gat_kink_arguments, evaluate_at);
  // Position q of row i is aggregated edge q + i with self-loops (each earlier row gained its loop
  // at its end: layers/self_loops.h), q without; its mask is elements (that edge)·H + h.
  def.dropout = {"attn_dropout", "dropout_seed", [](const Graph&, const Attributes& a, index_t row, index_t position) {
                   const double p = a.get_double("attn_dropout");
                   const auto heads = static_cast<std::uint64_t>(a.get_int("heads"));
                   const auto seed = static_cast<std::uint64_t>(a.get_int("dropout_seed"));
                   const auto aggregated = static_cast<std::uint64_t>(position + (a.get_bool("self_loops") ? row : 0));
                   std::vector<bool> kept(heads);
                   for (std::uint64_t h = 0; h < heads; ++h) kept[h] = dropout_keeps(seed, aggregated * heads + h, p);
                   return kept;
                 }};
  def.receptive_field = reads_own_features;
  // x's columns and the weights' in axis: only the projections contract them (TargetDef::contracted_axes).
  def.contracted_axes = {{"x", 1}, {"weight", 0}};
  // Veličković et al.'s Cora recipe: 8 heads × 8 channels with ELU, lr 0.005, weight decay 5e-4 on
  // every layer, dropout 0.6 on inputs, hidden activations and attention.
  def.accuracy = AccuracyRecipe{.source = "Veličković et al.",
                                .hidden = 8,
                                .heads = 8,
                                .elu = true,
                                .learning_rate = 0.005,
                                .decay_all_layers = true,
                                .input_dropout = 0.6,
                                .hidden_dropout = 0.6,
                                .attention_dropout = 0.6};
  return def;
}

}  // namespace gnncheck::oracle
