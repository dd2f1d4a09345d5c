// AGNN's rounding floor (agnn_floor.h); the derivation is in checks/tolerance.md ("AGNN's floor").
#include "checks/agnn_floor.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "checks/tolerance.h"
#include "oracle/layers/agnn.h"
#include "oracle/layers/self_loops.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

namespace {
constexpr double kNormFloor = 1e-12;  // oracle/layers/agnn.cpp: x / max(‖x‖, 1e-12)
}  // namespace

void add_agnn_attention_floor(const Case& c, double u, double safety, std::map<std::string, Tensor>& tensors) {
  if (!c.inputs.count("x") || !c.parameters.count("beta") || !c.grad_outputs.count("y") ||
      c.parameters.at("beta").size() != 1)
    return;
  const auto cfg =
      oracle::layers::AgnnConfig::from_attributes(oracle::with_defaults(oracle::entry_of(c).spec, c.attributes));
  // The layer's own A + I (shared with the evaluations beside this one); the case's graph itself
  // when the layer adds no self-loops.
  const oracle::layers::AggregationGraph looped(*c.graph, cfg.self_loops);
  const Graph& g = *looped;
  const Tensor& x = c.inputs.at("x");
  const Tensor& gy = c.grad_outputs.at("y");
  const double beta = c.parameters.at("beta")[0];
  const index_t F = x.row_size();
  if (x.rows() != g.n_src() || gy.rows() != g.n_dst() || gy.row_size() != F) return;

  // Every term passes through at most the softmax's forward and backward row sums, one node's sums
  // into grad_n (in- plus out-degree) and the F-term dot products, plus a few single roundings.
  index_t max_in = 0, max_total = 0;
  for (index_t i = 0; i < g.n_src(); ++i)
    max_total = std::max(max_total, (i < g.n_dst() ? g.in_degree(i) : 0) + g.out_degree(i));
  for (index_t i = 0; i < g.n_dst(); ++i) max_in = std::max(max_in, g.in_degree(i));
  const double K = static_cast<double>(2 * max_in + max_total + F + 16);
  // The logits' own rounding, |β|·γ_(F+4), moves α relatively by twice that and grad_logit by 4|β|γ_(F+4)·A_e.
  const double logit_part = 4.0 * std::abs(beta) * gamma(static_cast<double>(F + 4), u);
  const double E = static_cast<double>(g.num_edges());

  std::vector<double> divisor(static_cast<size_t>(g.n_src()));
  Tensor n(x.shape());
  for (index_t j = 0; j < g.n_src(); ++j) {
    double sq = 0.0;
    for (index_t f = 0; f < F; ++f) sq += x.at(j, f) * x.at(j, f);
    divisor[static_cast<size_t>(j)] = std::max(std::sqrt(sq), kNormFloor);
    for (index_t f = 0; f < F; ++f) n.at(j, f) = x.at(j, f) / divisor[static_cast<size_t>(j)];
  }

  // A_e = α_e·(G_e + Σ_row α·G), G_e = Σ_c |ȳ_i||x_j|: Σ|terms| of grad_logit_e = α_e(ḡ_e − Σ_row α ḡ).
  std::vector<double> A(static_cast<size_t>(g.num_edges()), 0.0);
  double floor_beta = 0.0;
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t begin = g.row_ptr()[i], end = g.row_ptr()[i + 1];
    if (begin == end) continue;
    std::vector<double> alpha(static_cast<size_t>(end - begin)), G(alpha.size()), cos(alpha.size()), cabs(alpha.size());
    double top = -INFINITY;
    for (index_t e = begin; e < end; ++e) {
      const index_t j = g.col_idx()[e];
      const size_t k = static_cast<size_t>(e - begin);
      for (index_t f = 0; f < F; ++f) {
        cos[k] += n.at(i, f) * n.at(j, f);
        cabs[k] += std::abs(n.at(i, f) * n.at(j, f));
        G[k] += std::abs(gy.at(i, f) * x.at(j, f));
      }
      alpha[k] = beta * cos[k];
      top = std::max(top, alpha[k]);
    }
    double norm = 0.0, weighted = 0.0;
    for (double& l : alpha) norm += (l = std::exp(l - top));
    for (double& a : alpha) a /= norm;
    for (size_t k = 0; k < alpha.size(); ++k) weighted += alpha[k] * G[k];
    for (index_t e = begin; e < end; ++e) {
      const size_t k = static_cast<size_t>(e - begin);
      A[static_cast<size_t>(e)] = alpha[k] * (G[k] + weighted);
      // β̄ = Σ_e cos_e·grad_logit_e: grad_logit's rounding times |cos|, cos's own (≤ γ_(F+4)·Σ|n_i||n_j|)
      // times |grad_logit| ≤ A_e, and the E-term sum.
      floor_beta += (std::abs(cos[k]) + cabs[k]) * (gamma(K + E, u) + logit_part) * A[static_cast<size_t>(e)];
    }
  }

  // T = Σ|terms| of grad_n_i = Σ_{e into i} β·grad_logit_e·n_j + Σ_{e out of i} β·grad_logit_e·n_dst(e),
  // held to (2γ_K + logit part)·T (the sums and grad_logit's rounding; the normalization's own
  // roundings, γ_(F+6)); then through the normalization's Jacobian (I − n nᵀ)/‖x‖ (I/floor below the
  // floor) element-wise in absolute values: (E_c + |n_c|·Σ_k |n_k|·E_k)/max(‖x‖, floor).
  Tensor T(x.shape());
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e) {
      const index_t j = g.col_idx()[e];
      const double w = std::abs(beta) * A[static_cast<size_t>(e)];
      for (index_t f = 0; f < F; ++f) {
        T.at(i, f) += w * std::abs(n.at(j, f));
        T.at(j, f) += w * std::abs(n.at(i, f));
      }
    }
  const double relative = 2.0 * gamma(K, u) + logit_part;
  Tensor floor_x(x.shape());
  for (index_t j = 0; j < g.n_src(); ++j) {
    double projected = 0.0;
    for (index_t f = 0; f < F; ++f) projected += std::abs(n.at(j, f)) * relative * T.at(j, f);
    for (index_t f = 0; f < F; ++f)
      floor_x.at(j, f) = (relative * T.at(j, f) + std::abs(n.at(j, f)) * projected) / divisor[static_cast<size_t>(j)];
  }

  if (auto it = tensors.find("gradient beta"); it != tensors.end() && it->second.size() == 1)
    it->second[0] += safety * floor_beta;
  if (auto it = tensors.find("gradient x"); it != tensors.end() && it->second.shape() == floor_x.shape())
    for (index_t k = 0; k < floor_x.size(); ++k) it->second[k] += safety * floor_x[k];
}

}  // namespace gnncheck::checks
