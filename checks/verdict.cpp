#include "checks/verdict.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace gnncheck::checks {

const std::vector<CheckKind>& all_check_kinds() {
  static const std::vector<CheckKind> kinds = {
      CheckKind::differential,           CheckKind::gradient,          CheckKind::adjoint,
      CheckKind::op_order,               CheckKind::metamorphic_relabel, CheckKind::metamorphic_edge_order,
      CheckKind::metamorphic_linearity,  CheckKind::state_interleaved, CheckKind::state_repeat,
      CheckKind::numerics,               CheckKind::resources,
  };
  return kinds;
}

std::string_view to_string(CheckKind kind) {
  switch (kind) {
    case CheckKind::differential: return "differential";
    case CheckKind::gradient: return "gradient";
    case CheckKind::adjoint: return "adjoint";
    case CheckKind::op_order: return "op_order";
    case CheckKind::metamorphic_relabel: return "metamorphic_relabel";
    case CheckKind::metamorphic_edge_order: return "metamorphic_edge_order";
    case CheckKind::metamorphic_linearity: return "metamorphic_linearity";
    case CheckKind::state_interleaved: return "state_interleaved";
    case CheckKind::state_repeat: return "state_repeat";
    case CheckKind::numerics: return "numerics";
    case CheckKind::resources: return "resources";
  }
  return "unknown";
}

std::string_view to_string(Conclusion c) {
  switch (c) {
    case Conclusion::pass: return "pass";
    case Conclusion::fail: return "fail";
    case Conclusion::error: return "error";
    case Conclusion::unsupported: return "unsupported";
    case Conclusion::not_applicable: return "not applicable";
    case Conclusion::inconclusive: return "inconclusive";
  }
  return "unknown";
}

std::string_view to_string(Agreement a) {
  switch (a) {
    case Agreement::agrees: return "agrees";
    case Agreement::disagrees: return "disagrees";
    case Agreement::inconclusive: return "inconclusive";
  }
  return "unknown";
}

CheckKind parse_check_kind(std::string_view name) {
  std::vector<std::string_view> names;
  for (CheckKind k : all_check_kinds()) {
    if (to_string(k) == name) return k;
    names.push_back(to_string(k));
  }
  throw InputError(fmt::format("unknown check '{}'; known checks: {}", name, fmt::join(names, ", ")));
}

namespace {

std::vector<std::int64_t> unflatten(std::int64_t flat, const std::vector<index_t>& shape) {
  std::vector<std::int64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0) break;
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

// |a − e| / bound with the conventions of compare_elementwise: non-finite where e is finite is ∞,
// an error against a zero bound is ∞, no error is 0.
double error_ratio(double actual, double expected, double bound) {
  if (std::isnan(expected)) return std::isnan(actual) ? 0.0 : std::numeric_limits<double>::infinity();
  if (std::isinf(expected)) return actual == expected ? 0.0 : std::numeric_limits<double>::infinity();
  if (!std::isfinite(actual)) return std::numeric_limits<double>::infinity();
  const double err = std::abs(actual - expected);
  if (err == 0.0) return 0.0;
  if (!(bound > 0.0)) return std::numeric_limits<double>::infinity();
  return err / bound;
}

struct SideRatio {
  double ratio = 0.0;
  double bound = 0.0;  // the bound of the side the element lies on
};

// The ratio of one element against the side of its interval it lies on. Below `expected`, with a
// lower endpoint `lowest` (not NaN), the verdict is actual < lowest, decided exactly: the distance
// expected − lowest may round to expected − actual on the longest softmax rows (lowest ≈ α·e^−36),
// so the rounded ratio is held to the verdict — above 1 outside, at most 1 inside.
SideRatio side_ratio(double actual, double expected, double bound, double lowest) {
  if (std::isnan(lowest) || !std::isfinite(expected) || !std::isfinite(actual) || !(actual < expected))
    return {error_ratio(actual, expected, bound), bound};
  const double below = expected - lowest;
  const bool outside = actual < lowest;
  double ratio = below > 0.0 ? (expected - actual) / below : std::numeric_limits<double>::infinity();
  ratio = outside ? std::max(ratio, std::nextafter(1.0, 2.0)) : std::min(ratio, 1.0);
  return {ratio, below};
}

}  // namespace

