#include "oracle/kink_arguments.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "oracle/layers/dense.h"
#include "oracle/layers/gin.h"
#include "oracle/layers/rgat.h"
#include "oracle/layers/sage.h"
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
      k.units.push_back({layers::kGinMlpSite, i * width + f});
    }
  }
  auto before = k.describe;
  k.describe = [width, first, before](std::size_t n) {
    if (n < first && before) return before(n);
    n -= first;
    return fmt::format("ReLU pre-activation z1[{}, {}]", static_cast<index_t>(n) / width, static_cast<index_t>(n) % width);
  };
}

}  // namespace

namespace {

// GIN's and GINE's kinks: GINE's message ReLUs, a max aggregation's ties, and the MLP's ReLU over
// h's aggregated part (computed for the case's aggregation, and on |inputs| for Σ|terms|).
void gin_family_kink_arguments(const Case& c, const Attributes& attrs, bool edge_messages, KinkArguments& k) {
  auto cfg = layers::GinConfig::from_attributes(attrs);
  cfg.edge_messages = edge_messages;
  const Graph& g = *c.graph;
  const Tensor& x = tensor_of(c, "x");
  const index_t width = x.row_size();
  const Tensor edge_attr = edge_messages ? tensor_of(c, "edge_attr") : Tensor();
  const auto col = g.col_idx();
  // Each edge's message on |inputs|: |x[col_e]| (+ |edge_attr[e]|), which bounds |its message|.
  Tensor v_abs({g.num_edges(), width});
  for (index_t e = 0; e < g.num_edges(); ++e)
    for (index_t f = 0; f < width; ++f)
      v_abs.at(e, f) = std::abs(x.at(col[e], f)) + (edge_messages ? std::abs(edge_attr.at(e, f)) : 0.0);
  struct Where {
    int kind;  // 0: a message's ReLU (edge, column), 1: a max's tie (row, column, edge, selected)
    index_t row, column, edge, selected;
  };
  auto where = std::make_shared<std::vector<Where>>();
  if (edge_messages) {
    // The messages' ReLU at m_e = x[col_e] + edge_attr[e]: one sum of two terms, each an input.
    const Tensor m = layers::gine_messages(g, x, edge_attr);
    for (index_t e = 0; e < g.num_edges(); ++e)
      for (index_t f = 0; f < width; ++f) {
        k.offsets.push_back(m.at(e, f));
        k.abs_terms.push_back(v_abs.at(e, f));
        k.terms.push_back(2 + 2);
        k.units.push_back({layers::kGineMessageSite, e * width + f});
        where->push_back({0, -1, f, e, -1});
      }
  }
  const Tensor v = layers::gin_edge_messages(g, cfg, x, edge_attr);
  const auto row_ptr = g.row_ptr();
  const bool max = cfg.aggregation == layers::GinAggregation::max;
  if (max)
    // A max's kink is a tie: per row and column, the selected edge's message against every other
    // edge's. GIN's edges from the selected edge's own source carry the same message to the same
    // row of x: no kink (an infinite offset keeps the count per edge fixed). GINE's messages are the
    // edges' own.
    for (index_t i = 0; i < g.n_dst(); ++i)
      for (index_t f = 0; f < width; ++f) {
        const index_t sel = layers::gin_selected_edge(g, v, i, f, layers::KinkSide::left);
        for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
          if (e == sel) continue;
          const bool same = !edge_messages && col[e] == col[sel];
          k.offsets.push_back(same ? std::numeric_limits<double>::infinity() : v.at(sel, f) - v.at(e, f));
          k.abs_terms.push_back(same ? 0.0 : v_abs.at(sel, f) + v_abs.at(e, f));
          k.terms.push_back(edge_messages ? 4 + 4 : 2);
          k.units.push_back({});  // a tie
          where->push_back({1, i, f, e, sel});
        }
      }
  // h's aggregated part and its |inputs| counterpart, and the terms each row of it carries.
  Tensor h({g.n_dst(), width}), h_abs({g.n_dst(), width});
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t d = row_ptr[i + 1] - row_ptr[i];
    for (index_t f = 0; f < width; ++f) {
      if (max) {
        if (const index_t sel = layers::gin_selected_edge(g, v, i, f, layers::KinkSide::left); sel >= 0) h.at(i, f) = v.at(sel, f);
        for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) h_abs.at(i, f) = std::max(h_abs.at(i, f), v_abs.at(e, f));
        continue;
      }
      for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
        h.at(i, f) += v.at(e, f);
        h_abs.at(i, f) += v_abs.at(e, f);
      }
      if (cfg.aggregation == layers::GinAggregation::mean && d > 0) {
        h.at(i, f) /= static_cast<double>(d);
        h_abs.at(i, f) /= static_cast<double>(d);
      }
    }
  }
  // Terms and roundings of a row of h's aggregated part: each message's (GINE: a sum and a ReLU), a
  // mean's division; a max passes one message through.
  const double per_message = edge_messages ? 2.0 : 1.0;
  const auto aggregation = cfg.aggregation;
  gin_mlp_kink_arguments(c, std::move(h), std::move(h_abs),
                         [&g, per_message, aggregation](index_t i) {
                           const double d = static_cast<double>(g.in_degree(i));
                           if (aggregation == layers::GinAggregation::max) return per_message;
                           return per_message * d + (aggregation == layers::GinAggregation::mean ? 1.0 : 0.0);
                         },
                         k);
  k.upstream = {"x", "weight1", "bias1", "eps"};
  if (edge_messages) {
    k.upstream.push_back("edge_attr");
    k.site_inputs[layers::kGineMessageSite] = {"x", "edge_attr"};
  }
  const std::size_t before = where->size();
  auto mlp = k.describe;
  k.describe = [where, before, mlp](std::size_t n) {
    if (n >= before) return mlp(n);
    const Where& w = (*where)[n];
    if (w.kind == 0)
      return fmt::format("message ReLU pre-activation x[col_e] + edge_attr[e] at e = {}, column {}", w.edge, w.column);
    return fmt::format("the max of row {}, column {}: edge {}'s message against the selected edge {}'s", w.row, w.column,
                       w.edge, w.selected);
  };
}

}  // namespace

