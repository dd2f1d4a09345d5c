// The tolerance model; the derivation is in tolerance.h and checks/tolerance.md.
#include "checks/tolerance.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <map>
#include <deque>
#include <vector>

#include <omp.h>

#include <fmt/format.h>

#include "checks/agnn_floor.h"
#include "checks/gat_floor.h"
#include "checks/case_transforms.h"
#include "checks/tolerance_tasks.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/splitmix64.h"
#include "oracle/edge_softmax.h"
#include "oracle/layers/gat.h"
#include "oracle/layers/self_loops.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

using oracle::TensorKind;

namespace {

// The smallest normal number of the format: below it results flush to zero or lose relative precision.
double smallest_normal(Precision p) {
  switch (p) {
    case Precision::float64: return std::ldexp(1.0, -1022);
    case Precision::float32:
    case Precision::tf32:
    case Precision::bfloat16: return std::ldexp(1.0, -126);
    case Precision::float16: return std::ldexp(1.0, -14);
  }
  return 0.0;
}

double smallest_subnormal(Precision p) {
  switch (p) {
    case Precision::float64: return std::ldexp(1.0, -1074);
    case Precision::float32:
    case Precision::tf32: return std::ldexp(1.0, -149);
    case Precision::bfloat16: return std::ldexp(1.0, -133);
    case Precision::float16: return std::ldexp(1.0, -24);
  }
  return 0.0;
}

// The number of terms summed into each row of a node tensor: a destination's in-degree, a
// source's out-degree. Parameters sum over the whole graph (nodes and edges).
double node_row_terms(const Graph& g, TensorKind kind, index_t row) {
  switch (kind) {
    case TensorKind::dst_nodes: return static_cast<double>(g.in_degree(row));
    case TensorKind::src_nodes: return static_cast<double>(g.out_degree(row));
    case TensorKind::edges: return static_cast<double>(g.in_degree(g.row_of_edge()[row]));
    case TensorKind::edges_csc: return static_cast<double>(g.in_degree(g.row_of_edge()[g.edge_perm()[row]]));
    case TensorKind::parameter: return static_cast<double>(g.n_dst() + g.n_src() + g.num_edges());
  }
  return 0.0;
}

// The sum of a layer's dense widths (in, hidden, out·heads, features): the longest chain of dense
// sums one of its values goes through.
index_t layer_width_chain(const oracle::TargetDef& def, const Case& c) {
  const Attributes a = oracle::with_defaults(def.spec, c.attributes);
  index_t chain = 0;
  for (const char* width : {"in_features", "hidden_features", "out_features", "features"})
    if (a.has(width)) chain += a.get_int(width);
  if (a.has("heads") && a.has("out_features")) chain += a.get_int("heads") * a.get_int("out_features");
  return chain;
}

Result must_evaluate(const Case& c, Precision p, const char* what) {
  Result r = oracle::evaluate(c, p);
  if (!r.ok())
    throw InternalError(fmt::format("tolerance model: the oracle could not evaluate {} of target '{}' in {}: {}", what,
                                    c.target, to_string(p), r.message));
  return r;
}

const Tensor& must_find(const Result& r, const NamedTensor& nt, const char* what) {
  const Tensor* t = find_tensor(r, nt);
  if (!t) throw InternalError(fmt::format("tolerance model: {} lacks {}", what, nt.label));
  return *t;
}


// The closed form's two helper evaluations, started side by side (each is a whole float64
// evaluation of the case; neither needs the other).
struct ClosedFormEvaluations {
  std::shared_future<Result> abs_sums, term_counts;
};

ClosedFormEvaluations start_closed_form_evaluations(const oracle::TargetDef& def, const Case& c, Precision precision) {
  const bool async = worth_tasks(c);
  if (def.closed_form_terms) {
    // The target's own Σ|terms| and counts: one task, whose two results the evaluations share.
    auto terms = start_task(async, [&def, &c, precision] { return def.closed_form_terms(c, unit_roundoff(precision)); });
    return {start_task(false, [terms] { return terms.get().abs_sums; }),
            start_task(false, [terms] { return terms.get().term_counts; })};
  }
  return {start_task(async, [&c] { return must_evaluate(abs_case(c), Precision::float64, "|inputs|"); }),
          start_task(async, [&c] { return must_evaluate(ones_case(c), Precision::float64, "all-ones inputs"); })};
}

std::string u_text(Precision p) {
  switch (p) {
    case Precision::float64: return "2^-53";
    case Precision::float32: return "2^-24";
    case Precision::tf32: return "2^-11";
    case Precision::bfloat16: return "2^-8";
    case Precision::float16: return "2^-11";
  }
  return "?";
}

}  // namespace

