// The softmax's own bounds, members of the tolerance model kept apart from its general rules: the
// per-row rule and edge_softmax's backward floor (checks/softmax.md; GAT's use of the floor:
// checks/tolerance.md, "Measured").
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "checks/tolerance.h"
#include "checks/range_rule.h"
#include "checks/tolerance_formats.h"
#include "core/error.h"
#include "core/parallel.h"
#include "oracle/edge_softmax.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

using oracle::TensorKind;

void ToleranceModel::add_softmax_backward_floor(const Case& c, const Result& exact, const Formats& formats,
                                                Tensor& bound) const {
  // grad_s[k] = α_k·(ḡ_k − Σ_{k' in row} α_k'·ḡ_k'): a short sum whose terms are α_k·ḡ_k and
  // α_k·α_k'·ḡ_k'. When α is one-hot the difference cancels to ~0 and neither |y| nor float32's error
  // (flushed to 0) reflects the rounding of those terms: γ_(d+4)·α_k·(|ḡ_k| + Σ α|ḡ|) does. With a
  // wider accumulation format: ḡ and the logits stored and the result stored (3 roundings in u_s),
  // the rest in u_a.
  auto alpha_it = exact.outputs.find("alpha");
  auto grad_it = c.grad_outputs.find("alpha");
  if (alpha_it == exact.outputs.end() || grad_it == c.grad_outputs.end()) return;
  const Tensor& alpha = alpha_it->second;
  const Tensor& gy = grad_it->second;
  const Graph& g = *c.graph;
  const index_t heads = std::max<index_t>(1, alpha.row_size());
  // Each row adds to its own edges only: rows run in parallel.
#pragma omp parallel for schedule(dynamic, 64) if (worth_parallel(g.num_edges() * heads))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const double d = static_cast<double>(g.in_degree(i)) + 4.0;
    const double factor = formats.mixed() ? mixed_gamma(3.0, d, formats) : gamma(d, unit_roundoff(formats.storage));
    for (index_t h = 0; h < heads; ++h) {
      double weighted = 0.0;
      for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e)
        weighted += std::abs(alpha[e * heads + h] * gy[e * heads + h]);
      for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e) {
        const index_t k = e * heads + h;
        bound[k] += options_.safety_factor * factor * std::abs(alpha[k]) * (std::abs(gy[k]) + weighted);
      }
    }
  }
}

