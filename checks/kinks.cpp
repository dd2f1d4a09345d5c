#include "checks/kinks.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "checks/tolerance.h"
#include "oracle/layers/dense.h"
#include "oracle/layers/self_loops.h"
#include "oracle/sddmm.h"
#include "oracle/spmm.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

namespace {

using oracle::layers::matmul;

Tensor absolute(const Tensor& t) {
  Tensor a = t;
  for (double& v : a.values()) v = std::abs(v);
  return a;
}

const Tensor& tensor_of(const Case& c, const std::string& name) {
  auto it = c.inputs.find(name);
  return it != c.inputs.end() ? it->second : c.parameters.at(name);
}

// Keeps the argument with the smallest distance/margin.
struct Nearest {
  double u;
  std::optional<NearestKink> best;
  double best_ratio = std::numeric_limits<double>::infinity();
  template <class Describe>
  void offer(double distance, double abs_terms, double terms, Describe&& what) {
    const double margin = 2 * gamma(terms, u) * abs_terms;
    const double ratio = margin > 0 ? distance / margin : (distance == 0 ? 0.0 : std::numeric_limits<double>::infinity());
    if (ratio >= best_ratio) return;
    best_ratio = ratio;
    best = NearestKink{what(), distance, margin, distance <= margin, {}, ""};
  }
};

void gin_kinks(const Case& c, Nearest& n) {
  const Graph& g = *c.graph;
  const Tensor& x = tensor_of(c, "x");
  const Tensor& w1 = tensor_of(c, "weight1");
  const double eps = tensor_of(c, "eps")[0];
  const bool bias = c.parameters.count("bias1") || c.inputs.count("bias1");
  // z₁ = ((1+ε)·x_dst + A·x)·W₁ + b₁, and the same on |inputs| for Σ|terms|.
  Tensor h = oracle::spmm_forward(g, x), h_abs = oracle::spmm_forward(g, absolute(x));
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t f = 0; f < x.row_size(); ++f) {
      h.at(i, f) += (1 + eps) * x.at(i, f);
      h_abs.at(i, f) += (1 + std::abs(eps)) * std::abs(x.at(i, f));
    }
  Tensor z = matmul(h, w1), z_abs = matmul(h_abs, absolute(w1));
  if (bias) {
    oracle::layers::add_bias(z, tensor_of(c, "bias1"));
    oracle::layers::add_bias(z_abs, absolute(tensor_of(c, "bias1")));
  }
  for (index_t i = 0; i < z.rows(); ++i) {
    // Terms: the row's in-degree + 1 aggregated, in_features products, the bias; roundings: the
    // inputs, (1+ε), each product.
    const double terms = static_cast<double>(g.in_degree(i) + 1 + x.row_size() + 1 + 4);
    for (index_t k = 0; k < z.row_size(); ++k)
      n.offer(std::abs(z.at(i, k)), z_abs.at(i, k), terms, [&] { return fmt::format("ReLU pre-activation z1[{}, {}]", i, k); });
  }
}

void gat_kinks(const Case& c, Nearest& n) {
  const Attributes a = oracle::with_defaults(oracle::find_target("gat").spec, c.attributes);
  if (a.get_double("negative_slope") == 1.0) return;  // LeakyReLU with slope 1 is the identity
  const Graph& g = *c.graph;
  const index_t heads = a.get_int("heads"), channels = a.get_int("out_features");
  const oracle::layers::AggregationGraph agg(g, a.get_bool("self_loops"));
  const Tensor& x = tensor_of(c, "x");
  const Tensor h = matmul(x, tensor_of(c, "weight")), h_abs = matmul(absolute(x), absolute(tensor_of(c, "weight")));
  auto scores = [&](const Tensor& hh, const Tensor& att, index_t rows) {
    Tensor s({rows, heads});
    for (index_t j = 0; j < rows; ++j)
      for (index_t k = 0; k < heads; ++k)
        for (index_t ch = 0; ch < channels; ++ch) s.at(j, k) += hh.at(j, k * channels + ch) * att.at(k, ch);
    return s;
  };
  const Tensor& att_src = tensor_of(c, "att_src");
  const Tensor& att_dst = tensor_of(c, "att_dst");
  const Tensor logits = oracle::sddmm_add_forward(*agg, scores(h, att_dst, g.n_dst()), scores(h, att_src, g.n_src()));
  const Tensor logits_abs = oracle::sddmm_add_forward(*agg, scores(h_abs, absolute(att_dst), g.n_dst()),
                                                      scores(h_abs, absolute(att_src), g.n_src()));
  // Terms: in_features products for h, channels for each score, the sum of two scores; roundings:
  // the inputs and each product.
  const double terms = static_cast<double>(x.row_size() + channels + 2 + 4);
  for (index_t e = 0; e < logits.rows(); ++e)
    for (index_t k = 0; k < heads; ++k)
      n.offer(std::abs(logits.at(e, k)), logits_abs.at(e, k), terms,
              [&] { return fmt::format("LeakyReLU logit of edge {} (of A{}), head {}", e, a.get_bool("self_loops") ? " + I" : "", k); });
}

void agnn_kinks(const Case& c, Nearest& n) {
  constexpr double kNormFloor = 1e-12;  // oracle/layers/agnn.cpp
  const Tensor& x = tensor_of(c, "x");
  for (index_t i = 0; i < x.rows(); ++i) {
    double sq = 0;
    for (index_t f = 0; f < x.row_size(); ++f) sq += x.at(i, f) * x.at(i, f);
    const double norm = std::sqrt(sq);
    n.offer(std::abs(norm - kNormFloor), norm, static_cast<double>(x.row_size() + 4),
            [&] { return fmt::format("the norm of row {} of x at AGNN's floor max(‖x_i‖, 1e-12)", i); });
  }
}

}  // namespace

std::optional<NearestKink> nearest_kink(const Case& c, Precision p) {
  Nearest n{unit_roundoff(p), std::nullopt};
  if (c.target == "gin")
    gin_kinks(c, n);
  else if (c.target == "gat")
    gat_kinks(c, n);
  else if (c.target == "agnn")
    agnn_kinks(c, n);
  if (n.best) {
    if (c.target == "gin") n.best->upstream = {"x", "weight1", "bias1", "eps"};
    if (c.target == "gat") n.best->upstream = {"x", "weight", "att_src", "att_dst"};
    if (c.target == "agnn") n.best->upstream = {"x"};
    n.best->description =
        fmt::format("{} is {:.3g} from its kink, {} the {:.3g} that a correct {} implementation may err in computing it",
                    n.best->what, n.best->distance, n.best->near ? "within" : "beyond", n.best->margin, to_string(p));
  }
  return n.best;
}

}  // namespace gnncheck::checks
