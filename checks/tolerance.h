// gnncheck/checks/tolerance.h — element-wise error bounds from error analysis, never from tuning.
//
// For every output and gradient of a case, bounds() gives a tensor of the same shape: how far a
// correct implementation computing in the system's declared precision may be from the exact
// (float64 oracle) value, element by element. Three models, chosen per target: closed form, the
// classical γ_n·Σ|a||b| bound of a sum of k products (the sparse ops); softmax per row, a bound
// relative to each alpha from the row's length and logits (edge_softmax); and measured, a stated
// multiple of the error the oracle's own code makes in float32 in three summation orders plus a γ
// floor (the layers). Every term and why it is there: checks/tolerance.md (and
// checks/softmax.md). The description of the model actually used goes into every verdict. Which
// model a target gets is declared by its catalogue entry (oracle::TargetSpec::tolerance); this file
// implements each kind once.
//
//   gnncheck::checks::ToleranceModel model;                      // default factors
//   Result exact = oracle::evaluate(c);
//   gnncheck::checks::Bounds b = model.bounds(c, exact, Precision::float32);
//   const Tensor& bound_y = b.tensors.at("output y");
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/case.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

struct ToleranceOptions {
  double safety_factor = 2.0;      // closed form: bound = safety · γ_n · Σ|a||b|; also scales the measured floor
  // measured model: M. With M = 8 and two sampled orders, a correct float32 implementation in a third
  // order failed once in 10,000 GAT cases (1.17× the bound, a gradient that is exactly 0 in exact
  // arithmetic); with M = 16 and three orders the worst of 10,000 cases per layer is below half the
  // bound (docs/campaigns.md).
  double measured_multiple = 16.0;
  // measured model: how many of its oracle evaluations (three float32 orders; |inputs| in float64,
  // and for a float64 system two more float64 helpers; the reference in reference_and_bounds) run
  // side by side. Each holds a few copies of the case's largest tensors (~10 GB for GAT on the
  // Reddit-shaped graph in float64), so the default keeps memory modest.
  int concurrent_evaluations = 3;
};

using gnncheck::gamma;  // core/case.h: γ_n = n·u / (1 − n·u), capped at 1

// The formats a correct implementation is modelled in: its inputs and outputs stored in `storage`,
// its sums and intermediate values computed in `accumulation` (System::accumulation; equal for a
// system that declares one precision, and then every bound is the one-format bound).
// checks/tolerance.md, "Storage and accumulation".
struct Formats {
  Precision storage = Precision::float64;
  Precision accumulation = Precision::float64;
  Formats() = default;
  Formats(Precision both) : storage(both), accumulation(both) {}  // one format (implicit: the common case)
  Formats(Precision storage_format, Precision accumulation_format)
      : storage(storage_format), accumulation(accumulation_format) {}
  bool mixed() const { return storage != accumulation; }
};

// The relative error of n_s roundings in the storage format and n_a in the accumulation format,
// (1 + γ_(n_s)(u_s))·(1 + γ_(n_a)(u_a)) − 1; γ_(n_s + n_a)(u) when the two formats are one.
double mixed_gamma(double storage_roundings, double accumulation_roundings, const Formats& formats);

struct Bounds {
  // By label ("output <name>", "gradient <name>"): how far from the exact value a correct result
  // may lie, on both sides — or above it only, where `lowest` holds the label. Always the larger
  // side, so it is also the bound on |error| that a consumer summing errors (the adjoint check) or
  // comparing two answers of one system (metamorphic, state) uses.
  std::map<std::string, Tensor> tensors;
  // By label, where the analysis bounds the downward error more tightly (edge_softmax's alpha:
  // α̂ ≥ α·e^−Λ − φ): the least value a correct result may take, NaN on the elements it does not
  // bound. Held as the endpoint, not as a distance, because α − α·e^−Λ rounds to α in double once
  // e^−Λ < 2^−53 and the lower side would be lost on the longest rows. A comparison against the
  // exact answer uses it (compare_elementwise's `lowest`); see lowest_of.
  std::map<std::string, Tensor> lowest;
  // Non-empty where no bound is known for the case in the declared format, with the figures: beyond
  // its range (the magnitudes of some element's terms come within the safety factor of the format's
  // largest finite value, 65504 in float16, so a correct implementation may overflow to ±∞ in a
  // partial sum), or past an analysis where the fallback does not hold (edge_softmax's rows of large
  // logits at bfloat16, float16 and TF32). Every comparison built on these bounds is then
  // inconclusive: no bound is ever guessed.
  std::string no_bound;
  Precision precision = Precision::float64;     // the storage format
  Precision accumulation = Precision::float64;  // the format sums are computed in
  double unit_roundoff = 0.0;                   // the storage format's
  std::string model;  // e.g. "closed form 2·γ_{k+2}·Σ|w||x| (u = 2^-24)"

  // The lower endpoints of `label`, or nullptr where its interval is symmetric.
  const Tensor* lowest_of(const std::string& label) const {
    const auto it = lowest.find(label);
    return it == lowest.end() ? nullptr : &it->second;
  }
};

// The float64 oracle's answer for a case and the bounds around it (reference_and_bounds).
struct ReferenceAndBounds {
  Result reference;  // not ok(): the oracle could not evaluate the case; bounds is then empty
  Bounds bounds;
};

class ToleranceModel {
 public:
  explicit ToleranceModel(ToleranceOptions options = {}) : options_(options) {}
  const ToleranceOptions& options() const { return options_; }

  // Bounds for every output and gradient present in `exact` (the oracle's float64 result of `c`).
  // Throws InternalError if the oracle cannot evaluate the helper cases it needs.
  Bounds bounds(const Case& c, const Result& exact, Precision precision) const { return bounds(c, exact, Formats(precision)); }
  Bounds bounds(const Case& c, const Result& exact, const Formats& formats) const;
  // The same bounds, with the float64 reference evaluated by the oracle alongside the model's own
  // evaluations (for the measured model the reference is one more task of the same pool): what a
  // one-off verification of a large case wants.
  ReferenceAndBounds reference_and_bounds(const Case& c, Precision precision) const {
    return reference_and_bounds(c, Formats(precision));
  }
  ReferenceAndBounds reference_and_bounds(const Case& c, const Formats& formats) const;

 private:
  // Each takes c's catalogue entry, looked up once by bounds() or reference_and_bounds().
  Bounds closed_form(const oracle::TargetDef& def, const Case& c, const Result& exact, const Formats& formats) const;
  Bounds softmax_per_row(const oracle::TargetDef& def, const Case& c, const Result& exact, const Formats& formats) const;
  Bounds measured(const oracle::TargetDef& def, const Case& c, const Result& exact, const Formats& formats) const;
  struct MeasuredEvaluations;
  std::shared_ptr<MeasuredEvaluations> start_measured_evaluations(const oracle::TargetDef& def, const Case& c,
                                                                  const Formats& formats) const;
  Bounds measured_from(const oracle::TargetDef& def, const Case& c, const std::shared_ptr<MeasuredEvaluations>& evaluations,
                       const Result& exact, const Formats& formats) const;
  void add_softmax_backward_floor(const Case& c, const Result& exact, const Formats& formats, Tensor& bound) const;
  ToleranceOptions options_;
};

}  // namespace gnncheck::checks
