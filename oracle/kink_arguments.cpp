#include "oracle/kink_arguments.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "oracle/layers/dense.h"
#include "oracle/layers/gin.h"
#include "oracle/layers/self_loops.h"
#include "oracle/sddmm.h"
#include "oracle/spmm.h"
#include "oracle/targets.h"

namespace gnncheck::oracle {
namespace {

using layers::matmul;

Tensor absolute(const Tensor& t) {
  Tensor a = t;
  for (double& v : a.values()) v = std::abs(v);
  return a;
}

const Tensor& tensor_of(const Case& c, const std::string& name) {
  auto it = c.inputs.find(name);
  return it != c.inputs.end() ? it->second : c.parameters.at(name);
}

}  // namespace

namespace {

// GIN's and GINE's MLP ReLU at z₁ = h·W₁ + b₁, given h's aggregated part (A·x, or GINE's Σ ReLU(m))
// and the same on |inputs|, and how many terms and roundings each row of it carries.
void gin_mlp_kink_arguments(const Case& c, Tensor h, Tensor h_abs, const std::function<double(index_t)>& row_terms,
                            KinkArguments& k) {
  const Graph& g = *c.graph;
  const Tensor& x = tensor_of(c, "x");
  const Tensor& w1 = tensor_of(c, "weight1");
  const double eps = tensor_of(c, "eps")[0];
  const bool bias = c.parameters.count("bias1") || c.inputs.count("bias1");
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t f = 0; f < x.row_size(); ++f) {
      h.at(i, f) += (1 + eps) * x.at(i, f);
      h_abs.at(i, f) += (1 + std::abs(eps)) * std::abs(x.at(i, f));
    }
  Tensor z = matmul(h, w1), z_abs = matmul(h_abs, absolute(w1));
  if (bias) {
    layers::add_bias(z, tensor_of(c, "bias1"));
    layers::add_bias(z_abs, absolute(tensor_of(c, "bias1")));
  }
  const index_t width = z.row_size();
  const std::size_t first = k.offsets.size();
  for (index_t i = 0; i < z.rows(); ++i) {
    // Terms: the row's aggregated ones + 1, in_features products, the bias; roundings: the inputs,
    // (1+ε), each product.
    const double terms = row_terms(i) + static_cast<double>(1 + x.row_size() + 1 + 4);
    for (index_t f = 0; f < width; ++f) {
      k.offsets.push_back(z.at(i, f));
      k.abs_terms.push_back(z_abs.at(i, f));
      k.terms.push_back(terms);
    }
  }
  auto before = k.describe;
  k.describe = [width, first, before](std::size_t n) {
    if (n < first) return before(n);
    n -= first;
    return fmt::format("ReLU pre-activation z1[{}, {}]", static_cast<index_t>(n) / width, static_cast<index_t>(n) % width);
  };
}

}  // namespace

void gin_kink_arguments(const Case& c, const Attributes&, KinkArguments& k) {
  const Graph& g = *c.graph;
  const Tensor& x = tensor_of(c, "x");
  // z₁ = ((1+ε)·x_dst + A·x)·W₁ + b₁, and the same on |inputs| for Σ|terms|.
  gin_mlp_kink_arguments(c, spmm_forward(g, x), spmm_forward(g, absolute(x)),
                         [&g](index_t i) { return static_cast<double>(g.in_degree(i)); }, k);
  k.upstream = {"x", "weight1", "bias1", "eps"};
}

void gine_kink_arguments(const Case& c, const Attributes&, KinkArguments& k) {
  const Graph& g = *c.graph;
  const Tensor& x = tensor_of(c, "x");
  const Tensor& edge_attr = tensor_of(c, "edge_attr");
  // The messages' ReLU at m_e = x[col_e] + edge_attr[e]: one sum of two terms, each an input.
  const Tensor m = layers::gine_messages(g, x, edge_attr);
  const Tensor m_abs = layers::gine_messages(g, absolute(x), absolute(edge_attr));
  const index_t width = x.row_size();
  for (index_t n = 0; n < m.size(); ++n) {
    k.offsets.push_back(m[n]);
    k.abs_terms.push_back(m_abs[n]);
    k.terms.push_back(2 + 2);
  }
  k.describe = [width](std::size_t n) {
    return fmt::format("message ReLU pre-activation x[col_e] + edge_attr[e] at e = {}, column {}", static_cast<index_t>(n) / width,
                       static_cast<index_t>(n) % width);
  };
  // The MLP's ReLU, over h's aggregated part Σ_row ReLU(m) (on |inputs|: Σ_row |x_j| + |edge_attr_e|,
  // which bounds each |ReLU(m)|).
  Tensor h({g.n_dst(), width}), h_abs({g.n_dst(), width});
  const auto row_of = g.row_of_edge();
  for (index_t e = 0; e < g.num_edges(); ++e)
    for (index_t f = 0; f < width; ++f) {
      h.at(row_of[e], f) += std::max(0.0, m.at(e, f));
      h_abs.at(row_of[e], f) += m_abs.at(e, f);
    }
  gin_mlp_kink_arguments(c, std::move(h), std::move(h_abs),
                         [&g](index_t i) { return 2.0 * static_cast<double>(g.in_degree(i)); }, k);
  k.upstream = {"x", "edge_attr", "weight1", "bias1", "eps"};
}

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
  k.offsets = logits.values();
  k.abs_terms = logits_abs.values();
  k.terms.assign(k.offsets.size(), terms);
  k.upstream = {"x", "weight", "att_src", "att_dst"};
  k.describe = [heads, self_loops](std::size_t n) {
    return fmt::format("LeakyReLU logit of edge {} (of A{}), head {}", static_cast<index_t>(n) / heads,
                       self_loops ? " + I" : "", static_cast<index_t>(n) % heads);
  };
}

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

KinkArguments kink_arguments(const Case& c) {
  KinkArguments k;
  const TargetDef& def = find_target(c.target);
  if (def.kinks.arguments) def.kinks.arguments(c, with_defaults(def.spec, c.attributes), k);
  return k;
}

bool kink_between(const Case& a, const Case& b) {
  const KinkArguments ka = kink_arguments(a), kb = kink_arguments(b);
  if (ka.offsets.size() != kb.offsets.size())
    throw InternalError(fmt::format("kink_between: {} and {} kink arguments for '{}': not the same case shape",
                                    ka.offsets.size(), kb.offsets.size(), a.target));
  for (std::size_t n = 0; n < ka.offsets.size(); ++n) {
    const double x = ka.offsets[n], y = kb.offsets[n];
    if (x == y) continue;  // an argument the step does not move keeps its side
    if (x == 0 || y == 0 || (x < 0) != (y < 0)) return true;
  }
  return false;
}

}  // namespace gnncheck::oracle