TensorComparison compare_elementwise(const std::string& tensor, const Tensor& actual, const Tensor& expected,
                                     const Tensor& bound, const Tensor* lowest) {
  TensorComparison c;
  c.tensor = tensor;
  if (expected.shape() != bound.shape())
    throw InternalError(fmt::format("{}: bound of shape {} for a reference of shape {}", tensor, bound.shape(),
                                    expected.shape()));
  if (lowest && lowest->shape() != expected.shape())
    throw InternalError(fmt::format("{}: lower endpoints of shape {} for a reference of shape {}", tensor,
                                    lowest->shape(), expected.shape()));
  if (actual.shape() != expected.shape()) {
    c.agreement = Agreement::disagrees;
    c.reason = fmt::format("shape {} where {} is expected", actual.shape(), expected.shape());
    c.worst_ratio = std::numeric_limits<double>::infinity();
    c.elements = expected.size();
    c.elements_over_bound = expected.size();
    return c;
  }
  c.elements = expected.size();
  for (index_t i = 0; i < expected.size(); ++i) {
    const SideRatio r = lowest ? side_ratio(actual[i], expected[i], bound[i], (*lowest)[i])
                               : SideRatio{error_ratio(actual[i], expected[i], bound[i]), bound[i]};
    if (r.ratio > 1.0) ++c.elements_over_bound;
    if (!c.worst || r.ratio > c.worst_ratio) {
      c.worst_ratio = r.ratio;
      c.worst = ElementReport{i, unflatten(i, expected.shape()), actual[i], expected[i], r.bound};
    }
  }
  c.agreement = c.elements_over_bound == 0 ? Agreement::agrees : Agreement::disagrees;
  if (c.elements == 0) {
    c.agreement = Agreement::inconclusive;
    c.reason = "the tensor has no elements";
    c.empty = true;
  }
  return c;
}

void disagree_where_exact_is_finite(TensorComparison& tc, const Tensor& actual, const Tensor& expected,
                                    const Tensor& exact, const Tensor& bound) {
  if (tc.inconclusive() || actual.shape() != exact.shape() || expected.shape() != exact.shape() ||
      bound.shape() != exact.shape())
    return;
  index_t both_wrong = 0;
  for (index_t i = 0; i < exact.size(); ++i) {
    const bool same_non_finite = (std::isnan(actual[i]) && std::isnan(expected[i])) ||
                                 (std::isinf(actual[i]) && actual[i] == expected[i]);
    if (!same_non_finite || !std::isfinite(exact[i])) continue;
    ++tc.elements_over_bound;
    if (both_wrong++ == 0 && !(tc.worst && std::isinf(tc.worst_ratio))) {
      tc.worst_ratio = std::numeric_limits<double>::infinity();
      tc.worst = ElementReport{i, unflatten(i, exact.shape()), actual[i], exact[i], bound[i]};
    }
  }
  if (both_wrong == 0) return;
  tc.agreement = Agreement::disagrees;
  tc.reason = fmt::format("{} element(s) non-finite in both answers where the exact result is finite (the worst "
                          "element shows the exact value as expected)",
                          both_wrong);
}

void summarize(Verdict& v) {
  // Headline: the worst disagreeing comparison, else the worst agreeing one, else an inconclusive one.
  auto rank = [](const TensorComparison& c) {
    return c.disagrees() ? 2 : (c.agrees() ? 1 : 0);
  };
  const TensorComparison* headline = nullptr;
  bool any_disagrees = false, any_conclusive = false, all_empty = !v.comparisons.empty();
  for (const auto& c : v.comparisons) {
    any_disagrees = any_disagrees || c.disagrees();
    any_conclusive = any_conclusive || !c.inconclusive();
    all_empty = all_empty && c.inconclusive() && c.empty;
    const bool better = !headline || rank(c) > rank(*headline) ||
                        (rank(c) == rank(*headline) && c.worst_ratio > headline->worst_ratio);
    if (better) headline = &c;
  }
  if (v.system_status == Status::unsupported)
    v.conclusion = Conclusion::unsupported;
  else if (v.system_status != Status::ok)
    v.conclusion = Conclusion::error;
  else if (any_disagrees)
    v.conclusion = Conclusion::fail;
  else if (all_empty)  // a graph without edges for an edge tensor: nothing to verify, not a doubt about it
    v.conclusion = Conclusion::not_applicable;
  else if (!any_conclusive)
    v.conclusion = Conclusion::inconclusive;
  else
    v.conclusion = Conclusion::pass;
  if (headline) {
    v.tensor = headline->tensor;
    v.worst = headline->worst;
    if (headline->inconclusive()) {
      v.metric = 0;
      v.bound = 0;
      if (v.conclusion == Conclusion::inconclusive && v.detail.empty()) v.detail = headline->reason;
      if (v.conclusion == Conclusion::not_applicable && v.detail.empty())
        v.detail = "nothing to compare: every tensor the check compares has no elements";
    } else if (headline->worst) {
      // Equal infinities that agree (an empty max segment's −∞ on both sides) have no error, where
      // ∞ − ∞ is NaN; the same non-finite value in a comparison that disagrees stays ∞.
      const double a = headline->worst->actual, e = headline->worst->expected;
      const bool same = a == e || (std::isnan(a) && std::isnan(e));
      v.metric = same && !headline->disagrees() ? 0.0 : std::abs(a - e);
      if (std::isnan(v.metric)) v.metric = std::numeric_limits<double>::infinity();
      v.bound = headline->worst->bound;
    } else if (headline->disagrees()) {
      v.metric = std::numeric_limits<double>::infinity();
    }
  } else if (v.conclusion == Conclusion::inconclusive && v.detail.empty()) {
    v.detail = "the check compared nothing";
  }
  if (v.metric_name.empty()) v.metric_name = "|actual − expected| at the worst element";
  v.message = v.conclusion == Conclusion::fail || v.conclusion == Conclusion::error ? failure_message(v) : std::string();
}

