#include "checks/gat_floor.h"

#include <algorithm>
#include <cmath>

#include "checks/tolerance.h"
#include "core/parallel.h"
#include "oracle/layers/gat.h"
#include "oracle/layers/self_loops.h"

namespace gnncheck::checks {
namespace {

// One row's softmax α, and how far an α can rise when two logits move apart by S: min(1, α_k·e^(2S)),
// formed without e^(2S) itself (which overflows on `large` values).
struct RowSoftmax {
  std::span<const double> logits;
  double top = -INFINITY, norm = 0.0;
  std::vector<double> alpha;
  explicit RowSoftmax(std::span<const double> l) : logits(l), alpha(l.size(), 0.0) {
    for (double v : logits) top = std::max(top, v);
    if (!finite()) return;
    for (size_t k = 0; k < logits.size(); ++k) norm += (alpha[k] = std::exp(logits[k] - top));
    for (double& a : alpha) a /= norm;
  }
  bool finite() const { return std::isfinite(top); }
  double reach(size_t k, double spread) const { return std::min(1.0, std::exp(logits[k] - top + 2.0 * spread) / norm); }
};

// With attention dropout, α's movement on magnitudes: 3·(e^(2S) − 1)·α_k·(G_k + Σ α·G), held to what
// any movement of α within [0, min(1, α_k·e^(2S))] can do to the term α_k·(ḡ_k − ḡ̄), whose ḡ are at
// most G in magnitude: (reach_k + α_k)·(G_k + max G). The cap keeps the floor finite where e^(2S)
// overflows (a row of `large` values stored in a half format: a bfloat16-stored GAT with dropout had
// every gradient bound of att_src, att_dst and weight +∞, and the adjoint a NaN bound).
void add_dropped_attention_moves(std::span<const double> logits, std::span<const double> G, double spread,
                                 std::span<double> delta) {
  if (!(spread > 0)) return;
  const RowSoftmax row(logits);
  if (!row.finite()) return;
  const std::vector<double>& alpha = row.alpha;
  double weighted = 0.0, largest = 0.0;
  for (size_t k = 0; k < logits.size(); ++k) {
    weighted += alpha[k] * G[k];
    largest = std::max(largest, G[k]);
  }
  const double moves = 3.0 * std::expm1(2.0 * spread);
  for (size_t k = 0; k < logits.size(); ++k) {
    const double first_order = moves * alpha[k] * (G[k] + weighted);  // NaN: ∞·0
    const double reach = row.reach(k, spread);
    const double any_move = (reach + alpha[k]) * (G[k] + largest);
    delta[k] += std::isfinite(first_order) ? std::min(first_order, any_move) : any_move;
  }
}

}  // namespace

Floors gat_attention_floors(const oracle::TargetDef& def, const Case& c, double u, double stored_u) {
  if (!c.inputs.count("x") || !c.parameters.count("weight") || !c.parameters.count("att_src") ||
      !c.parameters.count("att_dst") || !c.grad_outputs.count("y"))
    return {};
  // Cases may leave attributes at their defaults (unset); the layer reads them with defaults filled.
  const auto cfg = oracle::layers::GatConfig::from_attributes(oracle::with_defaults(def.spec, c.attributes));
  // The layer's own A + I (shared with the evaluations beside this one); the case's graph itself
  // when the layer adds no self-loops.
  const oracle::layers::AggregationGraph looped(*c.graph, cfg.self_loops);
  const Graph& g = *looped;
  const Tensor& x = c.inputs.at("x");
  const Tensor& W = c.parameters.at("weight");
  const Tensor& att_src = c.parameters.at("att_src");
  const Tensor& att_dst = c.parameters.at("att_dst");
  const Tensor& gy = c.grad_outputs.at("y");
  const index_t H = cfg.heads, C = cfg.out_features, HC = H * C, in = x.row_size();
  // The loops below run in parallel (OpenMP) over rows each thread owns, or into partial sums over
  // fixed row chunks (below), so the floor does not depend on the number of threads.
  // (The loops walk rows through pointers: at Reddit scale they make ~10^10 multiply-adds.)
  // h = x·W, and |x|·|W| where the storing term needs the logits' terms.
  Tensor h({g.n_src(), HC}), h_abs(stored_u > 0 ? std::vector<index_t>{g.n_src(), HC} : std::vector<index_t>{0});
#pragma omp parallel for schedule(static)
  for (index_t j = 0; j < g.n_src(); ++j) {
    double* hj = h.row(j);
    const double* xj = x.row(j);
    for (index_t k = 0; k < in; ++k) {
      const double* wk = W.row(k);
      for (index_t m = 0; m < HC; ++m) hj[m] += xj[k] * wk[m];
      if (stored_u > 0)
        for (index_t m = 0; m < HC; ++m) h_abs.row(j)[m] += std::abs(xj[k]) * std::abs(wk[m]);
    }
  }
  const double steepest = std::max(1.0, std::abs(cfg.negative_slope));
  auto grad_out = [&](const double* gyi, index_t head, index_t ch) {
    return cfg.concat ? gyi[head * C + ch] : gyi[ch] / static_cast<double>(H);
  };
  const double dropout = cfg.attn_dropout > 0 ? 1.0 / (1.0 - cfg.attn_dropout) : 1.0;
  Tensor delta({std::max<index_t>(g.num_edges(), 1), H});
#pragma omp parallel for schedule(dynamic, 256)
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t begin = g.row_ptr()[i], end = g.row_ptr()[i + 1];
    if (begin == end) continue;
    const double d = static_cast<double>(end - begin) + 4.0 + static_cast<double>(C);
    for (index_t head = 0; head < H; ++head) {
      std::vector<double> logit(static_cast<size_t>(end - begin)), G(logit.size()), gbar(logit.size()), row_delta(logit.size());
      const double* hi = h.row(i) + head * C;
      const double* as = att_src.row(head);
      const double* ad = att_dst.row(head);
      const double* gyi = gy.row(i);
      // Storing moves the row's shared destination part h_i·att_dst by up to `shared` and each
      // edge's source part by up to its own; the shared part cancels in the softmax unless the
      // LeakyReLU takes it with different slopes on two edges (or may: an edge within reach of 0).
      double shared = 0.0, own = 0.0;
      bool positive = false, negative = false;
      if (stored_u > 0)
        for (index_t ch = 0; ch < C; ++ch) shared += gamma(3, stored_u) * h_abs.row(i)[head * C + ch] * std::abs(ad[ch]);
      for (index_t e = begin; e < end; ++e) {
        const double* hj = h.row(g.col_idx()[e]) + head * C;
        double s = 0.0, mag = 0.0, source = 0.0, signed_g = 0.0;
        for (index_t ch = 0; ch < C; ++ch) {
          s += hj[ch] * as[ch] + hi[ch] * ad[ch];
          mag += std::abs(grad_out(gyi, head, ch)) * std::abs(hj[ch]);
          signed_g += grad_out(gyi, head, ch) * hj[ch];
          if (stored_u > 0) source += gamma(3, stored_u) * h_abs.row(g.col_idx()[e])[head * C + ch] * std::abs(as[ch]);
        }
        logit[e - begin] = s > 0 ? s : cfg.negative_slope * s;
        G[e - begin] = dropout * mag;
        gbar[e - begin] = signed_g;
        own = std::max(own, steepest * source);
        positive |= s + source + shared > 0;
        negative |= s - source - shared < 0;
      }
      const double spread = end - begin > 1 ? 2.0 * own + (positive && negative ? std::abs(1.0 - cfg.negative_slope) * shared : 0.0)
                                            : 0.0;
      // ḡ's own storing; then the movement of α, on magnitudes with attention dropout (which drops
      // edges from ḡ̄: |ḡ_k − ḡ̄| + Σ α·|ḡ − ḡ̄| ≤ 3·(G_k + Σ α·G)), on the row's ḡ without it.
      const double storing = stored_u > 0 ? gamma(3, stored_u) : 0.0;
      softmax_backward_rounding(logit, G, gamma(d, u) + storing, row_delta);
      if (cfg.attn_dropout > 0)
        add_dropped_attention_moves(logit, G, spread, row_delta);
      else
        add_softmax_backward_logit_moves(logit, gbar, spread, row_delta);
      for (index_t e = begin; e < end; ++e) delta.at(e, head) = row_delta[e - begin];
    }
  }
  Tensor floor_src(att_src.shape()), floor_dst(att_dst.shape()), floor_h({g.n_src(), HC});
  // Sums over all rows go through a fixed number of row chunks, added in chunk order: the floor is
  // the same whatever the number of threads.
  constexpr index_t chunks = 64;
  auto chunk_rows = [](index_t rows, index_t k) {
    return std::pair<index_t, index_t>{rows * k / chunks, rows * (k + 1) / chunks};
  };
  std::vector<Tensor> src_parts(chunks, Tensor(att_src.shape())), dst_parts(chunks, Tensor(att_dst.shape()));
  // Destination side: each chunk owns its rows i of floor_h.
#pragma omp parallel for schedule(dynamic, 1)
  for (index_t k = 0; k < chunks; ++k) {
    const auto [first, last] = chunk_rows(g.n_dst(), k);
    double* src = src_parts[k].data();
    double* dst = dst_parts[k].data();
    for (index_t i = first; i < last; ++i) {
      const double* hi = h.row(i);
      double* fi = floor_h.row(i);
      for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e) {
        const double* hj = h.row(g.col_idx()[e]);
        const double* de = delta.row(e);
        for (index_t m = 0; m < HC; ++m) {  // m = head·C + ch, as att's row-major [H, C] index
          const double dm = de[m / C];
          src[m] += std::abs(hj[m]) * dm;
          dst[m] += std::abs(hi[m]) * dm;
          fi[m] += std::abs(att_dst[m]) * dm;
        }
      }
    }
  }
  for (index_t k = 0; k < chunks; ++k)
    for (index_t q = 0; q < floor_src.size(); ++q) {
      floor_src[q] += src_parts[k][q];
      floor_dst[q] += dst_parts[k][q];
    }
  // Source side: each thread owns columns j, walked through the CSC (edge_perm: position -> edge id).
