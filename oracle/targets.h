// gnncheck/oracle/targets.h — the catalogue of targets (ops and layers) and their oracle evaluation.
//
// Every op and layer gnncheck can check is a TargetDef: its spec (named inputs, parameters and
// outputs, which of them are differentiable, the attributes it accepts), a function giving the
// shape of every input for a graph and attributes (generators size tensors with it), and the
// oracle's evaluation written once over the scalar type — float64 is the oracle, float32 is the
// same code in single precision (a second, correct implementation for the tolerance model).
//
//   const auto& def = gnncheck::oracle::find_target("sddmm_dot");
//   gnncheck::Result r = gnncheck::oracle::evaluate(c, gnncheck::Precision::float64);
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/case.h"
#include "core/system.h"

namespace gnncheck::oracle {

// Where an input lives, which decides how relabeling and edge reordering act on it.
enum class TensorKind {
  dst_nodes,  // [n_dst, ...]
  src_nodes,  // [n_src, ...]
  edges,      // [E, ...] in edge-id order
  edges_csc,  // [E, ...] in CSC order (position p holds edge edge_perm[p]): eshuffle's output
  parameter,  // learnable weights, independent of the graph
};
std::string_view to_string(TensorKind k);

struct TensorSlot {
  std::string name;
  TensorKind kind;
  bool differentiable = true;
};

struct AttributeSpec {
  std::string name;
  AttrValue default_value;
  std::string help;  // one line: meaning and allowed values
  // Every value an enumerated attribute takes (a convention or a mode: norm, source_degree); empty
  // for numbers (any value of the default's type the target's shapes accept) and booleans.
  std::vector<AttrValue> choices = {};
};

// How the tolerance model (checks/tolerance.cpp) bounds a target's outputs and gradients. The
// catalogue declares the rule; checks/ implements each kind once and dispatches on the declaration.
// Derivations: checks/README.md, "The tolerance model".
enum class ToleranceKind {
  // 2·γ_(k+r)·Σ|a||b| per element: a sum of k products with nonnegative structural coefficients,
  // each term seeing r further roundings.
  closed_form,
  // A multiple of the error the oracle's own code makes in float32 in three summation orders, plus
  // a normwise γ floor: targets without a closed form.
  measured,
  // Softmax over each destination row: the interval α_k·e^−Λ − floor ≤ α̂_k ≤ α_k·e^Λ + floor with
  // Λ from the row's length and largest logit; the logits gradient relative to α_k·(|ᾱ_k| + Σ_row α|ᾱ|).
  softmax_per_row,
};
std::string_view to_string(ToleranceKind k);

// A term a rule adds for one target beyond its kind's own.
enum class ToleranceFloor {
  // GAT: edge_softmax's backward rounding propagated through the layer into att_src, att_dst,
  // weight and x (near one-hot rows, where the softmax gradient cancels).
  gat_attention,
  // AGNN: the softmax backward's rounding per edge carried to beta through |cos| and to x through
  // the normalization's Jacobian (checks/agnn_floor.h; identical edges, small norms).
  agnn_attention,
};

struct ToleranceRule {
  ToleranceKind kind = ToleranceKind::measured;
  int extra_roundings = 0;  // closed_form: r in n = k + r
  std::string why = {};     // closed_form: what the r roundings are, one line
  std::vector<ToleranceFloor> floors = {};
};

// What a failing check can add about the way a target was computed wrongly.
enum class FailureDiagnosis {
  none,
  // normalized_spmm: does the gradient match the backward normalized on the wrong side (the
  // forward's order of D_dst and D_src)?
  normalization_side,
};

// One line for `gnncheck list TARGET` and adapters/PROTOCOL.md: the rule in words.
std::string describe(const ToleranceRule& rule);

struct TargetSpec {
  std::string name;
  bool is_layer = false;
  std::string summary;                  // one line for `gnncheck list`
  std::vector<TensorSlot> inputs;       // parameters are the slots of kind `parameter`
  std::vector<TensorSlot> outputs;
  std::vector<AttributeSpec> attributes;
  bool needs_square_graph = false;      // e.g. layers that add self-loops
  // What an implementation must compute, for `gnncheck list TARGET`, adapters/PROTOCOL.md's target
  // table and the Python package's gnncheck.describe(): the exact formula (lines in the catalogue's
  // tensor names; row i = destination, col_e = the source of edge e) and every convention a correct
  // implementation has to match (self-loops on non-square graphs, which degree each side uses,
  // empty rows, bias shapes, …), one sentence each.
  std::string formula = {};
  std::vector<std::string> conventions = {};
  ToleranceRule tolerance = {};
  FailureDiagnosis diagnosis = FailureDiagnosis::none;
};

template <class T>
using TensorMapOf = std::map<std::string, DenseTensor<T>>;

template <class T>
struct Evaluation {
  TensorMapOf<T> outputs;
  TensorMapOf<T> gradients;  // by input/parameter name; only when grad_outputs were given
};

// inputs holds every input and parameter by name; attributes already have defaults filled in.
// grad_outputs empty = forward only.
template <class T>
using EvaluateFn = std::function<Evaluation<T>(const Graph& g, const Attributes& attrs, const TensorMapOf<T>& inputs,
                                                const TensorMapOf<T>& grad_outputs)>;

using ShapesFn = std::function<std::map<std::string, std::vector<index_t>>(const Graph& g, const Attributes& attrs)>;

struct TargetDef {
  TargetSpec spec;
  ShapesFn input_shapes;      // every input and parameter
  ShapesFn output_shapes;     // every output
  EvaluateFn<double> evaluate_f64;
  EvaluateFn<float> evaluate_f32;
};

// The catalogue: ops first, then layers, each list in a fixed order.
const std::vector<TargetDef>& all_targets();
// Throws InputError "unknown target 'x'; known targets: …".
const TargetDef& find_target(const std::string& name);

// Attributes with every unset attribute of the target's spec filled from its default; an
// attribute the target does not know is an InputError naming it and the accepted ones.
Attributes with_defaults(const TargetSpec& spec, const Attributes& given);

// Checks what a system declares it implements of a target's attributes (core/system.h): each a known
// attribute of the target with at least one value, every value of the attribute's type (an integer
// stands for a number) and, for an enumerated attribute, one of its choices. Returns the declaration
// with values of the attribute's own type; throws InputError naming the attribute and what was expected.
ImplementedAttributes validated_implemented_attributes(const TargetSpec& spec, const ImplementedAttributes& declared);
// The catalogue values of `attribute` that a declaration leaves out, for reports ("not covered: out");
// empty for an attribute without enumerated choices or booleans.
std::vector<AttrValue> values_not_implemented(const AttributeSpec& attribute, const std::vector<AttrValue>& implemented);
// One line for reports and `gnncheck list`: "source_degree ∈ {in}, heads ∈ {1, 2}".
std::string describe(const ImplementedAttributes& implemented);

// Evaluates a case with the oracle's code in `precision` (float64 or float32). Validates the
// case first (graph present, every input present with the expected shape, grad_outputs shaped as
// the outputs) and returns Status::error with the reason when it is not valid.
Result evaluate(const Case& c, Precision precision = Precision::float64);

// The `source_degree` and `zero_degree` attributes that `normalized_spmm` and `gcn` share (defined in
// op_targets.cpp).
AttributeSpec source_degree_attribute();
AttributeSpec zero_degree_attribute();

// The lists the catalogue is assembled from (op_targets.cpp and layer_targets.cpp).
std::vector<TargetDef> op_targets();
std::vector<TargetDef> layer_targets();

}  // namespace gnncheck::oracle
