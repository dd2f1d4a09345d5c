#include "oracle/gradcheck.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "oracle/kink_arguments.h"
#include "oracle/random_case.h"

namespace gnncheck::oracle {
namespace {

// The same infinity on both sides of a step: an output constant at ±∞ (a max over an empty row
// with the identity convention), whose derivative is 0.
bool constant_infinity(double plus, double minus) { return std::isinf(plus) && plus == minus; }


// The input or parameter called `name` (a Case keeps them in two maps); CaseT is Case or const Case.
template <class CaseT>
auto& input_tensor(CaseT& c, const std::string& name) {
  if (auto it = c.inputs.find(name); it != c.inputs.end()) return it->second;
  if (auto it = c.parameters.find(name); it != c.parameters.end()) return it->second;
  throw InputError(fmt::format("gradcheck of '{}': the case has no input or parameter '{}'", c.target, name));
}

Result evaluate_ok(const CaseEvaluator& evaluate, const Case& c, const char* what) {
  Result r = evaluate(c);
  if (!r.ok())
    throw GradcheckEvaluationError(fmt::format("gradcheck of '{}': {} evaluation returned {}: {}", c.target, what,
                                               to_string(r.status), r.message));
  return r;
}

// The layout of the flattened outputs: names in spec order and their sizes, from one forward.
struct OutputLayout {
  std::vector<std::string> names;
  std::vector<index_t> offsets;  // with a final entry = total
  std::vector<std::vector<index_t>> shapes;
  index_t total() const { return offsets.back(); }
};

OutputLayout output_layout(const TargetSpec& spec, const Result& r) {
  OutputLayout layout;
  layout.offsets.push_back(0);
  for (const TensorSlot& slot : spec.outputs) {
    auto it = r.outputs.find(slot.name);
    if (it == r.outputs.end())
      throw GradcheckEvaluationError(fmt::format("gradcheck of '{}': output '{}' is missing", spec.name, slot.name));
    layout.names.push_back(slot.name);
    layout.shapes.push_back(it->second.shape());
    layout.offsets.push_back(layout.offsets.back() + it->second.size());
  }
  return layout;
}

std::vector<double> flatten_outputs(const OutputLayout& layout, const Result& r, const std::string& target) {
  std::vector<double> flat;
  flat.reserve(static_cast<size_t>(layout.total()));
  for (size_t k = 0; k < layout.names.size(); ++k) {
    auto it = r.outputs.find(layout.names[k]);
    if (it == r.outputs.end() || it->second.shape() != layout.shapes[k])
      throw GradcheckEvaluationError(fmt::format("gradcheck of '{}': output '{}' is missing or changed shape",
                                                 target, layout.names[k]));
    flat.insert(flat.end(), it->second.values().begin(), it->second.values().end());
  }
  return flat;
}

Case forward_only(const Case& c) {
  Case f = c;
  f.grad_outputs.clear();
  return f;
}

// The step for an element of value x: relative for |x| > 1, absolute below (x = 0 is common).
double step_for(double x, double step) { return step * std::max(1.0, std::abs(x)); }

const Tensor& gradient_of(const Result& r, const std::string& input, const Tensor& like, const std::string& target) {
  auto it = r.gradients.find(input);
  if (it == r.gradients.end())
    throw GradcheckEvaluationError(fmt::format("gradcheck of '{}': the backward returned no gradient for '{}'",
                                               target, input));
  if (it->second.shape() != like.shape())
    throw GradcheckEvaluationError(fmt::format("gradcheck of '{}': gradient of '{}' has shape {}, expected {}",
                                               target, input, it->second.shape(), like.shape()));
  return it->second;
}

double relative_error(double numerical, double analytical, double scale) {
  const double denominator = std::max({std::abs(numerical), std::abs(analytical), scale});
  return denominator == 0.0 ? 0.0 : std::abs(numerical - analytical) / denominator;
}

}  // namespace

std::string Jacobian::row_label(index_t row) const {
  for (size_t k = 0; k + 1 < output_offsets.size(); ++k)
    if (row < output_offsets[k + 1]) return fmt::format("{}[{}]", output_names[k], row - output_offsets[k]);
  return fmt::format("row {}", row);
}

std::vector<std::string> differentiable_inputs(const TargetSpec& spec) {
  std::vector<std::string> names;
  for (const TensorSlot& slot : spec.inputs)
    if (slot.differentiable) names.push_back(slot.name);
  return names;
}

std::vector<std::string> differentiable_inputs(const TargetSpec& spec, const Case& c) {
  std::vector<std::string> names = differentiable_inputs(spec);
  std::erase_if(names, [&](const std::string& name) { return !c.inputs.count(name) && !c.parameters.count(name); });
  return names;
}

Jacobian numerical_jacobian(const CaseEvaluator& evaluate, const Case& c, const TargetSpec& spec,
                            const std::string& input, double step) {
  Case work = forward_only(c);
  const OutputLayout layout = output_layout(spec, evaluate_ok(evaluate, work, "forward"));
  Tensor& x = input_tensor(work, input);
  Jacobian jac{input, layout.names, layout.offsets, layout.total(), x.size(), {}, {}, {}};
  jac.values.assign(static_cast<size_t>(jac.rows * jac.cols), 0.0);
  jac.column_resolution.assign(static_cast<size_t>(jac.cols), 0.0);
  double largest_output = 0.0;
  for (double y : flatten_outputs(layout, evaluate_ok(evaluate, work, "forward"), c.target))
    if (std::isfinite(y)) largest_output = std::max(largest_output, std::abs(y));
  const double u = unit_roundoff(Precision::float64);
  const bool has_kinks = !kink_arguments(work).offsets.empty();
  // Whether the step x[j] ± h crosses a kink: the difference quotient then mixes two slopes.
  const auto crosses_kink = [&](index_t j, double original, double h) {
    if (!has_kinks) return false;
    x[j] = original + h;
    const Case plus = work;
    x[j] = original - h;
    const bool crosses = kink_between(plus, work);
    x[j] = original;
    return crosses;
  };
  for (index_t j = 0; j < x.size(); ++j) {
    const double original = x[j];
    double h = step_for(original, step);
    bool crosses = crosses_kink(j, original, h);
    for (int halving = 0; crosses && halving < kGradcheckKinkHalvings; ++halving) {
      h /= 2;
      crosses = crosses_kink(j, original, h);
    }
    if (crosses) {
      if (jac.column_crosses_kink.empty()) jac.column_crosses_kink.assign(static_cast<size_t>(jac.cols), 0);
      jac.column_crosses_kink[static_cast<size_t>(j)] = 1;
    }
    x[j] = original + h;
    const double plus_x = x[j];
    const std::vector<double> plus = flatten_outputs(layout, evaluate_ok(evaluate, work, "forward (x + h)"), c.target);
    x[j] = original - h;
    const double minus_x = x[j];
    const std::vector<double> minus = flatten_outputs(layout, evaluate_ok(evaluate, work, "forward (x - h)"), c.target);
    x[j] = original;
    const double taken = plus_x - minus_x;  // the step actually represented, not 2h
    jac.column_resolution[static_cast<size_t>(j)] = kGradcheckRoundings * u * largest_output / (taken / 2);
    for (index_t i = 0; i < jac.rows; ++i)
      jac.values[static_cast<size_t>(i * jac.cols + j)] = constant_infinity(plus[i], minus[i]) ? 0.0 : (plus[i] - minus[i]) / taken;
  }
  return jac;
}

std::vector<Jacobian> analytical_jacobians(const CaseEvaluator& evaluate, const Case& c, const TargetSpec& spec,
                                           const std::vector<std::string>& inputs) {
  const OutputLayout layout = output_layout(spec, evaluate_ok(evaluate, forward_only(c), "forward"));
  std::vector<Jacobian> jacobians;
  for (const std::string& name : inputs) {
    Jacobian jac{name, layout.names, layout.offsets, layout.total(), input_tensor(c, name).size(), {}, {}, {}};
    jac.values.assign(static_cast<size_t>(jac.rows * jac.cols), 0.0);
    jacobians.push_back(std::move(jac));
  }
  Case work = c;
  work.grad_outputs.clear();
  for (size_t k = 0; k < layout.names.size(); ++k) work.grad_outputs[layout.names[k]] = Tensor(layout.shapes[k]);
  for (size_t k = 0; k < layout.names.size(); ++k) {
    Tensor& one_hot = work.grad_outputs[layout.names[k]];
    for (index_t flat = 0; flat < one_hot.size(); ++flat) {
      one_hot[flat] = 1.0;
      const Result r = evaluate_ok(evaluate, work, "backward");
      one_hot[flat] = 0.0;
      const index_t row = layout.offsets[k] + flat;
      for (Jacobian& jac : jacobians) {
        const Tensor& grad = gradient_of(r, jac.input, input_tensor(c, jac.input), c.target);
        std::copy(grad.values().begin(), grad.values().end(), jac.values.begin() + row * jac.cols);
      }
    }
  }
  return jacobians;
}

Jacobian analytical_jacobian(const CaseEvaluator& evaluate, const Case& c, const TargetSpec& spec,
                             const std::string& input) {
  return std::move(analytical_jacobians(evaluate, c, spec, {input}).front());
}

InputAgreement compare_jacobians(const Jacobian& numerical, const Jacobian& analytical, double bound) {
  if (numerical.input != analytical.input || numerical.rows != analytical.rows || numerical.cols != analytical.cols)
    throw InternalError(fmt::format("compare_jacobians: Jacobians of '{}' ({}×{}) and '{}' ({}×{}) differ in shape",
                                    numerical.input, numerical.rows, numerical.cols, analytical.input,
                                    analytical.rows, analytical.cols));
  InputAgreement agreement;
  agreement.input = numerical.input;
  agreement.method = "full Jacobian";
  agreement.bound = bound;
  agreement.comparisons = numerical.rows * numerical.cols;
  const auto left_out = [&](index_t j) {
    return !numerical.column_crosses_kink.empty() && numerical.column_crosses_kink[static_cast<size_t>(j)];
  };
  for (index_t j = 0; j < numerical.cols; ++j)
    if (left_out(j)) {
      agreement.left_out_at_kinks += 1;
      agreement.comparisons -= numerical.rows;
    }
  double scale = 0.0;
  for (index_t i = 0; i < numerical.rows; ++i)
    for (index_t j = 0; j < numerical.cols; ++j)
      if (!left_out(j)) scale = std::max({scale, std::abs(numerical.at(i, j)), std::abs(analytical.at(i, j))});
  bool finite = true;
  for (index_t i = 0; i < numerical.rows; ++i) {
    for (index_t j = 0; j < numerical.cols; ++j) {
      if (left_out(j)) continue;
      const double n = numerical.at(i, j), a = analytical.at(i, j);
      const double floor =
          numerical.column_resolution.empty() ? 0.0 : numerical.column_resolution[static_cast<size_t>(j)] / bound;
      double error = relative_error(n, a, std::max(scale, floor));
      if (!std::isfinite(n) || !std::isfinite(a)) error = INFINITY;
      finite = finite && std::isfinite(error);
      if (agreement.worst_location.empty() || error > agreement.worst_relative_error) {
        agreement.worst_relative_error = error;
        agreement.worst_location = fmt::format("d {} / d {}[{}]", numerical.row_label(i), numerical.input, j);
        agreement.worst_numerical = n;
        agreement.worst_analytical = a;
      }
    }
  }
  agreement.passed = finite && agreement.worst_relative_error <= bound;
  return agreement;
}

GradcheckReport check_full_jacobian(const CaseEvaluator& evaluate, const Case& c, const TargetSpec& spec,
                                    const GradcheckOptions& options) {
  GradcheckReport report;
  report.target = spec.name;
  try {
    const std::vector<std::string> names = differentiable_inputs(spec, c);
    const std::vector<Jacobian> analytical = analytical_jacobians(evaluate, c, spec, names);
    for (const Jacobian& ana : analytical) {
      const Jacobian num = numerical_jacobian(evaluate, c, spec, ana.input, options.step);
      report.inputs.push_back(compare_jacobians(num, ana, options.bound));
    }
  } catch (const GradcheckEvaluationError& e) {
    report.failure = e.what();
  }
  report.all_passed = report.failure.empty() &&
                      std::all_of(report.inputs.begin(), report.inputs.end(), [](const auto& a) { return a.passed; });
  return report;
}

GradcheckReport check_random_directions(const CaseEvaluator& evaluate, const Case& c, const TargetSpec& spec,
                                        const GradcheckOptions& options) {
  GradcheckReport report;
  report.target = spec.name;
  try {
    Case forward = forward_only(c);
    const OutputLayout layout = output_layout(spec, evaluate_ok(evaluate, forward, "forward"));
    const std::vector<std::string> names = differentiable_inputs(spec, c);
    for (const std::string& name : names) {
      InputAgreement agreement;
      agreement.input = name;
      agreement.method = "random directions";
      agreement.bound = options.bound;
      report.inputs.push_back(agreement);
    }
    for (int d = 0; d < options.directions; ++d) {
      // v: one random output gradient for all inputs; its backward gives Jᵀv for every input at once.
      Case backward = c;
      backward.grad_outputs.clear();
      for (size_t k = 0; k < layout.names.size(); ++k)
        backward.grad_outputs[layout.names[k]] =
            random_tensor(layout.shapes[k], options.seed, fmt::format("direction {} v:{}", d, layout.names[k]));
      const Result back = evaluate_ok(evaluate, backward, "backward");
      std::vector<double> v;
      for (const auto& name : layout.names) {
        const auto& t = backward.grad_outputs[name].values();
        v.insert(v.end(), t.begin(), t.end());
      }
      for (size_t k = 0; k < names.size(); ++k) {
        const Tensor& x0 = input_tensor(c, names[k]);
        const Tensor& jt_v = gradient_of(back, names[k], x0, c.target);
        const Tensor u = random_tensor(x0.shape(), options.seed, fmt::format("direction {} u:{}", d, names[k]));
        double x_scale = 0.0;
        for (double value : x0.values()) x_scale = std::max(x_scale, std::abs(value));
        double h = step_for(x_scale, options.direction_step);
        // Perturb along u; the direction actually applied is the represented difference, per element.
        Case plus_case = forward, minus_case = forward;
        Tensor& xp = input_tensor(plus_case, names[k]);
        Tensor& xm = input_tensor(minus_case, names[k]);
        std::vector<double> applied(static_cast<size_t>(x0.size()));
        const auto perturb = [&] {
          for (index_t j = 0; j < x0.size(); ++j) {
            xp[j] = x0[j] + h * u[j];
            xm[j] = x0[j] - h * u[j];
            applied[static_cast<size_t>(j)] = (xp[j] - xm[j]) / (2.0 * h);
          }
        };
        perturb();
        // Every element moves at once: on a large graph some kink argument may cross its kink.
        bool crosses = kink_between(plus_case, minus_case);
        for (int halving = 0; crosses && halving < kGradcheckKinkHalvings; ++halving) {
          h /= 2;
          perturb();
          crosses = kink_between(plus_case, minus_case);
        }
        if (crosses) {
          report.inputs[k].left_out_at_kinks += 1;
          continue;
        }
        const std::vector<double> plus = flatten_outputs(layout, evaluate_ok(evaluate, plus_case, "forward (x + hu)"), c.target);
        const std::vector<double> minus = flatten_outputs(layout, evaluate_ok(evaluate, minus_case, "forward (x - hu)"), c.target);
        double numerical = 0.0, numerical_scale = 0.0;
        for (size_t i = 0; i < v.size(); ++i) {
          const double derivative = constant_infinity(plus[i], minus[i]) ? 0.0 : (plus[i] - minus[i]) / (2.0 * h);
          numerical += v[i] * derivative;
          numerical_scale += std::abs(v[i] * derivative);
        }
        double analytical = 0.0, analytical_scale = 0.0;
        for (index_t j = 0; j < x0.size(); ++j) {
          analytical += jt_v[j] * applied[static_cast<size_t>(j)];
          analytical_scale += std::abs(jt_v[j] * applied[static_cast<size_t>(j)]);
        }
        double error = relative_error(numerical, analytical, std::max(numerical_scale, analytical_scale));
        if (!std::isfinite(numerical) || !std::isfinite(analytical)) error = INFINITY;
        InputAgreement& agreement = report.inputs[k];
        agreement.comparisons += 1;
        if (agreement.worst_location.empty() || error > agreement.worst_relative_error) {
          agreement.worst_relative_error = error;
          agreement.worst_location = fmt::format("direction {}", d);
          agreement.worst_numerical = numerical;
          agreement.worst_analytical = analytical;
        }
      }
    }
    for (InputAgreement& agreement : report.inputs)
      agreement.passed = std::isfinite(agreement.worst_relative_error) && agreement.worst_relative_error <= agreement.bound;
  } catch (const GradcheckEvaluationError& e) {
    report.failure = e.what();
  }
  report.all_passed = report.failure.empty() &&
                      std::all_of(report.inputs.begin(), report.inputs.end(), [](const auto& a) { return a.passed; });
  return report;
}

}  // namespace gnncheck::oracle
