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
#include <optional>
#include <string>
#include <vector>

#include "core/case.h"
#include "core/system.h"
#include "oracle/kink_arguments.h"
#include "oracle/layers/kink_side.h"
#include "oracle/softmax_rows.h"
#include "oracle/subgradients.h"

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

// One axis of a named input or parameter (TargetDef::contracted_axes).
struct TensorAxis {
  std::string tensor;
  int axis = 0;
};

struct TensorSlot {
  std::string name;
  TensorKind kind;
  bool differentiable = true;
  // An index tensor: not a value but a choice per row (the relation of each edge in a typed graph),
  // integers in [0, attrs[index_range]) stored as floating-point numbers (exact in every format).
  // Never differentiable; every transform of values (magnitudes, rounding, jitter, |x|, all-ones)
  // leaves it as it is, and validate_case refuses any other value. Empty: a tensor of values.
  std::string index_range = {};
  bool is_index() const { return !index_range.empty(); }
};

// How generators draw an attribute that no suite or system declaration pins
// (properties/case_attributes.cpp). A width attribute (width_attributes) is drawn from the
// generator's widths whatever this says.
struct AttributeDraw {
  enum class Kind {
    choices,   // one of AttributeSpec::choices where `drawn` is set, else the default
    one_of,    // one of `values`, shrinking toward the first (a value listed twice weighs twice)
    integers,  // uniform in [low, high]
    coin,      // true or false
    heads,     // 1 in a quarter of the cases, 2 up to the generator's max_heads in the rest
  };
  Kind kind = Kind::choices;
  std::vector<AttrValue> values = {};
  std::int64_t low = 0, high = 0;

  static AttributeDraw one_of(std::vector<AttrValue> values) { return {Kind::one_of, std::move(values)}; }
  static AttributeDraw integers(std::int64_t low, std::int64_t high) { return {Kind::integers, {}, low, high}; }
  static AttributeDraw coin() { return {Kind::coin}; }
  static AttributeDraw heads() { return {Kind::heads}; }
};

struct AttributeSpec {
  std::string name;
  AttrValue default_value;
  std::string help;  // one line: meaning and allowed values
  // Every value an enumerated attribute takes (a convention or a mode: norm, source_degree); empty
  // for numbers (any value of the default's type the target's shapes accept) and booleans.
  std::vector<AttrValue> choices = {};
  // Generators draw it from its choices (the ones a system implements) in every case; otherwise
  // they keep the default unless a suite or the system's declaration pins it.
  bool drawn = false;
  // Added to a target that systems were already written against (sage's aggr and project, gin's
  // aggr): its default is what the target computed before. A system outside gnncheck (an adapter,
  // a plugin, a Python callable) that does not declare it is asked the default only — a kernel
  // written before the attribute existed is never held to values it never heard of; declaring it
  // (PROTOCOL.md §2) asks the values declared. gnncheck's own systems implement every value.
  bool opt_in = false;
  // Choices added to an enumerated attribute after systems were written against its others
  // (segment_aggregation's std and mul): a system outside gnncheck that does not declare the
  // attribute is asked the other choices only; declaring it asks the values declared.
  std::vector<AttrValue> opt_in_choices = {};
  AttributeDraw draw = {};
  // What `gnncheck selfcheck` (oracle/selfcheck.cpp) tries besides the defaults: attribute sets that
  // change this attribute (with what it needs to act), on the small graphs and on the large one.
  std::vector<Attributes> selfcheck_variants = {};
  std::vector<Attributes> large_graph_variants = {};
};
// Every choice of `a` but its default, one attribute set each: the selfcheck variants of a mode.
std::vector<Attributes> each_other_choice(const AttributeSpec& a);

