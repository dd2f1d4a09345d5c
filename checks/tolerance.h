// gnncheck/checks/tolerance.h — element-wise error bounds from error analysis, never from tuning.
//
// For every output and gradient of a case, bounds() gives a tensor of the same shape: how far a
// correct implementation computing in the system's declared precision may be from the exact
// (float64 oracle) value, element by element. Two models, chosen per target:
//
// closed form (the sparse ops, whose every result element is a sum of k products with
// non-negative structural coefficients): the classical bound for a sum of k products computed in
// any order in a precision with unit roundoff u,
//     |ŷ_i − y_i| ≤ γ_n · Σ_t |a_t||b_t|,   γ_n = n·u / (1 − n·u),   n = k_i + r,
// where Σ|a||b| is the oracle's own target evaluated in float64 on |inputs| (exact enough: its own
// error is ~1e-16 relative), k_i is the number of terms of element i (the degree of its row for a
// node tensor, the term count from evaluating the target on all-ones inputs for an edge tensor),
// and r counts the roundings each term sees besides the additions (rounding the float64 inputs to
// the declared precision, the products, the degree factors of normalized forms; listed per target
// in tolerance.cpp). The bound is multiplied by a stated safety factor (default 2) and a floor of
// n smallest subnormals covers underflow. An element whose Σ|a||b| is 0 must be exactly 0.
//
// measured (edge_softmax, layers and any target without a closed form): the oracle's own code is
// run in float32 on the same case — in CSR edge order, with every row's edges reversed and with
// them shuffled (fixed seed), three summation orders a correct implementation may use — and e_i,
// the largest of the three errors against float64, is what a correct float32 implementation
// naturally makes. Then
//     bound_i = M · max(e_i, ē) · (u / u_float32) + s · γ_{d_i + w + 4} · (|y_i| + ȳ + A_i + R) + floor,
// (for a float64 system the first term is M · max(max(e_i, ē) · u/u_float32, d64_i), d64_i being
// how much the float64 oracle itself moves when every row's edges are reversed or every input is
// nudged by a relative 2^-52 — the conditioning float64 roundings meet, which float32, saturated
// on large logits, cannot show),
// with M a stated multiple (default 16), ē the root-mean-square of e over the tensor (an element
// whose float32 error happened to be 0 is not held to 0), ȳ the root-mean-square of y over the
// tensor, A_i the target evaluated in float64 on |inputs| (Σ|terms| for the linear parts of a
// composite: aggregations and matrix products, where cancellation hides the rounding from |y|),
// R the root-mean-square over all outputs (for an output) or all gradients (for a gradient) of the
// answer — a tensor may cancel to ~0 as a whole (GAT's attention-vector gradients on a one-node
// graph are exactly 0 in exact arithmetic) —, d_i the degree of the element's row, w the widest row of any input or parameter (the length of
// the matrix products) and s the safety factor: the closed-form floor of one more sum per element. The ȳ term matters where y_i is the cancelled difference of larger
// terms (softmax backward, α·(ḡ − Σ α·ḡ)): float32 may flush it to 0, so e_i is only |y_i| and,
// scaled to float64, would understate what a float64 implementation may err; the floor is then
// normwise, at γ·ȳ, far below the O(ȳ) error of a wrong formula. For edge_softmax's gradient the
// floor also has the closed form s·γ_{d+4}·α_k·(|ḡ_k| + Σ_row α|ḡ|) (the terms before cancellation).
//
// The description of the model actually used (with k, r and the factors) goes into every verdict.
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

namespace gnncheck::checks {

struct ToleranceOptions {
  double safety_factor = 2.0;      // closed form: bound = safety · γ_n · Σ|a||b|; also scales the measured floor
  // measured model: M. With M = 8 and two sampled orders, a correct float32 implementation in a third
  // order failed once in 10,000 GAT cases (1.17× the bound, a gradient that is exactly 0 in exact
  // arithmetic); with M = 16 and three orders the worst of 10,000 cases per layer is below half the
  // bound (checks/README.md, "What was measured").
  double measured_multiple = 16.0;
  // measured model: how many of its oracle evaluations (three float32 orders; |inputs| in float64,
  // and for a float64 system two more float64 helpers; the reference in reference_and_bounds) run
  // side by side. Each holds a few copies of the case's largest tensors (~10 GB for GAT on the
  // Reddit-shaped graph in float64), so the default keeps memory modest.
  int concurrent_evaluations = 3;
};

// Closed-form description of one target: how many extra roundings each term sees.
struct ClosedFormRule {
  std::string target;
  int extra_roundings = 0;  // r in n = k + r
  std::string why;          // one line: what the r roundings are
};

// The targets that have a closed form (tolerance.cpp lists them with their derivation).
const std::vector<ClosedFormRule>& closed_form_rules();
std::optional<ClosedFormRule> closed_form_rule(const std::string& target);

// γ_n = n·u / (1 − n·u), capped at 1 when n·u ≥ 1/2 (the bound then only says "same magnitude").
double gamma(double n, double u);

struct Bounds {
  std::map<std::string, Tensor> tensors;  // by label: "output <name>", "gradient <name>"
  Precision precision = Precision::float64;
  double unit_roundoff = 0.0;
  std::string model;  // e.g. "closed form 2·γ_{k+2}·Σ|w||x| (u = 2^-24)"
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
  Bounds bounds(const Case& c, const Result& exact, Precision precision) const;
  // The same bounds, with the float64 reference evaluated by the oracle alongside the model's own
  // evaluations (for the measured model the reference is one more task of the same pool): what a
  // one-off verification of a large case wants.
  ReferenceAndBounds reference_and_bounds(const Case& c, Precision precision) const;

 private:
  Bounds closed_form(const Case& c, const Result& exact, Precision precision, const ClosedFormRule& rule) const;
  Bounds measured(const Case& c, const Result& exact, Precision precision) const;
  struct MeasuredEvaluations;
  std::shared_ptr<MeasuredEvaluations> start_measured_evaluations(const Case& c, Precision precision) const;
  Bounds measured_from(const Case& c, const std::shared_ptr<MeasuredEvaluations>& evaluations, const Result& exact,
                       Precision precision) const;
  void add_softmax_backward_floor(const Case& c, const Result& exact, double u, Tensor& bound) const;
  ToleranceOptions options_;
};

}  // namespace gnncheck::checks