Bounds ToleranceModel::bounds(const Case& c, const Result& exact, Precision precision) const {
  if (!c.graph) throw InternalError("tolerance model: case has no graph");
  const oracle::TargetDef& def = oracle::find_target(c.target);
  switch (def.spec.tolerance.kind) {
    case oracle::ToleranceKind::closed_form: return closed_form(def, c, exact, precision);
    case oracle::ToleranceKind::softmax_per_row: return softmax_per_row(def, c, exact, precision);
    case oracle::ToleranceKind::measured: break;
  }
  return measured(def, c, exact, precision);
}

namespace {

Bounds closed_form_from(const oracle::TargetDef& def, const Case& c, const ClosedFormEvaluations& evaluations,
                        const Result& exact, Precision precision, double safety_factor) {
  const auto& spec = def.spec;
  const oracle::ToleranceRule& rule = spec.tolerance;
  const Graph& g = *c.graph;
  const double u = unit_roundoff(precision);
  const double tiny = smallest_subnormal(precision);
  const Result& abs_sums = evaluations.abs_sums.get();
  const Result& term_counts = evaluations.term_counts.get();

  Bounds b;
  b.precision = precision;
  b.unit_roundoff = u;
  b.model = rule.extra_roundings == 0
                ? fmt::format("closed form {}·γ_k·Σ|terms| (k = terms per element plus the roundings of one: {}; u = {})",
                              safety_factor, rule.why, u_text(precision))
                : fmt::format("closed form {}·γ_(k+{})·Σ|a||b| (k = terms per element, r = {}: {}; u = {})",
                              safety_factor, rule.extra_roundings, rule.extra_roundings, rule.why, u_text(precision));
  for (const NamedTensor& nt : result_tensors(spec, exact)) {
    const Tensor& y = must_find(exact, nt, "the oracle's result");
    const Tensor& s = must_find(abs_sums, nt, "the |inputs| evaluation");
    const Tensor& ones = must_find(term_counts, nt, "the all-ones evaluation");
    Tensor bound(y.shape());
    const index_t width = std::max<index_t>(1, y.row_size());
#pragma omp parallel for schedule(static) if (worth_parallel(y.size()))
    for (index_t i = 0; i < y.size(); ++i) {
      const index_t row = i / width;
      double k = std::ceil(ones[i] - 1e-9);
      if (nt.kind == TensorKind::dst_nodes || nt.kind == TensorKind::src_nodes)
        k = std::max(k, node_row_terms(g, nt.kind, row));
      const double n = std::max(k, 1.0) + rule.extra_roundings;
      bound[i] = safety_factor * gamma(n, u) * s[i] + n * tiny;
    }
    b.tensors.emplace(nt.label, std::move(bound));
  }
  return b;
}

}  // namespace

Bounds ToleranceModel::closed_form(const oracle::TargetDef& def, const Case& c, const Result& exact,
                                   Precision precision) const {
  return closed_form_from(def, c, start_closed_form_evaluations(def, c, precision), exact, precision, options_.safety_factor);
}

// The measured model's helper cases and evaluations, each a shared future (see
// start_measured_evaluations).
struct ToleranceModel::MeasuredEvaluations {
  explicit MeasuredEvaluations(int concurrent) : slots(concurrent) {}
  std::counting_semaphore<> slots;  // first: destroyed after every future below
  std::shared_future<Relabeling> reversed, shuffled;
  std::shared_future<Case> nudged, absolute;
  std::shared_future<Result> in_order, reversed_order, shuffled_order, reversed_f64, nudged_f64, abs_sums;
  std::shared_future<Floors> gat_floor;  // valid for a target with the GAT attention floor
  void wait() const {
    if (gat_floor.valid()) gat_floor.wait();
    for (const auto* f : {&reversed, &shuffled})
      if (f->valid()) f->wait();
    for (const auto* f : {&nudged, &absolute})
      if (f->valid()) f->wait();
    for (const auto* f : {&in_order, &reversed_order, &shuffled_order, &reversed_f64, &nudged_f64, &abs_sums})
      if (f->valid()) f->wait();
  }
};