// How the tolerance model (checks/tolerance.cpp) bounds a target's outputs and gradients. The
// catalogue declares the rule; checks/ implements each kind once and dispatches on the declaration.
// Derivations: checks/tolerance.md.
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
  // GATv2: the same rounding carried through GATv2's per-channel LeakyReLU into att, weight_src,
  // weight_dst and x (checks/gatv2_floor.cpp).
  gatv2_attention,
  // RGAT: the same rounding carried through z = out_i·q + out_j·k into q, k, weight and x
  // (checks/rgat_floor.cpp).
  rgat_attention,
  // AGNN: the softmax backward's rounding per edge carried to beta through |cos| and to x through
  // the normalization's Jacobian (checks/agnn_floor.h; identical edges, small norms).
  agnn_attention,
  // Fused attention: edge_softmax's backward rounding on the logits' gradient, its ḡ a dot product
  // of grad_y and x (checks/gat_floor.h, attention_logits_floor).
  attention_logits,
  // segment_aggregation's softmax: the softmax backward's rounding per segment and feature, carried to
  // t through |x| and to x through |t| (checks/segment_softmax_floor.h; near one-hot segments of large
  // values). Nothing without t (aggr = var).
  segment_softmax,
};

struct ToleranceRule {
  ToleranceKind kind = ToleranceKind::measured;
  int extra_roundings = 0;  // closed_form: r in n = k + r
  std::string why = {};     // closed_form: what the r roundings are, one line
  std::vector<ToleranceFloor> floors = {};
  // closed_form: how many of a term's roundings happen in the storage format (inputs read, values an
  // unfused implementation stores), the rest of r being the accumulation format's (products, degree
  // factors): what a system that stores in float16 and sums in float32 is held to (checks/tolerance.md,
  // "Storage and accumulation"). Where the counts include the roundings (closed_form_terms, r = 0):
  // the most stored inputs one term reads. Unset: such a system keeps the storage format's bound whole.
  std::optional<int> storage_roundings = {};
  // measured: a softmax inside the forward (GAT's attention), its rows at a case (oracle/softmax_rows.h;
  // attrs with defaults filled in). The measured model is linear in u; in a format coarser than float32
  // a row past the softmax analysis breaks that, and the case has no known bound (checks/softmax.md,
  // "Past the analysis", as for edge_softmax's own rule).
  std::function<std::vector<SoftmaxRow>(const Case& c, const Attributes& attrs)> softmax_rows = {};
  // With softmax_rows: the tensors every one of those logits is positively homogeneous of degree 1 in,
  // jointly (GAT's att_src and att_dst, GATv2's att, RGAT's q and k, AGNN's beta, attention's logits):
  // scaling them all by t > 0 scales every logit by t and moves no kink of the layer off its side. A
  // case past the analysis in a half format is checked with them scaled within it
  // (checks/softmax_past_analysis.h); the catalogue test scales them and reads the rows again.
  std::vector<std::string> logit_scales = {};
};

// One line for `gnncheck list TARGET` and adapters/PROTOCOL.md: the rule in words.
std::string describe(const ToleranceRule& rule);

// What the `gpu` system's implementation of a target reads (gpu/gpu_targets.h derives its target
// sets from these): facts about gpu/'s code, kept here so that a target's facts live in one place.
struct GpuFacts {
  // Reads the graph only through TargetRun's device accessors, so it may run on a graph held only
  // on the device (scale/device_scale_check.h). Audited by reading gpu/op_targets.cpp and
  // gpu/layers/<layer>_layer.cpp: such an implementation never reads run.host_graph or run.host_inputs.
  bool device_resident = false;
  // Reads edge values in CSC order (edge_perm); a device-resident target that does not may run on a
  // graph declared symmetric (DeviceGraph::declare_symmetric_pattern()).
  bool reads_edge_perm = true;
  // The attribute values the GPU reference implements, where fewer than all (core/system.h);
  // empty: every value.
  ImplementedAttributes implemented;
};