#pragma omp parallel for schedule(static)
  for (index_t j = 0; j < g.n_src(); ++j)
    for (index_t p = g.col_ptr()[j]; p < g.col_ptr()[j + 1]; ++p) {
      const double* de = delta.row(g.edge_perm()[p]);
      double* fj = floor_h.row(j);
      for (index_t m = 0; m < HC; ++m) fj[m] += std::abs(att_src[m]) * de[m / C];
    }
  Tensor floor_w(W.shape()), floor_x(x.shape());
  std::vector<Tensor> w_parts(chunks, Tensor(W.shape()));
#pragma omp parallel for schedule(dynamic, 1)
  for (index_t k = 0; k < chunks; ++k) {
    const auto [first, last] = chunk_rows(g.n_src(), k);
    for (index_t j = first; j < last; ++j) {
      const double* fj = floor_h.row(j);
      const double* xj = x.row(j);
      double* out = floor_x.row(j);
      for (index_t q = 0; q < in; ++q) {
        double* wq = w_parts[k].row(q);
        const double* Wq = W.row(q);
        const double ax = std::abs(xj[q]);
        for (index_t m = 0; m < HC; ++m) {
          wq[m] += ax * fj[m];
          out[q] += fj[m] * std::abs(Wq[m]);
        }
      }
    }
  }
  for (index_t k = 0; k < chunks; ++k)
    for (index_t q = 0; q < floor_w.size(); ++q) floor_w[q] += w_parts[k][q];
  Floors floors;
  floors.emplace_back("gradient att_src", std::move(floor_src));
  floors.emplace_back("gradient att_dst", std::move(floor_dst));
  floors.emplace_back("gradient weight", std::move(floor_w));
  floors.emplace_back("gradient x", std::move(floor_x));
  return floors;
}