Bounds ToleranceModel::measured(const oracle::TargetDef& def, const Case& c, const Result& exact, Precision precision) const {
  return measured_from(def, c, start_measured_evaluations(def, c, precision), exact, precision);
}

std::shared_ptr<ToleranceModel::MeasuredEvaluations> ToleranceModel::start_measured_evaluations(
    const oracle::TargetDef& def, const Case& c, Precision precision) const {
  auto ev = std::make_shared<MeasuredEvaluations>(std::max(1, options_.concurrent_evaluations));
  // Each evaluation is a task: it waits for the case it needs (the transforms run as tasks too),
  // then for one of `concurrent_evaluations` slots. The slots bound the memory held at once (an
  // evaluation holds a few copies of the case's largest tensors); on large graphs the evaluations'
  // serial parts dominate, so running several side by side is what makes them fast. Each task runs
  // with the caller's OpenMP thread count (a new thread would start from the default). The tasks
  // refer to `c`, which the caller keeps alive until measured_from has collected every result.
  // Small cases (the property tests' thousands) are evaluated one after the other in the calling
  // thread when their results are collected: starting ten threads would cost more than the work.
  const bool async = worth_tasks(c);
  auto transform = [&c, async](auto make) { return start_task(async, [&c, make] { return make(c); }); };
  ev->reversed = transform([](const Case& k) { return reverse_edges_within_rows(k); });
  ev->shuffled = transform([](const Case& k) { return shuffle_edges_within_rows(k, 0x70e5a3cefULL); });
  // The target on |inputs|: for the linear parts of a composite (aggregations, matrix products) it is
  // Σ|terms| before cancellation; for the rest a magnitude of the same order.
  ev->absolute = transform([](const Case& k) { return abs_case(k); });
  const bool float64_system = precision == Precision::float64;
  // The float64 oracle on inputs moved by a relative 2^-52 (signs from a counter-based hash of the
  // seed, the tensor and the index): how much one rounding of every input moves the answer — the
  // conditioning a float64 implementation's own roundings meet (GAT with |logits| ~ 1e6 turns u into
  // a relative 1e-10 change of the attention; float32, saturated to one-hot there, cannot show it).
  if (float64_system) ev->nudged = transform([](const Case& k) {
    Case out = k;
    std::uint64_t stream = 0;
    for (TensorMap* m : {&out.inputs, &out.parameters})
      for (auto& [name, t] : *m) {
        const std::uint64_t key = mix64(k.seed ^ mix64(++stream));
#pragma omp parallel for schedule(static) if (worth_parallel(t.size()))
        for (index_t i = 0; i < t.size(); ++i)
          t[i] *= 1.0 + std::ldexp((mix64(key + static_cast<std::uint64_t>(i)) & 1) ? 1.0 : -1.0, -52);
      }
    return out;
  });
  // The tasks hold the slots by address, not `ev` (ev holds their futures: no cycle). ev's futures
  // are declared after its slots, so destroying ev waits for every task before the slots go.
  auto evaluate = [slots = &ev->slots, async](auto case_future, auto pick, Precision p, const char* what) {
    return start_task(async, [slots, case_future, pick, p, what] {
      const Case& k = pick(case_future.get());
      EvaluationSlot slot(*slots);
      return must_evaluate(k, p, what);
    });
  };
  const auto transformed = [](const Relabeling& r) -> const Case& { return r.transformed; };
  const auto itself = [](const Case& k) -> const Case& { return k; };
  std::promise<const Case*> original;
  original.set_value(&c);
  const auto pointee = [](const Case* k) -> const Case& { return *k; };
  ev->in_order = evaluate(original.get_future().share(), pointee, Precision::float32, "the case");
  ev->reversed_order = evaluate(ev->reversed, transformed, Precision::float32, "the row-reversed case");
  ev->shuffled_order = evaluate(ev->shuffled, transformed, Precision::float32, "the row-shuffled case");
  // For a float64 system: the float64 oracle in the other order, what summation order alone changes
  // in float64 (scaled-down float32 errors understate that where float32 flushes a cancelled result
  // to 0), and on the nudged inputs. A coarser system's own rounding (u ≥ 2^-24) dwarfs both: its
  // γ term alone is 2^28 times larger, so they are not evaluated.
  if (float64_system) {
    ev->reversed_f64 = evaluate(ev->reversed, transformed, Precision::float64, "the row-reversed case");
    ev->nudged_f64 = evaluate(ev->nudged, itself, Precision::float64, "the input-nudged case");
  }
  ev->abs_sums = evaluate(ev->absolute, itself, Precision::float64, "|inputs|");
  const auto& floors = def.spec.tolerance.floors;
  if (std::find(floors.begin(), floors.end(), oracle::ToleranceFloor::gat_attention) != floors.end()) {
    const double u = unit_roundoff(precision);
    ev->gat_floor = start_task(async, [&def, &c, slots = &ev->slots, u] {
      EvaluationSlot slot(*slots);
      return gat_attention_floors(def, c, u);
    });
  }
  return ev;
}