struct TargetSpec {
  std::string name;
  bool is_layer = false;
  std::string summary;                  // one line for `gnncheck list`
  std::vector<TensorSlot> inputs;       // parameters are the slots of kind `parameter`
  std::vector<TensorSlot> outputs;
  std::vector<AttributeSpec> attributes;
  // The attribute named `name`, or nullptr.
  const AttributeSpec* find_attribute(const std::string& name) const;
  bool has_attribute(const std::string& name) const { return find_attribute(name) != nullptr; }
  bool needs_square_graph = false;      // e.g. layers that add self-loops
  // What an implementation must compute, for `gnncheck list TARGET`, adapters/PROTOCOL.md's target
  // table and the Python package's gnncheck.describe(): the exact formula (lines in the catalogue's
  // tensor names; row i = destination, col_e = the source of edge e) and every convention a correct
  // implementation has to match (self-loops on non-square graphs, which degree each side uses,
  // empty rows, bias shapes, …), one sentence each.
  std::string formula = {};
  std::vector<std::string> conventions = {};
  ToleranceRule tolerance = {};
  GpuFacts gpu = {};
};

template <class T>
using TensorMapOf = std::map<std::string, DenseTensor<T>>;

// What a known-wrong variant may need beyond the case (WrongVariant::evaluate).
struct VariantContext {
  // The failing system's declared precision, for the one kind of mistake that exists only in it (a
  // softmax overflowing in float32 at logits float64 holds); every other variant ignores it.
  Precision precision = Precision::float64;
  // The case the system evaluated just before this one, where the check is about state
  // (state_interleaved: B's forward); null otherwise.
  const Case* previous = nullptr;
};

// A known-wrong way of computing a target: a mistake published systems shipped, written as the
// wrong computation in float64 (checks/diagnosis.h evaluates every variant of a failing target on
// the counterexample and names the one that reproduces the system's answer). Generic transforms
// (oracle/wrong_variants.h) sit in the target's catalogue entry; the bug replicas of the target
// (adapters/replicas) are variants of their own catalogue.
struct WrongVariant {
  std::string name;         // "transposed_graph_in_backward", or a replica's name
  std::string bug_class;    // the class it belongs to, shared by generic transforms and replicas: "a_for_at"
  std::string description;  // the mistake in words: "backward uses A where Aᵀ is needed (the TC-GNN bug class)"
  // Where it stands in the order of simplicity: generic transforms first (1..99, the simplest
  // mistake lowest), then replicas (100 + their number). When several match, the lowest is named.
  int simplicity = 50;
  // The variant's float64 answer to `c` (outputs, and gradients when c has output gradients);
  // nullopt where it does not apply to this case (its condition does not hold, or it would equal
  // the correct answer by construction).
  std::function<std::optional<Result>(const Case& c, const VariantContext& context)> evaluate;
};

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

// The kinks of a target's forward (oracle/kink_arguments.h): arguments where its backward takes a
// one-sided derivative. Both hooks unset: the target has no kink.
struct KinkHooks {
  // Every kink argument at a case (attrs: the case's attributes with defaults filled in).
  std::function<void(const Case& c, const Attributes& attrs, KinkArguments& k)> arguments = {};
  // The float32 evaluation taking the other one-sided derivative (KinkSide::right) at every kink:
  // the `cpu_float32_right_derivatives` system (oracle/cpu_systems.h).
  EvaluateFn<float> evaluate_f32_right = {};
  // The float64 evaluation with the units of `flips` on the other side of their kinks (the rest
  // on the oracle's): what a correct implementation computes when rounding puts those units across
  // (KinkArguments::units names them; checks/kink_set.h). Unset: no unit can be flipped.
  std::function<EvaluateFn<double>(const layers::KinkFlips& flips)> evaluate_f64_flipped = {};
  // The kinks are ties of a max or min: at one a correct implementation may send the gradient to
  // any tied candidate or split it, and may choose differently from call to call (a race decides).
  // The differential check compares the gradients there with every valid subgradient
  // (TargetDef::subgradients); generators keep such cases, since tie bugs hide there.
  bool ties = false;
  // The outputs whose value, not only its derivative, jumps at the kinks (segment_aggregation's std:
  // 0 up to var = 10⁻⁵, √10⁻⁵ just above): near one either value is valid, and the checks say so.
  std::vector<std::string> jumping_outputs = {};
};