Bounds ToleranceModel::softmax_per_row(const oracle::TargetDef& def, const Case& c, const Result& exact,
                                       const Formats& formats) const {
  // Derivation and the regime it covers: checks/softmax.md. Per destination row i
  // and head: d = the row's length, L = its largest |logit|, m = its largest logit. Every computed
  // α̂_k = α_k·e^θ with |θ| ≤ Λ, so it lies in [α_k·e^−Λ − φ_k, α_k·e^Λ + φ_k], with
  //   Λ = N·u/(1 − ρ) + (d_u + 1)·λ·μ,   N = 6d + 30L + 9·ln d + 12,   ρ = (6 + 4.8L + 2.4·ln d)·u,
  //   φ_k = λ·(1 + 2μ) where s_k may underflow, λ elsewhere,
  // ρ the largest relative error of any one rounding (an exp's), λ the format's smallest normal,
  // μ = max(1, e^−m) (the shifted sum's lower bound when the implementation subtracts nothing),
  // d_u the row's terms that may underflow (s_k < log λ + max(0, m) + N·u/(1 − ρ)). The logits
  // gradient α_k·(ᾱ_k − Σ_row α·ᾱ) lies within
  //   α_k·(|ᾱ_k| + P)·β + φ·(|ᾱ_k| + 2Q)·(1 + β) + (d+3)·λ,   β = e^(2Λ + (d+8)·u) − 1,
  // φ = max_k φ_k, P = Σ_row α|ᾱ|, Q = Σ_row |ᾱ|. Where ρ > 1/2 (or β is past double's range) the analysis gives
  // no bound; those rows keep the measured model (with the softmax backward floor), symmetric.
  //
  // Storage and accumulation (softmax.md, "Storage and accumulation"): the computation's roundings
  // in u = u_a; storing the logits moves each by ≤ |s|·u_s, so every θ by ≤ 2L·u_s more, and storing
  // α by a relative γ_1(u_s): both added to Λ; storing ᾱ and the gradient adds 2·γ_1(u_s) to β's
  // exponent. λ is the storage format's smallest normal (the larger of the two).
  const auto& spec = def.spec;
  const Graph& g = *c.graph;
  const Precision precision = formats.storage;
  const bool mixed = formats.mixed();
  const double u = unit_roundoff(formats.accumulation);
  const double u_storage = unit_roundoff(precision);
  const double lambda = smallest_normal(precision);
  const std::string& logits_name = spec.inputs.at(0).name;
  const std::string& alpha_name = spec.outputs.at(0).name;
  const Tensor& logits = c.inputs.at(logits_name);
  const Tensor& alpha = must_find(exact, {"output " + alpha_name, alpha_name, false, TensorKind::edges}, "the oracle's result");
  auto grad_it = c.grad_outputs.find(alpha_name);
  const Tensor* grad_alpha = grad_it == c.grad_outputs.end() ? nullptr : &grad_it->second;
  const Tensor* grad_logits_exact = find_tensor(exact, {"gradient " + logits_name, logits_name, true, TensorKind::edges});
  const index_t heads = std::max<index_t>(1, alpha.row_size());
  Tensor bound_alpha(alpha.shape());
  Tensor lowest_alpha(alpha.shape());  // the lower endpoints α·e^−Λ − φ (NaN on the measured model's rows)
  Tensor bound_grad = grad_logits_exact ? Tensor(grad_logits_exact->shape()) : Tensor();
  std::vector<char> uncovered(static_cast<size_t>(g.n_dst()), 0);  // rows the analysis bounds nothing on
  double widest_uncovered = 0.0;  // the largest |logit| L of those rows
  const auto row_ptr = g.row_ptr();
  // Coalesced duplicates (edge_softmax's duplicate_edges): the softmax's entries are the groups of
  // duplicates, each with the sum of its logits (kept at its first edge) and Σ|ᾱ| of its edges; the
  // analysis below runs over entries, d their number, and adds the sums' rounding: a group of k
  // logits is off by at most γ_(k−1)·Σ|s| in the exponent (twice: numerator and normalizer), its
  // ḡ by γ_(k−1)·Σ|ᾱ| (absorbed in β). Separate duplicates: every edge is its own entry.
  const bool coalesced = c.attributes.has("duplicate_edges") &&
                         oracle::parse_duplicate_edges(c.attributes.get_string("duplicate_edges")) ==
                             oracle::DuplicateEdges::coalesced;
  std::vector<index_t> leader;
  Tensor entry_logit, entry_abs_logits, entry_grad;  // per head, at each group's first edge
  if (coalesced) {
    leader = oracle::duplicate_leaders(g);
    entry_logit = Tensor(logits.shape());
    entry_abs_logits = Tensor(logits.shape());
    if (grad_alpha) entry_grad = Tensor(logits.shape());
    for (index_t k = 0; k < g.num_edges(); ++k)
      for (index_t h = 0; h < heads; ++h) {
        const index_t u = leader[static_cast<size_t>(k)] * heads + h;
        entry_logit[u] += logits[k * heads + h];
        entry_abs_logits[u] += std::abs(logits[k * heads + h]);
        if (grad_alpha) entry_grad[u] += std::abs((*grad_alpha)[k * heads + h]);
      }
  }
  const auto is_entry = [&](index_t k) { return !coalesced || leader[static_cast<size_t>(k)] == k; };
  const auto entry_of = [&](index_t k) { return coalesced ? leader[static_cast<size_t>(k)] : k; };
  const auto logit_of_entry = [&](index_t k, index_t h) {
    return coalesced ? entry_logit[k * heads + h] : logits[k * heads + h];
  };
  const auto grad_of_entry = [&](index_t k, index_t h) {
    return coalesced ? entry_grad[k * heads + h] : std::abs((*grad_alpha)[k * heads + h]);
  };
#pragma omp parallel for schedule(dynamic, 256) if (worth_parallel(g.num_edges() * heads))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t begin = row_ptr[i], end = row_ptr[i + 1];
    if (begin == end) continue;
    double entries = 0.0, group = 1.0;  // d, and the largest group of duplicates
    if (coalesced) {
      std::map<index_t, double> sizes;
      for (index_t k = begin; k < end; ++k) group = std::max(group, sizes[leader[static_cast<size_t>(k)]] += 1.0);
      entries = static_cast<double>(sizes.size());
    } else {
      entries = static_cast<double>(end - begin);
    }
    const double d = entries;
    for (index_t h = 0; h < heads; ++h) {
      double largest = 0.0, top = -INFINITY, summed_abs = 0.0;
      for (index_t k = begin; k < end; ++k) {
        if (!is_entry(k)) continue;
        largest = std::max(largest, std::abs(logit_of_entry(k, h)));
        top = std::max(top, logit_of_entry(k, h));
        if (coalesced) summed_abs = std::max(summed_abs, entry_abs_logits[k * heads + h]);
      }
      // The computed sums are within half of `summing` of the exact ones: L and m as the computed may be.
      const double summing = coalesced ? 2.0 * gamma(group - 1.0, u) * summed_abs : 0.0;
      if (coalesced) {
        largest += summing / 2.0;
        top += summing / 2.0;
      }
      const double n = 6.0 * d + 30.0 * largest + 9.0 * std::log(d) + 12.0;
      const double rho = (6.0 + 4.8 * largest + 2.4 * std::log(d)) * u;
      const double mu = top > std::log(lambda) ? std::max(1.0, std::exp(-top)) : 1.0;
      const double rounding = n * u / (1.0 - rho);
      // A term exp(s − c), its shift c ≤ max(0, m), and its rescalings stay normal when s is at least
      // log λ + max(0, m) plus their rounding errors (≤ N·u/(1 − ρ)): only the other terms underflow.
      const double normal_from = std::log(lambda) + std::max(0.0, top) + rounding + summing;
      double may_underflow = 0.0;
      for (index_t k = begin; k < end; ++k)
        if (is_entry(k)) may_underflow += logit_of_entry(k, h) < normal_from ? 1.0 : 0.0;
      const double storing = mixed ? 2.0 * largest * u_storage + gamma(1.0, u_storage) : 0.0;
      const double log_error = rounding + (may_underflow + 1.0) * lambda * mu + summing + storing;
      // γ_(k−1) ≤ 2(k−1)·u: the rounding of each group's ḡ.
      const double beta = std::expm1(2.0 * log_error + (d + 8.0 + 2.0 * (group - 1.0)) * u +
                                     (mixed ? 2.0 * gamma(1.0, u_storage) : 0.0));
      if (!(rho <= 0.5) || !std::isfinite(beta)) {
        uncovered[static_cast<size_t>(i)] = 1;
#pragma omp critical(softmax_uncovered)
        widest_uncovered = std::max(widest_uncovered, largest);
        continue;
      }
      const double eps = std::expm1(log_error);
      const double shrink = std::exp(-log_error);
      const double phi_underflowing = lambda * (1.0 + 2.0 * mu);
      const double phi = may_underflow > 0.0 ? phi_underflowing : lambda;  // the row's largest floor
      for (index_t k = begin; k < end; ++k) {
        const double phi_k = logit_of_entry(entry_of(k), h) < normal_from ? phi_underflowing : lambda;
        bound_alpha[k * heads + h] = alpha[k * heads + h] * eps + phi_k;
        lowest_alpha[k * heads + h] = alpha[k * heads + h] * shrink - phi_k;
      }
      if (!grad_alpha || !grad_logits_exact) continue;
      double weighted = 0.0, total = 0.0;  // P = Σ α|ᾱ|, Q = Σ |ᾱ| over the entries
      for (index_t k = begin; k < end; ++k) {
        if (!is_entry(k)) continue;
        weighted += alpha[k * heads + h] * grad_of_entry(k, h);
        total += grad_of_entry(k, h);
      }
      for (index_t k = begin; k < end; ++k) {
        const double ga = grad_of_entry(entry_of(k), h);
        bound_grad[k * heads + h] =
            alpha[k * heads + h] * (ga + weighted) * beta + phi * (ga + 2.0 * total) * (1.0 + beta) + (d + 3.0) * lambda;
      }
    }
  }
  const index_t fallback_rows = std::count(uncovered.begin(), uncovered.end(), char{1});
  Bounds b;
  b.precision = precision;
  b.accumulation = formats.accumulation;
  b.unit_roundoff = u_storage;
  b.model = fmt::format(
      "softmax per row: α·e^−Λ − φ ≤ α̂ ≤ α·e^Λ + φ, Λ = N·u/(1 − ρ), N = 6d+30L+9·ln d+12, ρ = (6+4.8L+2.4·ln d)·u "
      "(d = row length, L = largest |logit| of the row), φ from the smallest normal {:g} (and e^−m where a term may "
      "underflow); logits gradient ≤ "
      "α_k·(|ᾱ_k| + Σ_row α|ᾱ|)·β + φ·(…), β = e^(2Λ+(d+8)u) − 1 (u = {}){}",
      lambda,
      mixed ? fmt::format("{}; stored in {}: Λ + 2L·u_s + γ_1(u_s), β's exponent + 2·γ_1(u_s)",
                          u_text(formats.accumulation), to_string(precision))
            : u_text(precision),
      fallback_rows ? fmt::format("; {} of {} rows on the measured model (ρ > 1/2)", fallback_rows, g.n_dst()) : "");
  // The measured model scales float32's observed error linearly in u. That holds while every exp's
  // relative error stays first order, as in float32 (ρ > 1/2 needs L > 1.7·10⁶ there); in a coarser
  // format a row past the analysis (bfloat16: L ≳ 26) is where exp's rounding is no longer small —
  // e^(L·u) is far from 1 + L·u — and no bound is known: the case says so and stays inconclusive,
  // never compared under a bound too tight for it (checks/softmax.md, "Past the analysis").
  if (fallback_rows && u > unit_roundoff(Precision::float32))
    b.no_bound = fmt::format(
        "no bound in {}: on {} of {} rows the logits reach |s| = {:.4g}, past the softmax analysis (ρ = (6 + 4.8·L + "
        "2.4·ln d)·u > 1/2), where exp's rounding is not first order and the measured model, linear in u, does not hold",
        to_string(formats.accumulation), fallback_rows, g.n_dst(), widest_uncovered);
  if (fallback_rows) {
    Bounds m = measured(def, c, exact, formats);
    const std::string grad_label = "gradient " + logits_name;
    if (grad_logits_exact && m.tensors.count(grad_label))
      add_softmax_backward_floor(c, exact, formats, m.tensors.at(grad_label));
    for (index_t i = 0; i < g.n_dst(); ++i) {
      if (!uncovered[static_cast<size_t>(i)]) continue;
      for (index_t q = row_ptr[i] * heads; q < row_ptr[i + 1] * heads; ++q) {
        bound_alpha[q] = m.tensors.at("output " + alpha_name)[q];
        lowest_alpha[q] = NAN;
        if (grad_logits_exact) bound_grad[q] = m.tensors.at(grad_label)[q];
      }
    }
  }
  note_inputs_range(b, c, options_.safety_factor);
  b.tensors.emplace("output " + alpha_name, std::move(bound_alpha));
  b.lowest.emplace("output " + alpha_name, std::move(lowest_alpha));
  if (grad_logits_exact) b.tensors.emplace("gradient " + logits_name, std::move(bound_grad));
  return b;
}

}  // namespace gnncheck::checks