ReferenceAndBounds ToleranceModel::reference_and_bounds(const Case& c, Precision precision) const {
  if (!c.graph) throw InternalError("tolerance model: case has no graph");
  ReferenceAndBounds out;
  const oracle::TargetDef& def = oracle::find_target(c.target);
  const oracle::ToleranceRule& rule = def.spec.tolerance;
  if (rule.kind == oracle::ToleranceKind::closed_form) {
    // The two helper evaluations run beside the reference (they refer to c: their futures wait).
    const ClosedFormEvaluations evaluations = start_closed_form_evaluations(def, c, precision);
    out.reference = oracle::evaluate(c, Precision::float64);
    if (out.reference.ok()) out.bounds = closed_form_from(def, c, evaluations, out.reference, precision, options_.safety_factor);
    return out;
  }
  if (rule.kind != oracle::ToleranceKind::measured) {
    out.reference = oracle::evaluate(c, Precision::float64);
    if (out.reference.ok()) out.bounds = bounds(c, out.reference, precision);
    return out;
  }
  // The float64 reference runs beside the model's own evaluations, in a slot like them.
  const std::shared_ptr<MeasuredEvaluations> ev = start_measured_evaluations(def, c, precision);
  {
    EvaluationSlot slot(ev->slots);
    out.reference = oracle::evaluate(c, Precision::float64);
  }
  if (out.reference.ok()) {
    out.bounds = measured_from(def, c, ev, out.reference, precision);
  } else {
    ev->wait();  // the tasks refer to c: let them finish before returning
  }
  return out;
}