// Dropout drawn per (seed, edge id): with it on, a target computes a function of its edges' ids,
// not only of the graph — relabeling nodes (checks/metamorphic.cpp) or restricting to sampled rows
// (scale/neighbourhood.h) changes the function, and reordering edges within a row keeps it only
// among positions with the same mask (checks/case_transforms.h).
struct DropoutHooks {
  std::string probability_attribute = {};  // the attribute holding the dropout probability; empty: no dropout
  std::string seed_attribute = {};         // the attribute holding the mask's seed
  // The mask of the edge at CSR position `position` (in row `row`) of the case's graph: one flag per
  // element of the edge (per head), true where the element is kept.
  std::function<std::vector<bool>(const Graph& g, const Attributes& attrs, index_t row, index_t position)> mask_at = {};
};

// The whole-graph degrees of its sources that a target reads besides a row's own edges.
enum class SourceDegrees {
  none,
  out_degree,     // each source's out-degree (column length) in the whole graph: symmetric normalization
  own_in_degree,  // each source's own in-degree as a destination (source_degree = in), a row a sample does not carry
};

// What destination row i of a target reads, for `gnncheck scale` (scale/neighbourhood.h restricts a
// case to sampled rows by it; scale/README.md derives it per target). Beyond these, row i reads its
// own edges, their sources' rows and the values on those edges.
struct ReceptiveField {
  // Destination i reads its own features as source i (GIN's (1+ε)·x_i, SAGE's x_i·W_self, GAT's and
  // AGNN's own terms): the neighbourhood numbers the sampled rows as its first sources.
  bool own_features = false;
  // Not empty: the target aggregates over A + I because this boolean attribute is true; the
  // neighbourhood carries the self-loops as explicit edges and sets the attribute to false.
  std::string self_loops_attribute = {};
  SourceDegrees source_degrees = SourceDegrees::none;
};
// Unset: a row's outputs are not a function of a neighbourhood the scale check can restrict to.
using ReceptiveFieldFn = std::function<ReceptiveField(const Attributes& attrs)>;

// The published recipe that trains a two-layer node classifier of a layer: the layer, a nonlinearity,
// the layer again to the classes, and the paper's optimizer settings (200 epochs of Adam). The
// accuracy check (suites/accuracy_task.cpp) trains it through a system and the oracle side by side;
// training/ builds the model and its configuration from these fields, so the catalogue holds the
// recipe while training stays above the oracle in the folder order.
struct AccuracyRecipe {
  std::string source;               // whose recipe ("Kipf & Welling")
  std::int64_t hidden = 16;         // the hidden layer's channels (per head where the layer has heads)
  std::int64_t heads = 1;           // the hidden layer's heads, concatenated; the output layer has 1
  bool elu = false;                 // ELU between the layers (else ReLU)
  std::vector<std::string> frozen;  // parameters the optimizer leaves as initialized (GIN-0's eps)
  double learning_rate = 0.01;
  double weight_decay = 5e-4;
  bool decay_all_layers = false;    // weight decay on every layer's parameters (else the first's)
  double input_dropout = 0.5;       // on the input features
  double hidden_dropout = 0.5;      // on the hidden activations
  double attention_dropout = 0.0;   // inside the layer, where it takes a dropout (DropoutHooks)
};

