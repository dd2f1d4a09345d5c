// The catalogue entry of PyG's segment aggregations that are neither a sum nor an extreme (var, std,
// mul, softmax with a learnable temperature; oracle/segment_aggregation.h). Like segment_reduce,
// each destination row's edges are one contiguous segment of x's rows in edge-id order.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "oracle/catalogue_support.h"
#include "oracle/segment_aggregation.h"

namespace gnncheck::oracle {
namespace {

using namespace catalogue;

template <class T>
Evaluation<T> evaluate_aggregation(const Graph& g, const Attributes& a, const TensorMapOf<T>& in,
                                   const TensorMapOf<T>& gout) {
  const auto cfg = SegmentAggregationConfig::from_attributes(a);
  const DenseTensor<T>& x = get(in, "x");
  const DenseTensor<T>* t = optional_tensor(in, "t");
  const DenseTensor<T> none;
  const DenseTensor<T>& temperature = cfg.has_temperature() && t ? *t : none;
  Evaluation<T> ev;
  ev.outputs["y"] = segment_aggregation_forward(g, cfg, x, temperature);
  if (!gout.empty()) {
    auto grads = segment_aggregation_backward(g, cfg, x, temperature, get(gout, "y"));
    ev.gradients["x"] = std::move(grads.grad_x);
    if (cfg.has_temperature()) ev.gradients["t"] = std::move(grads.grad_t);
  }
  return ev;
}

// The mean and population variance of x's column f over row i's segment, and their terms on
// |x| (mean of squares plus squared mean of |x|: what rounding the variance scales with).
struct SegmentMoments {
  double mean = 0, var = 0, abs_terms = 0;
  // How far storing x moves var, per unit roundoff u of the storage: first order Σ (2/n)·|x_k − mean|·|x_k|
  // (var's gradient times each value's rounding), and the second order var(Δ) ≤ u²·mean(x²), allowed
  // for as 2^-8·mean(x²)/3 (u ≤ 2^-8 in every format, and the margin multiplies by γ_3(u) ≥ 3u).
  // A segment of equal values (one value, say) keeps var = 0: both orders are 0 there.
  double stored_terms = 0;
};

SegmentMoments segment_moments(const Tensor& x, index_t begin, index_t end, index_t f) {
  SegmentMoments m;
  const index_t n = end - begin;
  if (n == 0) return m;
  double sum = 0, squares = 0, abs_sum = 0;
  bool equal = true;
  for (index_t k = begin; k < end; ++k) {
    equal = equal && x.at(k, f) == x.at(begin, f);
    sum += x.at(k, f);
    abs_sum += std::abs(x.at(k, f));
    squares += x.at(k, f) * x.at(k, f);
  }
  m.mean = sum / static_cast<double>(n);
  m.var = squares / static_cast<double>(n) - m.mean * m.mean;
  const double abs_mean = abs_sum / static_cast<double>(n);
  m.abs_terms = squares / static_cast<double>(n) + abs_mean * abs_mean;
  for (index_t k = begin; k < end; ++k) m.stored_terms += 2 * std::abs(x.at(k, f) - m.mean) * std::abs(x.at(k, f));
  m.stored_terms /= static_cast<double>(n);
  if (!equal) m.stored_terms += 0x1p-8 / 3 * squares / static_cast<double>(n);
  return m;
}

// std's kink: its value jumps at var = 10⁻⁵, one argument var − 10⁻⁵ per non-empty segment and
// feature. Its terms are the variance's (n squares summed, n values summed, the two divisions, the
// square of the mean, the difference) and 10⁻⁵ itself, rounded where a system stores it.
void std_kink_arguments(const Case& c, const Attributes& a, KinkArguments& k) {
  const auto cfg = SegmentAggregationConfig::from_attributes(a);
  if (cfg.aggr != SegmentAggregation::std) return;
  const Graph& g = *c.graph;
  const Tensor& x = c.inputs.at("x");
  const auto& ptr = g.row_ptr();
  struct Where {
    index_t row, feature;
  };
  auto where = std::make_shared<std::vector<Where>>();
  for (index_t i = 0; i < g.n_dst(); ++i) {
    if (ptr[i + 1] == ptr[i]) continue;  // an empty segment's 0 is a convention, not a variance
    for (index_t f = 0; f < cfg.features; ++f) {
      const SegmentMoments m = segment_moments(x, ptr[i], ptr[i + 1], f);
      k.offsets.push_back(m.var - kStdVarianceFloor);
      k.abs_terms.push_back(m.abs_terms + kStdVarianceFloor);
      k.stored_terms.push_back(m.stored_terms + kStdVarianceFloor);
      k.terms.push_back(static_cast<double>(ptr[i + 1] - ptr[i] + 6));
      k.jump_elements.push_back(i * cfg.features + f);  // y[i, f], and only its derivative changes
      where->push_back({i, f});
    }
  }
  k.upstream = {"x"};
  // Below the floor y is exactly 0; above it √var of a variance at most var + reach.
  k.jump_values = [offsets = k.offsets](std::size_t n, double reach) {
    return std::pair{0.0, std::sqrt(std::max(0.0, offsets[n] + kStdVarianceFloor + reach))};
  };
  k.describe = [where](std::size_t n) {
    return fmt::format("the variance of segment {}, feature {}, at std's floor 1e-5", (*where)[n].row, (*where)[n].feature);
  };
}

// The correct float64 answer of a std or mul case, or nullopt for another aggregation or a case
// without output gradients (the variants below are about the backward).
std::optional<Result> backward_answer(const Case& c, SegmentAggregation aggr) {
  if (c.grad_outputs.empty()) return std::nullopt;
  const auto cfg = SegmentAggregationConfig::from_attributes(with_defaults(entry_of(c).spec, c.attributes));
  if (cfg.aggr != aggr) return std::nullopt;
  Result r = evaluate(c);
  if (!r.ok()) return std::nullopt;
  return r;
}

// mul's gradient as y / x[k]: NaN (0/0) or ±∞ where the segment holds a zero, and 0 for the other
// rows of a segment with one zero, whose gradient is the product of the rest.
WrongVariant mul_gradient_by_division() {
  return {"mul_gradient_by_division", "product_gradient_by_division",
          "mul's gradient as g·y/x[k] instead of g·Π_{l≠k} x[l]: wrong (NaN, ±∞ or 0) where the segment holds a zero", 37,
          [](const Case& c, const VariantContext&) -> std::optional<Result> {
            std::optional<Result> r = backward_answer(c, SegmentAggregation::mul);
            if (!r) return std::nullopt;
            const Graph& g = *c.graph;
            const Tensor& x = c.inputs.at("x");
            const Tensor& y = r->outputs.at("y");
            const Tensor& gy = c.grad_outputs.at("y");
            Tensor grad(x.shape(), 0.0);
            bool differs = false;
            for (index_t k = 0; k < g.num_edges(); ++k) {
              const index_t i = g.row_of_edge()[k];
              for (index_t f = 0; f < x.row_size(); ++f) {
                grad.at(k, f) = gy.at(i, f) * y.at(i, f) / x.at(k, f);
                differs = differs || !(grad.at(k, f) == r->gradients.at("x").at(k, f));
              }
            }
            if (!differs) return std::nullopt;
            r->gradients["x"] = std::move(grad);
            return r;
          }};
}

// std's gradient without the chain rule through the square root: var's gradient g·(2/n)·(x[k] − mean)
// passed on where the variance is above the floor.
WrongVariant std_gradient_without_sqrt_factor() {
  return {"std_gradient_without_sqrt_factor", "missing_chain_rule_factor",
          "std's gradient as var's, g·(2/n)·(x[k] − mean), without the factor 1/(2·std) of the square root", 38,
          [](const Case& c, const VariantContext&) -> std::optional<Result> {
            std::optional<Result> r = backward_answer(c, SegmentAggregation::std);
            if (!r) return std::nullopt;
            const Graph& g = *c.graph;
            const Tensor& x = c.inputs.at("x");
            const Tensor& gy = c.grad_outputs.at("y");
            const auto& ptr = g.row_ptr();
            Tensor grad(x.shape(), 0.0);
            bool differs = false;
            for (index_t i = 0; i < g.n_dst(); ++i)
              for (index_t f = 0; f < x.row_size(); ++f) {
                const SegmentMoments m = segment_moments(x, ptr[i], ptr[i + 1], f);
                if (!(m.var > kStdVarianceFloor)) continue;
                const double n = static_cast<double>(ptr[i + 1] - ptr[i]);
                for (index_t k = ptr[i]; k < ptr[i + 1]; ++k) {
                  grad.at(k, f) = gy.at(i, f) * (2 / n) * (x.at(k, f) - m.mean);
                  differs = differs || grad.at(k, f) != r->gradients.at("x").at(k, f);
                }
              }
            if (!differs) return std::nullopt;
            r->gradients["x"] = std::move(grad);
            return r;
          }};
}

// mul's partial products, in any order, are bounded by the segment's Π max(1, |x|); a gradient
// formed as g·prefix·suffix or as (g·y)/x[k] by max(1, |g|) times that. Other aggregations: nullopt.
std::optional<Result> mul_intermediate_magnitudes(const Case& c) {
  const auto cfg = SegmentAggregationConfig::from_attributes(with_defaults(entry_of(c).spec, c.attributes));
  if (cfg.aggr != SegmentAggregation::mul) return std::nullopt;
  const Graph& g = *c.graph;
  const Tensor& x = c.inputs.at("x");
  const auto& ptr = g.row_ptr();
  Result r;
  Tensor reach({g.n_dst(), cfg.features}), grad_reach(x.shape());
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t f = 0; f < cfg.features; ++f) {
      double product = 1;
      for (index_t k = ptr[i]; k < ptr[i + 1]; ++k) product *= std::max(1.0, std::abs(x.at(k, f)));
      reach.at(i, f) = product;
      const double g_scale = c.grad_outputs.count("y") ? std::max(1.0, std::abs(c.grad_outputs.at("y").at(i, f))) : 1.0;
      for (index_t k = ptr[i]; k < ptr[i + 1]; ++k) grad_reach.at(k, f) = g_scale * product;
    }
  r.outputs["y"] = std::move(reach);
  if (!c.grad_outputs.empty()) r.gradients["x"] = std::move(grad_reach);
  return r;
}

// var's and std's terms (TargetDef::term_magnitudes): the variance is the difference of mean(x²)
// and mean(x)², each of magnitude up to mean(x²) + mean(|x|)² (SegmentMoments::abs_terms); var's
// gradient g·(2/n)·(x[k] − mean) subtracts terms of |x[k]| + |mean|; std carries var's rounding
// through the square root's derivative 1/(2·std) (first order, above the floor where it is defined).
// Other aggregations: nullopt.
std::optional<Result> moment_term_magnitudes(const Case& c) {
  const auto cfg = SegmentAggregationConfig::from_attributes(with_defaults(entry_of(c).spec, c.attributes));
  if (cfg.aggr != SegmentAggregation::var && cfg.aggr != SegmentAggregation::std) return std::nullopt;
  const bool std_dev = cfg.aggr == SegmentAggregation::std;
  const Graph& g = *c.graph;
  const Tensor& x = c.inputs.at("x");
  const auto& ptr = g.row_ptr();
  const Tensor* gy = c.grad_outputs.count("y") ? &c.grad_outputs.at("y") : nullptr;
  Result r;
  Tensor terms({g.n_dst(), cfg.features}), grad_terms(x.shape());
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t f = 0; f < cfg.features; ++f) {
      const SegmentMoments m = segment_moments(x, ptr[i], ptr[i + 1], f);
      const double n = static_cast<double>(ptr[i + 1] - ptr[i]);
      if (n == 0) continue;
      const bool above = m.var > kStdVarianceFloor;
      if (std_dev && !above) continue;  // 0 by the floor's mask: nothing is summed
      const double deviation = std_dev ? std::sqrt(m.var) : 0.0;
      terms.at(i, f) = std_dev ? m.abs_terms / (2.0 * deviation) : m.abs_terms;
      if (!gy) continue;
      const double g_abs = std::abs(gy->at(i, f));
      const double scale = std_dev ? g_abs / (n * deviation) * (1.0 + m.abs_terms / (2.0 * m.var)) : g_abs * 2.0 / n;
      for (index_t k = ptr[i]; k < ptr[i + 1]; ++k) grad_terms.at(k, f) = scale * (std::abs(x.at(k, f)) + std::abs(m.mean));
    }
  r.outputs["y"] = std::move(terms);
  if (gy) r.gradients["x"] = std::move(grad_terms);
  return r;
}

}  // namespace