Bounds ToleranceModel::measured_from(const oracle::TargetDef& def, const Case& c, const std::shared_ptr<MeasuredEvaluations>& ev,
                                     const Result& exact, Precision precision) const {
  // Root-mean-square over every gradient (or every output) of the answer: the normwise scale a
  // tensor that cancels to ~0 as a whole (GAT's attention gradients on a one-node graph) is judged by.
  auto answer_rms = [&](bool gradients) {
    double sq = 0.0;
    index_t n = 0;
    for (const auto& [name, t] : gradients ? exact.gradients : exact.outputs)
      for (double v : t.values())
        if (std::isfinite(v)) sq += v * v, ++n;
    return n ? std::sqrt(sq / static_cast<double>(n)) : 0.0;
  };
  // Computed while the evaluations run: it reads the reference alone.
  const double outputs_rms = answer_rms(false), gradients_rms = answer_rms(true);
  ev->wait();  // every task ends before anything is thrown here (they refer to c)
  const auto& spec = def.spec;
  const Graph& g = *c.graph;
  const double u = unit_roundoff(precision);
  const double tiny = smallest_subnormal(precision);
  const double scale = u / unit_roundoff(Precision::float32);
  const Relabeling& reversed = ev->reversed.get();
  const Relabeling& shuffled = ev->shuffled.get();
  const Result& in_order = ev->in_order.get();
  const Result& reversed_order = ev->reversed_order.get();
  const Result& shuffled_order = ev->shuffled_order.get();
  const bool float64_system = precision == Precision::float64;
  const Result no_result;
  const Result& reversed_f64 = float64_system ? ev->reversed_f64.get() : no_result;
  const Result& nudged_f64 = float64_system ? ev->nudged_f64.get() : no_result;
  const Result& abs_sums = ev->abs_sums.get();
  index_t widest = 0;
  for (const TensorMap* m : {&c.inputs, &c.parameters})  // by pointer: a copy of the inputs would be the case's largest tensors
    for (const auto& [name, t] : *m) widest = std::max({widest, t.row_size(), t.rank() == 2 ? t.rows() : index_t{0}});
  // A layer chains its dense products (GIN: x·W1 then ·W2; GAT: x·W then the head dot): an element
  // goes through the sum of their lengths, not only the widest — the classical bound for the chain
  // is γ of the total count. An implementation blocking those sums differently from the oracle (cuBLAS
  // vs Eigen) meets this floor where a cancelling reduction makes the measured error a lucky sample.
  if (spec.is_layer) widest = std::max(widest, layer_width_chain(def, c));

  Bounds b;
  b.precision = precision;
  b.unit_roundoff = u;
  b.model = fmt::format(
      "measured {}·{} + {}·γ_(d+w+4)·(|y| + rms y + |f(|inputs|)| + rms answer) (e = float32 oracle error, CSR, "
      "row-reversed and row-shuffled orders; {}w = widest row, for a layer at least the sum of its dense widths; u = {})",
      options_.measured_multiple, float64_system ? "max(max(e_i, rms e)·(u/u_f32), d64_i)" : "max(e_i, rms e)·(u/u_f32)",
      options_.safety_factor, float64_system ? "d64 = float64 row-reversed or inputs nudged by 2^-52 vs CSR; " : "",
      u_text(precision));
  for (const NamedTensor& nt : result_tensors(spec, exact)) {
    const Tensor& y = must_find(exact, nt, "the oracle's result");
    const Tensor& y1 = must_find(in_order, nt, "the float32 evaluation");
    const Tensor& abs_sum = must_find(abs_sums, nt, "the |inputs| evaluation");

    // A tensor of a reordered case in the original order: the tensor itself where its rows did not
    // move (node tensors when only edges moved within rows), else a reordered copy.
    std::deque<Tensor> reordered;
    auto original_order = [&](const Result& r, const Relabeling& moved, const char* what) -> const Tensor& {
      const Tensor& t = must_find(r, nt, what);
      if (!moves_rows(nt.kind, moved)) return t;
      return reordered.emplace_back(to_original_order(t, nt.kind, moved));
    };
    const Tensor& y2 = original_order(reversed_order, reversed, "the row-reversed float32 evaluation");
    // d64: a float64 system only (see start_measured_evaluations).
    const Tensor* y64 = float64_system ? &original_order(reversed_f64, reversed, "the row-reversed float64 evaluation") : nullptr;
    const Tensor* y_nudged = float64_system ? &must_find(nudged_f64, nt, "the input-nudged evaluation") : nullptr;
    const Tensor& y3 = original_order(shuffled_order, shuffled, "the row-shuffled float32 evaluation");
    // Element-wise work runs in parallel; the sums over the tensor go through a fixed number of
    // chunks added in chunk order, so the bound is the same for any thread count.
    const index_t n = y.size();
    // e_i, the largest error of the three orders, computed where it is needed (twice) rather than
    // stored: a gradient of a large case's features is 10^8 elements.
    auto order_error = [&](index_t i) {
      double err = 0.0;
      bool any = false;
      for (double v : {y1[i], y2[i], y3[i]}) {
        if (!std::isfinite(v) || !std::isfinite(y[i])) continue;
        err = std::max(err, std::abs(v - y[i]));
        any = true;
      }
      // Where float32 itself over- or underflowed to a non-finite value, no float32 bound exists.
      return std::pair<double, bool>{any ? err : INFINITY, any};
    };
    constexpr index_t chunks = 64;
    std::vector<double> err_sq(chunks, 0.0), y_sq(chunks, 0.0);
    std::vector<index_t> finite_count(chunks, 0);
#pragma omp parallel for schedule(dynamic, 1) if (worth_parallel(n))
    for (index_t k = 0; k < chunks; ++k)
      for (index_t i = n * k / chunks; i < n * (k + 1) / chunks; ++i) {
        const auto [err, any] = order_error(i);
        if (any) {
          err_sq[k] += err * err;
          ++finite_count[k];
        }
        y_sq[k] += std::isfinite(y[i]) ? y[i] * y[i] : 0.0;
      }
    double sum_sq = 0.0, y_sum_sq = 0.0;
    index_t finite = 0;
    for (index_t k = 0; k < chunks; ++k) {
      sum_sq += err_sq[k];
      y_sum_sq += y_sq[k];
      finite += finite_count[k];
    }
    const double rms = finite ? std::sqrt(sum_sq / static_cast<double>(finite)) : 0.0;
    const double y_rms = n ? std::sqrt(y_sum_sq / static_cast<double>(n)) : 0.0;
    Tensor bound(y.shape());
    const index_t width = std::max<index_t>(1, y.row_size());
#pragma omp parallel for schedule(static) if (worth_parallel(n))
    for (index_t i = 0; i < n; ++i) {
      const double d = node_row_terms(g, nt.kind, i / width) + static_cast<double>(widest) + 4.0;
      double order_f64 = 0.0;
      if (float64_system && std::isfinite(y[i])) {
        if (std::isfinite((*y64)[i])) order_f64 = std::abs((*y64)[i] - y[i]);
        if (std::isfinite((*y_nudged)[i])) order_f64 = std::max(order_f64, std::abs((*y_nudged)[i] - y[i]));
      }
      const double magnitude = std::abs(y[i]) + y_rms + (std::isfinite(abs_sum[i]) ? std::abs(abs_sum[i]) : 0.0) +
                               (nt.is_gradient ? gradients_rms : outputs_rms);
      bound[i] = options_.measured_multiple * std::max(std::max(order_error(i).first, rms) * scale, order_f64) +
                 options_.safety_factor * gamma(d, u) * magnitude + d * tiny;
    }
    b.tensors.emplace(nt.label, std::move(bound));
  }
  for (oracle::ToleranceFloor floor : spec.tolerance.floors) {
    if (floor == oracle::ToleranceFloor::gat_attention) add_floors(ev->gat_floor.get(), options_.safety_factor, b.tensors);
    if (floor == oracle::ToleranceFloor::agnn_attention) add_agnn_attention_floor(c, u, options_.safety_factor, b.tensors);
    if (floor == oracle::ToleranceFloor::attention_logits)
      add_floors(attention_logits_floor(c, u), options_.safety_factor, b.tensors);
  }
  return b;
}