struct TargetDef : TargetEntry {
  TargetSpec spec;
  ShapesFn input_shapes;      // every input and parameter
  ShapesFn output_shapes;     // every output
  EvaluateFn<double> evaluate_f64;
  EvaluateFn<float> evaluate_f32;
  KinkHooks kinks = {};
  DropoutHooks dropout = {};
  ReceptiveFieldFn receptive_field = {};
  std::optional<AccuracyRecipe> accuracy = {};  // set: the accuracy check trains a model of this layer
  // The closed form's Σ|terms| and term counts per element (ToleranceKind::closed_form), where the
  // target evaluated on |inputs| and on all-ones inputs does not give them: a max selects by sign, a
  // difference's or quotient's derivative has one. The counts include each term's roundings (the
  // rule's extra_roundings is then 0). Unset: those two evaluations.
  struct ClosedFormTerms {
    Result abs_sums, term_counts;
  };
  std::function<ClosedFormTerms(const Case& c, double unit_roundoff)> closed_form_terms = {};
  // Every valid gradient of a case whose kinks are ties (KinkHooks::ties), at the declared
  // precision's unit roundoff (oracle/subgradients.h).
  std::function<SubgradientChoices(const Case& c, double unit_roundoff)> subgradients = {};
  // The inputs a case's attributes make divisors (gspmm's e with message = div): generators keep
  // their values at least 1/2 from 0, where the quotient is finite and its derivative modest.
  std::function<std::vector<std::string>(const Attributes& attrs)> divisors = {};
  // Per output and gradient element, the largest magnitude a correct implementation's intermediate
  // values may reach where that exceeds the result's own: a product's partial products, in any
  // order, reach Π max(1, |x|) while the product itself may be small or 0. The numerics check holds
  // an element to a finite answer only where this too is representable. Unset, or nullopt for a
  // case: the results' own magnitudes.
  std::function<std::optional<Result>(const Case& c)> intermediate_magnitudes = {};
  // Per output and gradient element, Σ|terms| of a computation that cancels where f(|inputs|) does
  // not show it: var = mean(x²) − mean(x)² is var(|x|) on |x|, 0 for a single value, while its
  // terms are x² (an implementation that fuses the subtraction into an FMA leaves x²'s rounding
  // there). The measured model's γ term reads the larger of this and |f(|inputs|)|. Unset, or
  // nullopt for a case: f(|inputs|) alone.
  std::function<std::optional<Result>(const Case& c)> term_magnitudes = {};
  // Axes that only the target's projections contract — a layer's input features: x's columns and
  // the weights' `in` axis —, one permutation applied to all of them together changes no output,
  // only the order of every dense sum over them. The measured model's row-shuffled evaluation
  // permutes them too, so that the float32 oracle's error samples a second order of those sums (its
  // own order's error on PyG's RGAT was a twentieth of CUDA's and of the typical one: docs/campaigns.md).
  // Empty: none. Gradients of these tensors are permuted back before they are compared.
  std::vector<TensorAxis> contracted_axes = {};
  // Its known-wrong variants (WrongVariant above): the entry's own, then the generic transforms
  // that apply to its spec (oracle/wrong_variants.h), added when the catalogue is assembled.
  std::vector<WrongVariant> wrong_variants = {};
};

// The slot of an input, parameter or output by name; nullptr for a name the target does not have.
const TensorSlot* find_slot(const TargetSpec& spec, const std::string& name);
// The index tensors a target's case holds (TensorSlot::is_index), with the number of values each may
// take for these attributes: {"edge_type", 3}.
std::vector<std::pair<std::string, std::int64_t>> index_tensors(const TargetSpec& spec, const Attributes& attrs);

// The feature-width attributes of a target (those named like `features`: features, in_features,
// hidden_features, out_features), in spec order — what the generators draw path widths into and
// the shape replicas size.
std::vector<std::string> width_attributes(const TargetSpec& spec);

