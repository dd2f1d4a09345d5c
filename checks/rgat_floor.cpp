// RGAT's rounding floor (checks/gat_floor.h): GAT's δ_e on the logits' gradient, carried through
// RGAT's chain — z = out_i·q + out_j·k per edge, out_i = x[i]·W_r, out_j = x[j]·W_r — into q, k,
// weight and x.
#include <algorithm>
#include <cmath>
#include <vector>

#include "checks/gat_floor.h"
#include "checks/tolerance.h"
#include "oracle/layers/rgat.h"

namespace gnncheck::checks {

Floors rgat_attention_floors(const oracle::TargetDef& def, const Case& c, double u, double stored_u) {
  if (!c.inputs.count("x") || !c.inputs.count("edge_type") || !c.parameters.count("weight") ||
      !c.parameters.count("q") || !c.parameters.count("k") || !c.grad_outputs.count("y"))
    return {};
  const auto cfg = oracle::layers::RgatConfig::from_attributes(oracle::with_defaults(def.spec, c.attributes));
  const Graph& g = *c.graph;
  const Tensor& x = c.inputs.at("x");
  const Tensor& types = c.inputs.at("edge_type");
  const Tensor& W = c.parameters.at("weight");
  const Tensor& q = c.parameters.at("q");
  const Tensor& k = c.parameters.at("k");
  const Tensor& gy = c.grad_outputs.at("y");
  const index_t H = cfg.heads, C = cfg.out_features, HC = H * C, in = cfg.in_features, E = g.num_edges();
  const double slope = cfg.negative_slope, steepest = std::max(1.0, std::abs(slope));
  const auto relation = [&](index_t e) { return static_cast<index_t>(types[e]); };
  // out_i and out_j per edge, and the logits LeakyReLU(out_i·q + out_j·k).
  // With a storage format coarser than the sums (stored_u > 0): each logit on |inputs| (|x|·|W_r|
  // through |q|, |k|), which the storing term reads; 0 otherwise.
  Tensor out_i({E, HC}), out_j({E, HC}), logit({E, H}), logit_terms({E, H});
  std::vector<double> abs_i(static_cast<size_t>(HC)), abs_j(static_cast<size_t>(HC));
  for (index_t e = 0; e < E; ++e) {
    const double* w = W.data() + relation(e) * in * HC;
    const index_t i = g.row_of_edge()[e], j = g.col_idx()[e];
    std::fill(abs_i.begin(), abs_i.end(), 0.0);
    std::fill(abs_j.begin(), abs_j.end(), 0.0);
    for (index_t f = 0; f < in; ++f)
      for (index_t m = 0; m < HC; ++m) {
        out_i.at(e, m) += x.at(i, f) * w[f * HC + m];
        out_j.at(e, m) += x.at(j, f) * w[f * HC + m];
        if (stored_u > 0) {
          abs_i[static_cast<size_t>(m)] += std::abs(x.at(i, f) * w[f * HC + m]);
          abs_j[static_cast<size_t>(m)] += std::abs(x.at(j, f) * w[f * HC + m]);
        }
      }
    for (index_t h = 0; h < H; ++h) {
      double z = 0.0, terms = 0.0;
      for (index_t m = 0; m < HC; ++m) {
        z += out_i.at(e, m) * q.at(m, h) + out_j.at(e, m) * k.at(m, h);
        if (stored_u > 0)
          terms += abs_i[static_cast<size_t>(m)] * std::abs(q.at(m, h)) + abs_j[static_cast<size_t>(m)] * std::abs(k.at(m, h));
      }
      logit.at(e, h) = z > 0 ? z : slope * z;
      logit_terms.at(e, h) = steepest * terms;
    }
  }
  auto grad_out = [&](index_t i, index_t head, index_t ch) {
    return cfg.concat ? gy.at(i, head * C + ch) : gy.at(i, ch) / static_cast<double>(H);
  };
  // δ per edge and head, through the LeakyReLU's steepest side.
  Tensor delta({std::max<index_t>(E, 1), H});
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t begin = g.row_ptr()[i], end = g.row_ptr()[i + 1];
    if (begin == end) continue;
    const double d = static_cast<double>(end - begin) + 4.0 + static_cast<double>(C);
    for (index_t h = 0; h < H; ++h) {
      std::vector<double> logits(static_cast<size_t>(end - begin)), G(logits.size()), row_delta(logits.size());
      double row_terms = 0.0;
      std::vector<double> gbar(logits.size());
      for (index_t e = begin; e < end; ++e) {
        double mag = 0.0, signed_g = 0.0;
        for (index_t ch = 0; ch < C; ++ch) {
          mag += std::abs(grad_out(i, h, ch)) * std::abs(out_j.at(e, h * C + ch));
          signed_g += grad_out(i, h, ch) * out_j.at(e, h * C + ch);
        }
        logits[static_cast<size_t>(e - begin)] = logit.at(e, h);
        G[static_cast<size_t>(e - begin)] = mag;
        gbar[static_cast<size_t>(e - begin)] = signed_g;
        row_terms = std::max(row_terms, logit_terms.at(e, h));
      }
      // With storage coarser than the sums: ḡ's own storing, and what moving the logits apart does.
      softmax_backward_rounding(logits, G, gamma(d, u) + (stored_u > 0 ? gamma(3, stored_u) : 0.0), row_delta);
      add_softmax_backward_logit_moves(logits, gbar, unshared_logit_spread(row_terms, end - begin, stored_u), row_delta);
      for (index_t e = begin; e < end; ++e) delta.at(e, h) = steepest * row_delta[static_cast<size_t>(e - begin)];
    }
  }
  Tensor floor_q(q.shape()), floor_k(k.shape()), floor_w(W.shape()), floor_x(x.shape());
  std::vector<double> fi(static_cast<size_t>(HC)), fj(static_cast<size_t>(HC));
  for (index_t e = 0; e < E; ++e) {
    const index_t i = g.row_of_edge()[e], j = g.col_idx()[e];
    for (index_t m = 0; m < HC; ++m) {
      double si = 0.0, sj = 0.0;
      for (index_t h = 0; h < H; ++h) {
        floor_q.at(m, h) += std::abs(out_i.at(e, m)) * delta.at(e, h);
        floor_k.at(m, h) += std::abs(out_j.at(e, m)) * delta.at(e, h);
        si += std::abs(q.at(m, h)) * delta.at(e, h);
        sj += std::abs(k.at(m, h)) * delta.at(e, h);
      }
      fi[static_cast<size_t>(m)] = si;
      fj[static_cast<size_t>(m)] = sj;
    }
    const double* w = W.data() + relation(e) * in * HC;
    double* fw = floor_w.data() + relation(e) * in * HC;
    for (index_t f = 0; f < in; ++f)
      for (index_t m = 0; m < HC; ++m) {
        fw[f * HC + m] += std::abs(x.at(i, f)) * fi[static_cast<size_t>(m)] + std::abs(x.at(j, f)) * fj[static_cast<size_t>(m)];
        floor_x.at(i, f) += fi[static_cast<size_t>(m)] * std::abs(w[f * HC + m]);
        floor_x.at(j, f) += fj[static_cast<size_t>(m)] * std::abs(w[f * HC + m]);
      }
  }
  Floors floors;
  floors.emplace_back("gradient q", std::move(floor_q));
  floors.emplace_back("gradient k", std::move(floor_k));
  floors.emplace_back("gradient weight", std::move(floor_w));
  floors.emplace_back("gradient x", std::move(floor_x));
  return floors;
}

}  // namespace gnncheck::checks