void gin_kink_arguments(const Case& c, const Attributes& attrs, KinkArguments& k) {
  gin_family_kink_arguments(c, attrs, false, k);
}

void gine_kink_arguments(const Case& c, const Attributes& attrs, KinkArguments& k) {
  gin_family_kink_arguments(c, attrs, true, k);
}

void sage_kink_arguments(const Case& c, const Attributes& attrs, KinkArguments& k) {
  const auto cfg = layers::SageConfig::from_attributes(attrs);
  if (cfg.aggregation == layers::SageAggregation::mean && !cfg.project) return;  // a linear layer
  const Graph& g = *c.graph;
  const Tensor& x = tensor_of(c, "x");
  const index_t width = cfg.in_features;
  // The projection's pre-activation z = x·W_pool + b_pool and |x|·|W_pool| + |b_pool| (Σ|terms|).
  layers::SageParameters<double> p;
  Tensor z, z_abs;
  if (cfg.project) {
    p.weight_pool = tensor_of(c, "weight_pool");
    p.bias_pool = tensor_of(c, "bias_pool");
    z = matmul(x, p.weight_pool);
    layers::add_bias(z, p.bias_pool);
    z_abs = matmul(absolute(x), absolute(p.weight_pool));
    layers::add_bias(z_abs, absolute(p.bias_pool));
  }
  const Tensor messages = layers::sage_messages(cfg, x, p);
  const double projection_terms = cfg.project ? static_cast<double>(width + 2 + 4) : 0.0;
  auto magnitude = [&](index_t j, index_t f) { return cfg.project ? z_abs.at(j, f) : std::abs(x.at(j, f)); };
  struct Where {
    index_t row, column, edge, selected;  // row < 0: the projection's ReLU at source `edge`, column
  };
  auto where = std::make_shared<std::vector<Where>>();
  if (cfg.aggregation == layers::SageAggregation::max) {
    // A max's kink is a tie: per row and column, the selected edge's message against every other
    // edge's. An edge from the selected edge's own source carries the same message and sends the
    // gradient to the same row of x: no kink (an infinite offset keeps the count per edge fixed).
    const auto row_ptr = g.row_ptr();
    const auto col = g.col_idx();
    for (index_t i = 0; i < g.n_dst(); ++i)
      for (index_t f = 0; f < width; ++f) {
        const index_t sel = layers::sage_selected_edge(g, messages, i, f, layers::KinkSide::left);
        for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
          if (e == sel) continue;
          const bool same_source = col[e] == col[sel];
          k.offsets.push_back(same_source ? std::numeric_limits<double>::infinity()
                                          : messages.at(col[sel], f) - messages.at(col[e], f));
          k.abs_terms.push_back(same_source ? 0.0 : magnitude(col[sel], f) + magnitude(col[e], f));
          k.terms.push_back(2 + projection_terms);
          k.units.push_back({});  // a tie
          where->push_back({i, f, e, sel});
        }
      }
  }
  if (cfg.project) {
    // The projection's ReLU, at every source some edge reads.
    std::vector<char> read(static_cast<std::size_t>(g.n_src()), 0);
    for (const index_t j : g.col_idx()) read[static_cast<std::size_t>(j)] = 1;
    for (index_t j = 0; j < g.n_src(); ++j)
      if (read[static_cast<std::size_t>(j)])
        for (index_t f = 0; f < width; ++f) {
          k.offsets.push_back(z.at(j, f));
          k.abs_terms.push_back(z_abs.at(j, f));
          k.terms.push_back(projection_terms);
          k.units.push_back({0, j * width + f});
          where->push_back({-1, f, j, -1});
        }
  }
  k.upstream = {"x", "weight_pool", "bias_pool"};
  k.describe = [where](std::size_t n) {
    const Where& w = (*where)[n];
    if (w.row < 0) return fmt::format("the projection's ReLU pre-activation z[{}, {}]", w.edge, w.column);
    return fmt::format("the max of row {}, column {}: edge {}'s message against the selected edge {}'s", w.row, w.column,
                       w.edge, w.selected);
  };
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
  for (std::size_t n = 0; n < k.offsets.size(); ++n) k.units.push_back({0, static_cast<index_t>(n)});
  k.upstream = {"x", "weight", "att_src", "att_dst"};
  k.describe = [heads, self_loops](std::size_t n) {
    return fmt::format("LeakyReLU logit of edge {} (of A{}), head {}", static_cast<index_t>(n) / heads,
                       self_loops ? " + I" : "", static_cast<index_t>(n) % heads);
  };
}

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
  k.offsets = z.values();
  k.abs_terms = z_abs.values();
  k.terms.assign(k.offsets.size(), terms);
  for (std::size_t n = 0; n < k.offsets.size(); ++n) k.units.push_back({0, static_cast<index_t>(n)});
  k.upstream = {"x", "weight_src", "weight_dst", "att"};
  k.describe = [width, self_loops](std::size_t n) {
    return fmt::format("LeakyReLU pre-activation z of edge {} (of A{}), channel {} (head·C + c)",
                       static_cast<index_t>(n) / width, self_loops ? " + I" : "", static_cast<index_t>(n) % width);
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
  k.offsets = z.values();
  k.abs_terms = z_abs.values();
  k.terms.assign(k.offsets.size(), terms);
  for (std::size_t n = 0; n < k.offsets.size(); ++n) k.units.push_back({0, static_cast<index_t>(n)});
  k.upstream = {"x", "weight", "q", "k"};
  const index_t heads = cfg.heads;
  k.describe = [heads](std::size_t n) {
    return fmt::format("LeakyReLU logit of edge {}, head {}", static_cast<index_t>(n) / heads,
                       static_cast<index_t>(n) % heads);
  };
}

KinkArguments kink_arguments(const Case& c) {
  KinkArguments k;
  const TargetDef& def = entry_of(c);
  if (def.kinks.arguments) def.kinks.arguments(c, with_defaults(def.spec, c.attributes), k);
  if (!k.units.empty() && k.units.size() != k.offsets.size())
    throw InternalError(fmt::format("kink_arguments of '{}': {} units for {} arguments", c.target, k.units.size(),
                                    k.offsets.size()));
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
