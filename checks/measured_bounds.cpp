// The measured rule of the tolerance model (checks/tolerance.md, "Measured"): the case evaluated in
// float32 in three orders, on |inputs| and on nudged inputs, each a task of the model's pool
// (checks/tolerance_tasks.h), and the bound built from what they show; the floors each in its own file.
#include <algorithm>
#include <cmath>
#include <deque>
#include <future>
#include <map>
#include <optional>
#include <vector>

#include <omp.h>

#include <fmt/format.h>

#include "checks/agnn_floor.h"
#include "checks/gat_floor.h"
#include "checks/range_rule.h"
#include "checks/segment_softmax_floor.h"
#include "checks/softmax_past_analysis.h"
#include "checks/stored_values.h"
#include "checks/case_transforms.h"
#include "checks/measured_evaluations.h"
#include "checks/tolerance_formats.h"
#include "checks/tolerance_tasks.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/splitmix64.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

using oracle::TensorKind;

namespace {

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

// The larger of f(|inputs|) and an entry's declared term magnitudes, element by element; nullopt
// where the entry declares none for this tensor (f(|inputs|) then stands as it is).
std::optional<Tensor> larger_terms(const Tensor& of_inputs, const Tensor* declared) {
  if (!declared || declared->shape() != of_inputs.shape()) return std::nullopt;
  Tensor out = of_inputs;
  for (index_t i = 0; i < out.size(); ++i)
    if (std::isfinite(out[i])) out[i] = std::max(std::abs(out[i]), (*declared)[i]);
  return out;
}

}  // namespace

Bounds ToleranceModel::measured(const oracle::TargetDef& def, const Case& c, const Result& exact,
                               const Formats& formats) const {
  return measured_from(def, c, start_measured_evaluations(def, c, formats), exact, formats);
}