Bounds ToleranceModel::softmax_per_row(const oracle::TargetDef& def, const Case& c, const Result& exact,
                                       Precision precision) const {
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
  const auto& spec = def.spec;
  const Graph& g = *c.graph;
  const double u = unit_roundoff(precision);
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
      const double log_error = rounding + (may_underflow + 1.0) * lambda * mu + summing;
      // γ_(k−1) ≤ 2(k−1)·u: the rounding of each group's ḡ.
      const double beta = std::expm1(2.0 * log_error + (d + 8.0 + 2.0 * (group - 1.0)) * u);
      if (!(rho <= 0.5) || !std::isfinite(beta)) {
        uncovered[static_cast<size_t>(i)] = 1;
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
  b.unit_roundoff = u;
  b.model = fmt::format(
      "softmax per row: α·e^−Λ − φ ≤ α̂ ≤ α·e^Λ + φ, Λ = N·u/(1 − ρ), N = 6d+30L+9·ln d+12, ρ = (6+4.8L+2.4·ln d)·u "
      "(d = row length, L = largest |logit| of the row), φ from the smallest normal {:g} (and e^−m where a term may "
      "underflow); logits gradient ≤ "
      "α_k·(|ᾱ_k| + Σ_row α|ᾱ|)·β + φ·(…), β = e^(2Λ+(d+8)u) − 1 (u = {}){}",
      lambda, u_text(precision),
      fallback_rows ? fmt::format("; {} of {} rows on the measured model (ρ > 1/2)", fallback_rows, g.n_dst()) : "");
  if (fallback_rows) {
    Bounds m = measured(def, c, exact, precision);
    const std::string grad_label = "gradient " + logits_name;
    if (grad_logits_exact && m.tensors.count(grad_label)) add_softmax_backward_floor(c, exact, u, m.tensors.at(grad_label));
    for (index_t i = 0; i < g.n_dst(); ++i) {
      if (!uncovered[static_cast<size_t>(i)]) continue;
      for (index_t q = row_ptr[i] * heads; q < row_ptr[i + 1] * heads; ++q) {
        bound_alpha[q] = m.tensors.at("output " + alpha_name)[q];
        lowest_alpha[q] = NAN;
        if (grad_logits_exact) bound_grad[q] = m.tensors.at(grad_label)[q];
      }
    }
  }
  b.tensors.emplace("output " + alpha_name, std::move(bound_alpha));
  b.lowest.emplace("output " + alpha_name, std::move(lowest_alpha));
  if (grad_logits_exact) b.tensors.emplace("gradient " + logits_name, std::move(bound_grad));
  return b;
}

}  // namespace gnncheck::checks