Floors attention_logits_floor(const Case& c, double u) {
  const auto logits = c.inputs.find("logits"), x = c.inputs.find("x");
  const auto gy = c.grad_outputs.find("y");
  if (logits == c.inputs.end() || x == c.inputs.end() || gy == c.grad_outputs.end()) return {};
  const Graph& g = *c.graph;
  const Tensor& z = logits->second;
  const index_t H = std::max<index_t>(1, z.row_size()), C = x->second.row_size() / H;
  Tensor floor(z.shape());
  // Each row adds to its own edges only: rows run in parallel.
#pragma omp parallel for schedule(dynamic, 64) if (worth_parallel(g.num_edges() * H * C))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t begin = g.row_ptr()[i], end = g.row_ptr()[i + 1];
    const double d = static_cast<double>(end - begin) + 4.0 + static_cast<double>(C);
    const double* gyi = gy->second.row(i);
    for (index_t h = 0; h < H; ++h) {
      std::vector<double> logit(static_cast<size_t>(end - begin)), G(logit.size()), row_delta(logit.size());
      for (index_t e = begin; e < end; ++e) {
        const double* xj = x->second.row(g.col_idx()[e]);
        double sum = 0.0;
        for (index_t ch = 0; ch < C; ++ch) sum += std::abs(gyi[h * C + ch]) * std::abs(xj[h * C + ch]);
        G[static_cast<size_t>(e - begin)] = sum;
        logit[static_cast<size_t>(e - begin)] = z[e * H + h];
      }
      softmax_backward_rounding(logit, G, gamma(d, u), row_delta);
      for (index_t e = begin; e < end; ++e) floor[e * H + h] = row_delta[static_cast<size_t>(e - begin)];
    }
  }
  Floors floors;
  floors.emplace_back("gradient logits", std::move(floor));
  return floors;
}