std::shared_ptr<ToleranceModel::MeasuredEvaluations> ToleranceModel::start_measured_evaluations(
    const oracle::TargetDef& def, const Case& c, const Formats& formats) const {
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
  // The shuffled order also permutes the axes only projections contract (TargetDef::contracted_axes):
  // a second order of the dense sums.
  ev->shuffled = transform([&def](const Case& k) {
    Relabeling r = shuffle_edges_within_rows(k, 0x70e5a3cefULL);
    permute_contracted_axes(r, def.contracted_axes, 0x5eed0fa7e5ULL);
    return r;
  });
  // The target on |inputs|: for the linear parts of a composite (aggregations, matrix products) it is
  // Σ|terms| before cancellation; for the rest a magnitude of the same order.
  ev->absolute = transform([](const Case& k) { return abs_case(k); });
  const bool float64_system = formats.storage == Precision::float64;
  // The float64 oracle on inputs moved by a relative 2^-52 (signs from a counter-based hash of the
  // seed, the tensor and the index): how much one rounding of every input moves the answer — the
  // conditioning a float64 implementation's own roundings meet (GAT with |logits| ~ 1e6 turns u into
  // a relative 1e-10 change of the attention; float32, saturated to one-hot there, cannot show it).
  // With a wider accumulation format the inputs are moved by the storage format's u instead: what
  // storing them moves the answer by, while the computation's own error scales with u_a. A value the
  // storage format holds exactly is stored as itself, so it is not moved.
  const int nudge_exponent = formats.mixed() ? -static_cast<int>(std::lround(-std::log2(unit_roundoff(formats.storage)))) : -52;
  // The output gradients are stored too (the backward's inputs), so storing moves them as well.
  const bool mixed = formats.mixed();
  const Precision storage = formats.storage;
  ev->stored = stored_values(c, formats);
  if (float64_system || mixed) ev->nudged = transform([nudge_exponent, mixed, storage](const Case& k) {
    Case out = k;
    std::uint64_t stream = 0;
    for (TensorMap* m : {&out.inputs, &out.parameters, &out.grad_outputs})
      for (auto& entry : *m) {  // not a structured binding: an OpenMP region may not capture one (clang < 16)
        Tensor& t = entry.second;
        if (m == &out.grad_outputs && !mixed) break;
        const std::uint64_t key = mix64(k.seed ^ mix64(++stream));
        if (m != &out.grad_outputs && is_index_tensor(k, entry.first)) continue;  // a choice, not a value
#pragma omp parallel for schedule(static) if (worth_parallel(t.size()))
        for (index_t i = 0; i < t.size(); ++i)
          if (!mixed || !value_held_exactly(t[i], storage))
            t[i] *= 1.0 + std::ldexp((mix64(key + static_cast<std::uint64_t>(i)) & 1) ? 1.0 : -1.0, nudge_exponent);
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
  } else if (formats.mixed()) {
    ev->nudged_f64 = evaluate(ev->nudged, itself, Precision::float64, "the input-nudged case");
  }
  ev->abs_sums = evaluate(ev->absolute, itself, Precision::float64, "|inputs|");
  const auto& floors = def.spec.tolerance.floors;
  if (std::find(floors.begin(), floors.end(), oracle::ToleranceFloor::gat_attention) != floors.end()) {
    const double u = ev->stored.floor_u(), stored_u = ev->stored.stored_u;
    ev->gat_floor = start_task(async, [&def, &c, slots = &ev->slots, u, stored_u] {
      EvaluationSlot slot(*slots);
      return gat_attention_floors(def, c, u, stored_u);
    });
  }
  return ev;
}

Bounds ToleranceModel::measured_from(const oracle::TargetDef& def, const Case& c, const std::shared_ptr<MeasuredEvaluations>& ev,
                                     const Result& exact, const Formats& formats) const {
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
  const Precision precision = formats.storage;
  const bool mixed = formats.mixed();
  const double u = unit_roundoff(precision);
  // The computation's own error scales with the accumulation format's u (tolerance.md, "Storage and
  // accumulation"); storing the inputs and the result adds u_s's share below.
  const double u_compute = unit_roundoff(formats.accumulation);
  const double tiny = smallest_subnormal(precision);
  const double scale = u_compute / unit_roundoff(Precision::float32);
  const Relabeling& reversed = ev->reversed.get();
  const Relabeling& shuffled = ev->shuffled.get();
  const Result& in_order = ev->in_order.get();
  const Result& reversed_order = ev->reversed_order.get();
  const Result& shuffled_order = ev->shuffled_order.get();
  const bool float64_system = precision == Precision::float64;
  const Result no_result;
  const Result& reversed_f64 = float64_system ? ev->reversed_f64.get() : no_result;
  const Result& nudged_f64 = float64_system || mixed ? ev->nudged_f64.get() : no_result;
  const Result& abs_sums = ev->abs_sums.get();
  index_t widest = 0;
  for (const TensorMap* m : {&c.inputs, &c.parameters})  // by pointer: a copy of the inputs would be the case's largest tensors
    for (const auto& [name, t] : *m) widest = std::max({widest, t.row_size(), t.rank() == 2 ? t.rows() : index_t{0}});
  // A layer chains its dense products (GIN: x·W1 then ·W2; GAT: x·W then the head dot): an element
  // goes through the sum of their lengths, not only the widest — the classical bound for the chain
  // is γ of the total count. An implementation blocking those sums differently from the oracle (cuBLAS
  // vs Eigen) meets this floor where a cancelling reduction makes the measured error a lucky sample.
  if (spec.is_layer) widest = std::max(widest, layer_width_chain(def, c));
  // With a wider accumulation format: the stored tensors of the case (inputs, parameters, output
  // gradients), at most one rounding of each in a term of the linear parts, whose first-order effect
  // γ_q(u_s)·f(|inputs|) bounds what one random nudge may miss where a few terms cancel.
  // A tensor the storage format holds exactly is stored as itself and counts for nothing.
  const double stored_tensors = ev->stored.moving_tensors;
  const double stored_u = ev->stored.stored_u, floor_u = ev->stored.floor_u();

  // Named only where the target declares contracted axes: the text of every other bound stays.
  const std::string shuffled_axes = shuffled.permuted_axes.empty() ? "" : " (input features permuted too)";
  Bounds b;
  b.precision = precision;
  b.accumulation = formats.accumulation;
  b.unit_roundoff = u;
  if (mixed)
    b.model = fmt::format(
        "measured {0}·(max(e_i, rms e)·(u_a/u_f32) + max(s_i, rms s)) + {1}·(u_s·|y| + γ_q(u_s)·|f(|inputs|)|) + "
        "{1}·γ_(d+w+4)(u_a)·(|y| + rms y + |f(|inputs|)| + rms answer) (e = float32 oracle error, CSR, row-reversed and "
        "row-shuffled{5} orders; s = float64 oracle with every input nudged by u_s vs CSR, storing the inputs; q = {4:.0f} "
        "stored tensors; u_s·|y| storing the result; w = widest row, for a layer at least the sum of its dense widths; "
        "u_s = {2}, u_a = {3})",
        options_.measured_multiple, options_.safety_factor, u_text(precision), u_text(formats.accumulation),
        stored_tensors, shuffled_axes);
  else
  b.model = fmt::format(
      "measured {}·{} + {}·γ_(d+w+4)·(|y| + rms y + |f(|inputs|)| + rms answer) (e = float32 oracle error, CSR, "
      "row-reversed and row-shuffled{} orders; {}w = widest row, for a layer at least the sum of its dense widths; u = {})",
      options_.measured_multiple, float64_system ? "max(max(e_i, rms e)·(u/u_f32), d64_i)" : "max(e_i, rms e)·(u/u_f32)",
      options_.safety_factor, shuffled_axes,
      float64_system ? "d64 = float64 row-reversed or inputs nudged by 2^-52 vs CSR; " : "", u_text(precision));
  const std::optional<Result> intermediates = def.intermediate_magnitudes ? def.intermediate_magnitudes(c) : std::nullopt;
  const std::optional<Result> term_magnitudes = def.term_magnitudes ? def.term_magnitudes(c) : std::nullopt;
  for (const NamedTensor& nt : result_tensors(spec, exact)) {
    const Tensor& y = must_find(exact, nt, "the oracle's result");
    const Tensor& y1 = must_find(in_order, nt, "the float32 evaluation");
    // f(|inputs|), or where the entry declares terms that cancel beyond it (TargetDef::term_magnitudes)
    // the larger of the two.
    const Tensor* declared_terms = term_magnitudes ? find_tensor(*term_magnitudes, nt) : nullptr;
    const Tensor& abs_sum_of_inputs = must_find(abs_sums, nt, "the |inputs| evaluation");
    const std::optional<Tensor> widened = larger_terms(abs_sum_of_inputs, declared_terms);
    const Tensor& abs_sum = widened ? *widened : abs_sum_of_inputs;

    // A tensor of a reordered case in the original order: the tensor itself where its rows did not
    // move (node tensors when only edges moved within rows), else a reordered copy.
    std::deque<Tensor> reordered;
    auto original_order = [&](const Result& r, const Relabeling& moved, const char* what) -> const Tensor& {
      const Tensor& t = must_find(r, nt, what);
      const bool rows = moves_rows(nt.kind, moved), axes = nt.is_gradient && !moved.permuted_axes.empty();
      if (!rows && !axes) return t;
      Tensor back = rows ? to_original_order(t, nt.kind, moved) : t;
      if (axes) back = to_original_axes(back, nt.name, moved);
      return reordered.emplace_back(std::move(back));
    };
    const Tensor& y2 = original_order(reversed_order, reversed, "the row-reversed float32 evaluation");
    // d64: a float64 system only (see start_measured_evaluations).
    const Tensor* y64 = float64_system ? &original_order(reversed_f64, reversed, "the row-reversed float64 evaluation") : nullptr;
    const Tensor* y_nudged =
        float64_system || mixed ? &must_find(nudged_f64, nt, "the input-nudged evaluation") : nullptr;
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
    // s_i, storing the inputs' effect (a wider accumulation format only).
    auto storing_effect = [&](index_t i) {
      return std::isfinite(y[i]) && std::isfinite((*y_nudged)[i]) ? std::abs((*y_nudged)[i] - y[i]) : 0.0;
    };
    constexpr index_t chunks = 64;
    std::vector<double> err_sq(chunks, 0.0), y_sq(chunks, 0.0), storing_sq(chunks, 0.0);
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
        if (mixed) storing_sq[k] += storing_effect(i) * storing_effect(i);
      }
    double sum_sq = 0.0, y_sum_sq = 0.0, storing_sum_sq = 0.0;
    index_t finite = 0;
    for (index_t k = 0; k < chunks; ++k) {
      storing_sum_sq += storing_sq[k];
      sum_sq += err_sq[k];
      y_sum_sq += y_sq[k];
      finite += finite_count[k];
    }
    const double rms = finite ? std::sqrt(sum_sq / static_cast<double>(finite)) : 0.0;
    const double y_rms = n ? std::sqrt(y_sum_sq / static_cast<double>(n)) : 0.0;
    const double storing_rms = n ? std::sqrt(storing_sum_sq / static_cast<double>(n)) : 0.0;
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
      if (mixed) {
        const double storing = std::max(storing_effect(i), storing_rms);
        const double first_order = std::isfinite(abs_sum[i]) ? gamma(stored_tensors, u) * std::abs(abs_sum[i]) : 0.0;
        bound[i] = options_.measured_multiple * (std::max(order_error(i).first, rms) * scale + storing) +
                   options_.safety_factor * (u * std::abs(y[i]) + first_order + gamma(d, u_compute) * magnitude) +
                   (d + 1) * tiny;
        continue;
      }
      bound[i] = options_.measured_multiple * std::max(std::max(order_error(i).first, rms) * scale, order_f64) +
                 options_.safety_factor * gamma(d, u) * magnitude + d * tiny;
    }
    // A product's partial products reach beyond |f(|inputs|)| (TargetDef::intermediate_magnitudes).
    const Tensor* reach = intermediates ? find_tensor(*intermediates, nt) : nullptr;
    if (reach && reach->shape() == abs_sum.shape()) {
      Tensor terms = abs_sum;
      for (index_t i = 0; i < terms.size(); ++i) terms[i] = std::max(std::abs(terms[i]), (*reach)[i]);
      note_range(b, nt.label, terms, y, options_.safety_factor);
    } else {
      note_range(b, nt.label, abs_sum, y, options_.safety_factor);
    }
    note_inputs_range(b, c, options_.safety_factor);
    b.tensors.emplace(nt.label, std::move(bound));
  }
  note_softmax_past_analysis(def, c, ev->stored.floor_format, b);
  for (oracle::ToleranceFloor floor : spec.tolerance.floors) {
    if (floor == oracle::ToleranceFloor::gat_attention) add_floors(ev->gat_floor.get(), options_.safety_factor, b.tensors);
    if (floor == oracle::ToleranceFloor::gatv2_attention)
      add_floors(gatv2_attention_floors(def, c, floor_u, stored_u), options_.safety_factor, b.tensors);
    if (floor == oracle::ToleranceFloor::rgat_attention)
      add_floors(rgat_attention_floors(def, c, floor_u, stored_u), options_.safety_factor, b.tensors);
    if (floor == oracle::ToleranceFloor::agnn_attention) add_agnn_attention_floor(c, floor_u, options_.safety_factor, b.tensors);
    if (floor == oracle::ToleranceFloor::attention_logits)
      add_floors(attention_logits_floor(c, floor_u), options_.safety_factor, b.tensors);
    if (floor == oracle::ToleranceFloor::segment_softmax)
      add_floors(segment_softmax_floor(c, floor_u), options_.safety_factor, b.tensors);
  }
  return b;
}

}  // namespace gnncheck::checks