TargetDef segment_aggregation_target() {
  TargetDef def = make_target(
      {"segment_aggregation", false,
       "y[i] = PyG's var, std, mul or softmax aggregation of x over the segment of row i (its edges, in edge-id order)",
       {{"x", TensorKind::edges, true}, {"t", TensorKind::parameter, true}},
       {{"y", TensorKind::dst_nodes, true}},
       // The selfcheck tries every aggregation, and on the large graph the softmax (its temperature).
       {selfchecked_choices(drawn_choice("aggr", "var",
                                         "the aggregation per segment: var (population variance), softmax (Σ "
                                         "softmax(t·x)·x), std (PyG's standard deviation, 0 where var ≤ 1e-5) or mul "
                                         "(the product)",
                                         kSegmentAggregationNames),
                            {{{"aggr", std::string("softmax")}}}),
        features_attribute()},
       false,
       "n = row i's segment length;  var: y[i, f] = (1/n)·Σ_k x[k, f]² − ((1/n)·Σ_k x[k, f])²;\n"
       "std: y[i, f] = √var[i, f] if var[i, f] > 1e-5, else 0;  mul: y[i, f] = Π_k x[k, f];\n"
       "softmax: y[i, f] = Σ_k α[k, f]·x[k, f],  α[k, f] = exp(t·x[k, f]) / Σ_{l ∈ row i} exp(t·x[l, f])   "
       "(k, l ∈ [row_ptr[i], row_ptr[i+1]), f < features)",
       {"x is [E, features]: one row per edge in edge-id order, so row i's edges are the contiguous rows row_ptr[i] … "
        "row_ptr[i+1]−1 of x (duplicate edges counted). Only the graph's row pointers matter; its columns are not read.",
        "An empty segment gives 0 with var, std and softmax, and 1 with mul (PyG's: its scatter 'mul' starts from ones, "
        "torch.scatter_reduce 'prod' with include_self and torch_scatter's scatter_mul alike).",
        "var is the population variance (divided by n, not n − 1), PyG's VarAggregation; the oracle computes it as PyG "
        "does, mean of squares minus the squared mean, whose float64 rounding is far below a float32 bound.",
        "std is PyG's StdAggregation: var.clamp(min=1e-5).sqrt() with every value ≤ √1e-5 set to 0, so y = 0 and its "
        "gradient 0 where var ≤ 1e-5, and above it y = √var with gradient g·(x[k] − mean)/(n·y). The value jumps at "
        "var = 1e-5: where a variance lies within the declared precision's rounding of it, that element of y is compared "
        "with both sides' values and given no output gradient.",
        "mul's gradient is g·Π_{l≠k} x[l], exact where the segment holds zeros (one zero: the product of the others at "
        "the zero, 0 elsewhere; two or more: 0 everywhere), not g·y/x[k].",
        "softmax: t is one learnable inverse temperature shared by every feature (PyG's SoftmaxAggregation(learn=True), "
        "channels = 1), [1], present only with aggr = softmax; its gradient is returned."}},
      [](const Graph& g, const Attributes& a) {
        const auto cfg = SegmentAggregationConfig::from_attributes(a);
        Shapes s{{"x", {g.num_edges(), cfg.features}}};
        if (cfg.has_temperature()) s["t"] = {1};
        return s;
      },
      [](const Graph& g, const Attributes& a) {
        return Shapes{{"y", {g.n_dst(), SegmentAggregationConfig::from_attributes(a).features}}};
      },
      []<class T>(const Graph& g, const Attributes& a, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        return evaluate_aggregation(g, a, in, gout);
      });
  // std and mul came after var and softmax: a system outside gnncheck that does not declare aggr is
  // asked var and softmax only.
  for (std::string_view later : kSegmentAggregationLaterNames)
    def.spec.attributes.front().opt_in_choices.emplace_back(std::string(later));
  def.kinks.arguments = std_kink_arguments;
  def.kinks.jumping_outputs = {"y"};
  def.wrong_variants = {mul_gradient_by_division(), std_gradient_without_sqrt_factor()};
  def.intermediate_magnitudes = mul_intermediate_magnitudes;
  def.term_magnitudes = moment_term_magnitudes;
  // The measured model: var's and std's conditioning (var cancels where the mean dominates, and the
  // square root magnifies that near 0) is what the float32 evaluation's error over three summation
  // orders shows, and their terms' magnitudes (term_magnitudes) bound what a fused multiply-add
  // leaves where the float32 evaluation cancels exactly (a segment of one value); the softmax's exp
  // is what the orders show; mul's closed-form bound, relative γ of |y| and of
  // |g·Π_{l≠k} x[l]|, lies inside the model's own γ term, which holds A = |y| (checks/tolerance.md,
  // "segment_aggregation's std and mul"). The softmax's backward through autograd cancels on near
  // one-hot segments, which it does not show: its floor (checks/segment_softmax_floor.h).
  def.spec.tolerance = {ToleranceKind::measured, 0, {}, {ToleranceFloor::segment_softmax}};
  // gpu/op_targets.cpp: gpu/segment_aggregation.cu, one thread per (row, feature) over row_ptr.
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = false};
  return def;
}

}  // namespace gnncheck::oracle