void softmax_backward_rounding(std::span<const double> logits, std::span<const double> G, double gamma_d,
                               std::span<double> delta) {
  double top = -INFINITY;
  for (double l : logits) top = std::max(top, l);
  if (!std::isfinite(top)) {  // no finite logit: no softmax to round (the numerics check speaks)
    std::fill(delta.begin(), delta.end(), 0.0);
    return;
  }
  double norm = 0.0, weighted = 0.0;
  for (size_t k = 0; k < logits.size(); ++k) norm += (delta[k] = std::exp(logits[k] - top));
  for (size_t k = 0; k < logits.size(); ++k) weighted += delta[k] / norm * G[k];
  for (size_t k = 0; k < logits.size(); ++k) delta[k] = gamma_d * delta[k] / norm * (G[k] + weighted);
}

void add_softmax_backward_logit_moves(std::span<const double> logits, std::span<const double> gbar, double logit_spread,
                                  std::span<double> delta) {
  if (!(logit_spread > 0)) return;
  const RowSoftmax row(logits);
  if (!row.finite()) return;
  const std::vector<double>& alpha = row.alpha;
  double mean = 0.0, spread_terms = 0.0;
  for (size_t k = 0; k < logits.size(); ++k) mean += alpha[k] * gbar[k];
  for (size_t k = 0; k < logits.size(); ++k) spread_terms += alpha[k] * std::abs(gbar[k] - mean);
  const auto [lowest, highest] = std::minmax_element(gbar.begin(), gbar.end());
  const double range = *highest - *lowest;
  const double moves = std::expm1(2.0 * logit_spread);
  for (size_t k = 0; k < logits.size(); ++k) {
    const double first_order = moves * alpha[k] * (std::abs(gbar[k] - mean) + spread_terms);  // NaN: ∞·0
    const double reach = row.reach(k, logit_spread);
    const double any_move = reach * range + alpha[k] * std::abs(gbar[k] - mean);
    delta[k] += std::isfinite(first_order) ? std::min(first_order, any_move) : any_move;
  }
}

double unshared_logit_spread(double largest_logit_terms, index_t row_edges, double stored_u) {
  return row_edges > 1 ? 2.0 * gamma(3, stored_u) * largest_logit_terms : 0.0;
}

void add_floors(const Floors& floors, double safety, std::map<std::string, Tensor>& tensors) {
  for (const auto& entry : floors) {  // not a structured binding: the OpenMP region below may not capture one (clang < 16)
    const Tensor& floor = entry.second;
    auto it = tensors.find(entry.first);
    if (it == tensors.end() || it->second.shape() != floor.shape()) continue;
    Tensor& bound = it->second;
#pragma omp parallel for schedule(static) if (worth_parallel(floor.size()))
    for (index_t k = 0; k < floor.size(); ++k) bound[k] += safety * floor[k];
  }
}

}  // namespace gnncheck::checks
