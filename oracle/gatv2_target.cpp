// The catalogue entry of GATv2 (oracle/layers/gatv2.h).
#include <fmt/format.h>

#include "oracle/layers/self_loops.h"
#include "oracle/sddmm.h"
#include "oracle/layers/dense.h"
#include "oracle/layer_target_support.h"
#include "oracle/layers/gatv2.h"
#include "oracle/softmax_rows.h"

namespace gnncheck::oracle {

using namespace layers;
using namespace layer_catalogue;
using catalogue::make_target;

namespace {

void gatv2_kink_arguments(const Case& c, const Attributes& a, KinkArguments& k) {
  if (a.get_double("negative_slope") == 1.0) return;  // LeakyReLU with slope 1 is the identity
  const Graph& g = *c.graph;
  const index_t width = a.get_int("heads") * a.get_int("out_features");
  const bool self_loops = a.get_bool("self_loops");
  const layers::AggregationGraph agg(g, self_loops);
  const Tensor& x = tensor_of(c, "x");
  const Tensor x_dst = layers::first_rows(x, g.n_dst()), x_dst_abs = absolute(x_dst);
  const Tensor& w_src = tensor_of(c, "weight_src");
  const Tensor& w_dst = tensor_of(c, "weight_dst");
  const Tensor z = sddmm_add_forward(*agg, matmul(x_dst, w_dst), matmul(x, w_src));
  const Tensor z_abs = sddmm_add_forward(*agg, matmul(x_dst_abs, absolute(w_dst)), matmul(absolute(x), absolute(w_src)));
  // Terms: in_features products for each side, their sum; roundings: the inputs and each product.
  const double terms = static_cast<double>(x.row_size() + 2 + 4);
  one_site_kink_arguments(k, z, z_abs, terms, {"x", "weight_src", "weight_dst", "att"});
  k.describe = [width, self_loops](std::size_t n) {
    return fmt::format("LeakyReLU pre-activation z of edge {} (of A{}), channel {} (head·C + c)",
                       static_cast<index_t>(n) / width, self_loops ? " + I" : "", static_cast<index_t>(n) % width);
  };
}

std::vector<SoftmaxRow> gatv2_softmax_rows(const Case& c, const Attributes& attrs) {
  const double slope = attrs.get_double("negative_slope");
  const index_t heads = attrs.get_int("heads"), channels = attrs.get_int("out_features");
  const std::vector<double> z = leaky_relu_arguments(gatv2_kink_arguments, c, attrs);  // [E of Ã, heads·C]
  const auto att_it = c.parameters.find("att");
  if (att_it == c.parameters.end()) throw InternalError("gatv2_softmax_rows: the case has no 'att'");
  const Tensor& att = att_it->second;  // [heads, C]
  const std::size_t width = static_cast<std::size_t>(heads * channels);
  std::vector<double> logits(width ? z.size() / width * static_cast<std::size_t>(heads) : 0, 0.0);
  for (std::size_t e = 0; width && e < z.size() / width; ++e)
    for (index_t h = 0; h < heads; ++h)
      for (index_t ch = 0; ch < channels; ++ch)
        logits[e * static_cast<std::size_t>(heads) + static_cast<std::size_t>(h)] +=
            att.at(h, ch) * leaky_relu(z[e * width + static_cast<std::size_t>(h * channels + ch)], slope);
  const layers::AggregationGraph agg(*c.graph, attrs.get_bool("self_loops"));
  return softmax_rows_of(*agg, logits, heads);
}

}  // namespace

TargetDef gatv2_target() {
  TargetSpec spec{
      "gatv2", true,
      "GATv2 layer (Brody et al.): attention after the LeakyReLU, per channel, separate source and destination weights",
      {kX, parameter("weight_src"), parameter("weight_dst"), parameter("att"), parameter("bias")},
      {kY},
      attention_layer_attributes("slope of the LeakyReLU applied to z, channel by channel"),
      false};
  spec.formula =
      "h_src = x · weight_src  [n_src, heads·C],  h_dst = x[:n_dst] · weight_dst  [n_dst, heads·C];  "
      "Ã = A + I (self_loops) or A\n"
      "z[e] = h_dst[i] + h_src[j]  for e = (i ← j) of Ã\n"
      "logit[e, k] = Σ_c att[k, c] · LeakyReLU(z[e, k·C + c], negative_slope)\n"
      "alpha[e, k] = softmax over e ∈ row i of Ã of logit[e, k]\n"
      "out[i, k·C + c] = Σ_{e ∈ row i of Ã} alpha[e, k] · h_src[col_e, k·C + c]\n"
      "y = out + bias (concat)  or  y[i, c] = (1 / heads) · Σ_k out[i, k·C + c] + bias (mean)";
  spec.conventions = {
      "weight_dst transforms the destination (h_dst[i] uses x[i], destination i's own source row), weight_src the "
      "source of each edge and the messages: PyG's GATv2Conv(share_weights=False) with lin_r = weight_dst and "
      "lin_l = weight_src, their own biases zero.",
      "The LeakyReLU is applied to every channel of z before the attention vector (GATv2's order); its derivative "
      "is taken at each channel's z, at z = 0 the slope (checks/kinks-and-ties.md).",
      "Self-loops: edge (i, i) is appended to every destination row i, on a non-square graph too; an existing "
      "self-loop is kept, so (i, i) can appear twice. n_dst ≤ n_src is required.",
      "The softmax runs over each destination's in-edges of Ã, per head; without self-loops an empty row gives "
      "out[i] = 0, so y[i] = bias. No attention dropout (the evaluation mode).",
      "weight_src and weight_dst are [in_features, heads·C] with head-major columns; att is [heads, C]; bias is "
      "[heads·C] with concat = true and [C] with concat = false, added after the heads are joined, and absent with "
      "bias = false."};
  auto inputs = [](const Graph& g, const Attributes& a) {
    const auto cfg = Gatv2Config::from_attributes(a);
    Shapes s{{"x", {g.n_src(), cfg.in_features}},
             {"weight_src", {cfg.in_features, cfg.heads * cfg.out_features}},
             {"weight_dst", {cfg.in_features, cfg.heads * cfg.out_features}},
             {"att", {cfg.heads, cfg.out_features}}};
    if (cfg.bias) s["bias"] = {cfg.output_width()};
    return s;
  };
  auto outputs = [](const Graph& g, const Attributes& a) {
    return Shapes{{"y", {g.n_dst(), Gatv2Config::from_attributes(a).output_width()}}};
  };
  auto evaluate_at = [](KinkSide side, KinkFlips flips = {}) {
    return [side, flips](const Graph& g, const Attributes& a, const auto& in, const auto& grad_out) {
      using T = typename std::decay_t<decltype(in)>::mapped_type::value_type;
      auto cfg = Gatv2Config::from_attributes(a);
      cfg.kink_side = side;
      cfg.kink_flips = flips;
      const Gatv2Parameters<T> p{input(in, "weight_src"), input(in, "weight_dst"), input(in, "att"),
                                 optional_input(in, "bias", cfg.bias)};
      Evaluation<T> ev;
      if (grad_out.empty()) {
        ev.outputs["y"] = gatv2_forward(g, cfg, input(in, "x"), p);
      } else {
        auto grads = gatv2_backward(g, cfg, input(in, "x"), p, input(grad_out, "y"));
        ev.outputs["y"] = std::move(grads.y);
        ev.gradients["x"] = std::move(grads.grad_x);
        ev.gradients["weight_src"] = std::move(grads.grad.weight_src);
        ev.gradients["weight_dst"] = std::move(grads.grad.weight_dst);
        ev.gradients["att"] = std::move(grads.grad.att);
        if (cfg.bias) ev.gradients["bias"] = std::move(grads.grad.bias);
      }
      return ev;
    };
  };
  // As GAT's: the measured model's normwise floor misses the rounding a near one-hot (or uniform,
  // cancelling) softmax row keeps in its gradient, carried here through every channel's LeakyReLU.
  spec.tolerance = {ToleranceKind::measured, 0, {}, {ToleranceFloor::gatv2_attention}};
  spec.tolerance.softmax_rows = gatv2_softmax_rows;
  spec.tolerance.logit_scales = {"att"};
  spec.gpu = {.device_resident = true, .reads_edge_perm = true};
  TargetDef def = make_target(std::move(spec), inputs, outputs, evaluate_at(KinkSide::left));
  def.kinks = one_sided_kink_hooks(gatv2_kink_arguments, evaluate_at);
  def.receptive_field = reads_own_features;
  // x's columns and the weights' in axis: only the projections contract them (TargetDef::contracted_axes).
  def.contracted_axes = {{"x", 1}, {"weight_src", 0}, {"weight_dst", 0}};
  return def;
}

}  // namespace gnncheck::oracle