int inconclusive_comparisons(const Verdict& v) {
  int n = 0;
  for (const auto& c : v.comparisons) n += c.inconclusive() ? 1 : 0;
  return n;
}

std::string failure_message(const Verdict& v) {
  if (v.passed()) return {};
  std::string msg = v.conclusion == Conclusion::fail || v.conclusion == Conclusion::error
                        ? fmt::format("{} check FAILED: system '{}', target '{}'", to_string(v.check), v.system, v.target)
                        : fmt::format("{} check {}: system '{}', target '{}'", to_string(v.check),
                                      to_string(v.conclusion), v.system, v.target);
  if (v.system_status != Status::ok) {
    msg += fmt::format(": the system answered {}", to_string(v.system_status));
  }
  if (!v.tensor.empty()) msg += fmt::format(", {}", v.tensor);
  msg += ".";
  for (const auto& c : v.comparisons) {
    if (!c.disagrees() || c.tensor != v.tensor) continue;
    if (c.worst && c.worst->index.empty()) {
      const auto& w = *c.worst;
      msg += fmt::format(" Got {:.9g}, expected {:.9g}, |error| {:.3g} > bound {:.3g} ({:.3g}× the bound).", w.actual,
                         w.expected, std::abs(w.actual - w.expected), w.bound, c.worst_ratio);
    } else if (c.worst) {
      const auto& w = *c.worst;
      msg += fmt::format(" Worst element {} (flat {}): got {:.9g}, expected {:.9g}, |error| {:.3g} > bound {:.3g}"
                         " ({:.3g}× the bound); {} of {} elements over their bound.",
                         w.index, w.flat_index, w.actual, w.expected, std::abs(w.actual - w.expected), w.bound,
                         c.worst_ratio, c.elements_over_bound, c.elements);
      if (!c.reason.empty()) msg += fmt::format(" ({})", c.reason);
    } else {
      msg += fmt::format(" The tensor has the wrong shape or is missing ({} elements expected{}).", c.elements,
                         c.reason.empty() ? "" : "; " + c.reason);
    }
  }
  if (!v.detail.empty()) msg += " " + v.detail;
  msg += fmt::format(" Declared precision {}; tolerance: {}.", precision_text(v.precision, v.accumulation),
                     v.tolerance_model.empty() ? std::string("n/a") : v.tolerance_model);
  msg += fmt::format(" Case seed {}.", v.seed);
  if (!v.counterexample_path.empty()) msg += fmt::format(" Counterexample: {}.", v.counterexample_path);
  if (!v.rerun_command.empty()) msg += fmt::format(" Re-run: {}", v.rerun_command);
  return msg;
}

std::string one_line(const Verdict& v) {
  if (v.conclusion == Conclusion::not_applicable || v.conclusion == Conclusion::inconclusive ||
      v.conclusion == Conclusion::unsupported)
    return fmt::format("{} {} {}/{}: {}", v.conclusion == Conclusion::not_applicable ? "N/A "
                                          : v.conclusion == Conclusion::unsupported  ? "UNSUPPORTED"
                                                                                     : "INCONCLUSIVE",
                       to_string(v.check), v.system, v.target, v.detail);
  const double ratio = v.bound > 0 ? v.metric / v.bound : (v.metric == 0 ? 0.0 : std::numeric_limits<double>::infinity());
  const int inconclusive = inconclusive_comparisons(v);
  return fmt::format("{} {} {}/{}{}: {} {:.3g} vs bound {:.3g} ({:.3g} of bound), {}, seed {}{}",
                     v.passed() ? "PASS" : (v.conclusion == Conclusion::error ? "ERROR" : "FAIL"), to_string(v.check),
                     v.system, v.target, v.tensor.empty() ? "" : " [" + v.tensor + "]", v.metric_name, v.metric, v.bound,
                     ratio, precision_text(v.precision, v.accumulation), v.seed,
                     inconclusive ? fmt::format(" ({} of {} comparisons inconclusive)", inconclusive, v.comparisons.size())
                                  : std::string());
}

}  // namespace gnncheck::checks