// The catalogue: ops first, then layers, each list in a fixed order.
const std::vector<TargetDef>& all_targets();
// Throws InputError "unknown target 'x'; known targets: …". A hash lookup: call it freely.
const TargetDef& find_target(const std::string& name);
// The same lookup for a name that may not be a target (a selector such as "all"): nullptr then.
const TargetDef* lookup_target(const std::string& name);
// The entry of c's target: the one its maker resolved (Case::entry), or by name where none was (a
// case built by hand) or where its name has since changed; InputError for an unknown name.
const TargetDef& entry_of(const Case& c);
// Makes c a case of `def`: its name and its entry.
void set_target(Case& c, const TargetDef& def);
// Makes c a case of the target named `name` (read from a file or a pipe): its entry where the
// catalogue has the name; an unknown name stays for validate_case to refuse with the known ones.
void set_target_by_name(Case& c, const std::string& name);

// The dropout probability of a case of `def` (attrs with defaults filled in); 0 for a target without dropout.
double dropout_probability(const TargetDef& def, const Attributes& attrs);

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

// Checks that `c` is a valid case of `def`, the one validation every system that evaluates cases
// shares (the oracle, the GPU systems, the adapter protocol): a graph, square where the target
// needs one; every input and parameter of input_shapes() present (in c.inputs or c.parameters)
// with its shape; and, when the case has output gradients, one per output shaped as the output.
// Returns the case's attributes with defaults filled in; throws InputError naming what is wrong.
Attributes validate_case(const TargetDef& def, const Case& c);

// Evaluates a case with the oracle's code in `precision` (float64 or float32). Validates the
// case first (validate_case) and returns Status::error with the reason when it is not valid.
Result evaluate(const Case& c, Precision precision = Precision::float64);
// The float32 evaluation of a target with kinks taking the other one-sided derivative at each
// (KinkHooks::evaluate_f32_right); evaluate(c, float32) for a target without.
Result evaluate_f32_right_of_kinks(const Case& c);
// The float64 evaluation with the kink units of `flips` on their other side
// (KinkHooks::evaluate_f64_flipped); an error Result for a target that has none.
Result evaluate_with_flipped_kinks(const Case& c, const layers::KinkFlips& flips);

// The `source_degree` and `zero_degree` attributes that `normalized_spmm` and `gcn` share (defined in
// op_targets.cpp).
AttributeSpec source_degree_attribute();
AttributeSpec zero_degree_attribute();
AttributeSpec duplicate_edges_attribute();  // edge_softmax: separate | coalesced (oracle/edge_softmax.h)

// The lists the catalogue is assembled from (op_targets.cpp and layer_targets.cpp, each layer's entry in <layer>_target.cpp).
std::vector<TargetDef> op_targets();
TargetDef gspmm_target();   // gspmm_target.cpp, one of op_targets()
TargetDef gsddmm_target();  // gsddmm_target.cpp, one of op_targets()
TargetDef attention_target();  // attention_target.cpp, one of op_targets()
TargetDef segment_reduce_target();  // segment_reduce_target.cpp, one of op_targets()
TargetDef segment_aggregation_target();  // segment_aggregation_target.cpp, one of op_targets()
TargetDef gather_mm_target();  // gather_mm_target.cpp, one of op_targets()
TargetDef typed_linear_target();  // typed_linear_target.cpp, one of op_targets()
TargetDef segment_mm_target();  // segment_mm_target.cpp, one of op_targets()
std::vector<TargetDef> layer_targets();
TargetDef gcn_target();    // gcn_target.cpp, one of layer_targets()
TargetDef gin_target();    // gin_target.cpp, one of layer_targets()
TargetDef gine_target();   // gin_target.cpp, one of layer_targets()
TargetDef gat_target();    // gat_target.cpp, one of layer_targets()
TargetDef gatv2_target();  // gatv2_target.cpp, one of layer_targets()
TargetDef sage_target();   // sage_target.cpp, one of layer_targets()
TargetDef agnn_target();   // agnn_target.cpp, one of layer_targets()
TargetDef rgcn_target();   // rgcn_target.cpp, one of layer_targets()
TargetDef rgat_target();   // rgat_target.cpp, one of layer_targets()

}  // namespace gnncheck::oracle
