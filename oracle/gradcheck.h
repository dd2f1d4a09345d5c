// gnncheck/oracle/gradcheck.h — finite-difference verification of a backward pass in float64.
//
// The oracle is trusted only because its backward agrees with central finite differences of its
// own forward. The pieces are separate and plainly named, and generic over any float64 evaluation
// of a Case (the oracle, or any System declaring float64), so a check can run them on a system:
//   numerical_jacobian     central differences of the forward, one input element at a time;
//   analytical_jacobian    the backward (VJP) with one-hot output gradients, one output element at a time;
//   compare_jacobians      worst relative disagreement of the two, and where it happened;
//   check_full_jacobian    all of the above for every differentiable input (small cases);
//   check_random_directions  vᵀ·J·u by differences vs (Jᵀv)ᵀ·u by backward (large cases).
//
//   auto eval = [](const gnncheck::Case& c) { return gnncheck::oracle::evaluate(c); };
//   const auto& def = gnncheck::oracle::find_target("spmm_ve");
//   auto c = gnncheck::oracle::make_random_case(def, graph, {}, /*seed=*/7);
//   gnncheck::oracle::GradcheckReport r = gnncheck::oracle::check_full_jacobian(eval, c, def.spec);
//   r.all_passed;  r.inputs[0].worst_relative_error;  r.inputs[0].bound;
//
// Step sizes and the agreement bound, and why these numbers: oracle/README.md, "Gradcheck".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/case.h"
#include "oracle/targets.h"

namespace gnncheck::oracle {

// Any float64 evaluation of a case: forward only when grad_outputs is empty, else with gradients.
using CaseEvaluator = std::function<Result(const Case&)>;

inline constexpr double kGradcheckStep = 0x1p-18;   // relative step h (see above)
inline constexpr double kGradcheckBound = 0x1p-20;  // agreement bound on the relative error (see above)
inline constexpr double kGradcheckDirectionStep = 0x1p-26;  // step along random directions (see above)
inline constexpr double kGradcheckRoundings = 64;  // roundings of the largest output a forward may carry (absolute floor)
// A step that would cross a kink (oracle/kink_arguments.h) is halved up to this many times; a column
// or direction still crossing one is left out and counted (oracle/README.md, "Kinks").
inline constexpr int kGradcheckKinkHalvings = 8;

struct GradcheckOptions {
  double step = kGradcheckStep;                     // full Jacobian, one element at a time
  double direction_step = kGradcheckDirectionStep;  // random directions, all elements at once
  double bound = kGradcheckBound;
  int directions = 3;          // random directions per input (check_random_directions)
  std::uint64_t seed = 1;      // seed of the directions u and v
};

// d(outputs)/d(input): rows are the target's outputs flattened and concatenated in spec order,
// columns the input's elements in row-major order.
struct Jacobian {
  std::string input;
  std::vector<std::string> output_names;
  std::vector<index_t> output_offsets;  // first row of each output; a final entry = rows
  index_t rows = 0;
  index_t cols = 0;
  std::vector<double> values;  // rows × cols, row-major
  // Numerical Jacobians only: per column, the smallest derivative the differences resolve (the
  // absolute floor above); empty for analytical ones.
  std::vector<double> column_resolution;
  // Numerical Jacobians only: per column, 1 where every step tried crossed a kink (the column is
  // left out of the comparison); empty when nothing was left out.
  std::vector<char> column_crosses_kink;
  double at(index_t row, index_t col) const { return values[static_cast<size_t>(row * cols + col)]; }
  // "y[3]" for row 3 of output y (flat index within that output).
  std::string row_label(index_t row) const;
};

// How well the backward of one differentiable input agreed with finite differences.
struct InputAgreement {
  std::string input;
  std::string method;             // "full Jacobian" or "random directions"
  index_t comparisons = 0;        // Jacobian elements or directions compared
  index_t left_out_at_kinks = 0;  // Jacobian columns or directions whose every step crossed a kink
  double worst_relative_error = 0.0;
  double bound = 0.0;
  bool passed = false;            // nothing over the bound; says nothing when comparisons == 0 (callers
                                  // count those as no case: checks/gradient.cpp, oracle/selfcheck.cpp)
  std::string worst_location;     // "d y[3] / d x[7]" or "direction 2"; empty when nothing compared
  double worst_numerical = 0.0;   // the two values at worst_location
  double worst_analytical = 0.0;
};

struct GradcheckReport {
  std::string target;
  std::vector<InputAgreement> inputs;  // one per differentiable input or parameter the case has, in spec order
  std::string failure;                 // set when an evaluation failed (then all_passed is false)
  bool all_passed = false;
};

// Raised by the pieces below when the evaluator answers with a non-ok status or with missing or
// misshapen tensors; the check_* functions turn it into GradcheckReport::failure.
class GradcheckEvaluationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Central differences: 2·(input size) forward evaluations, more where a step crosses a kink.
Jacobian numerical_jacobian(const CaseEvaluator& evaluate, const Case& c, const TargetSpec& spec,
                            const std::string& input, double step = kGradcheckStep);
// One backward evaluation per output element, with a one-hot output gradient; returns one
// Jacobian per requested input (all from the same evaluations).
std::vector<Jacobian> analytical_jacobians(const CaseEvaluator& evaluate, const Case& c, const TargetSpec& spec,
                                           const std::vector<std::string>& inputs);
Jacobian analytical_jacobian(const CaseEvaluator& evaluate, const Case& c, const TargetSpec& spec,
                             const std::string& input);
// Throws InternalError when the two Jacobians do not have the same input and shape.
InputAgreement compare_jacobians(const Jacobian& numerical, const Jacobian& analytical, double bound);

// The names of the spec's differentiable inputs and parameters, in spec order.
std::vector<std::string> differentiable_inputs(const TargetSpec& spec);
// The same, without those the case leaves out (an optional parameter the attributes switch off, such
// as a layer's bias with bias = false). check_full_jacobian and check_random_directions use this.
std::vector<std::string> differentiable_inputs(const TargetSpec& spec, const Case& c);

GradcheckReport check_full_jacobian(const CaseEvaluator& evaluate, const Case& c, const TargetSpec& spec,
                                    const GradcheckOptions& options = {});
GradcheckReport check_random_directions(const CaseEvaluator& evaluate, const Case& c, const TargetSpec& spec,
                                        const GradcheckOptions& options = {});

}  // namespace gnncheck::oracle
