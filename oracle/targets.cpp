#include "oracle/targets.h"

#include "core/parallel.h"
#include "oracle/wrong_variants.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gnncheck::oracle {

std::string_view to_string(TensorKind k) {
  switch (k) {
    case TensorKind::dst_nodes: return "dst_nodes";
    case TensorKind::src_nodes: return "src_nodes";
    case TensorKind::edges: return "edges";
    case TensorKind::edges_csc: return "edges_csc";
    case TensorKind::parameter: return "parameter";
  }
  return "unknown";
}

std::string_view to_string(ToleranceKind k) {
  switch (k) {
    case ToleranceKind::closed_form: return "closed_form";
    case ToleranceKind::measured: return "measured";
    case ToleranceKind::softmax_per_row: return "softmax_per_row";
  }
  return "unknown";
}

std::string describe(const ToleranceRule& rule) {
  std::string out;
  switch (rule.kind) {
    case ToleranceKind::closed_form:
      out = rule.extra_roundings == 0
                ? fmt::format("closed form: 2·γ_k·Σ|terms| per element, k = the terms summed into it plus the roundings "
                              "of one term: {}", rule.why)
                : fmt::format("closed form: 2·γ_(k+{})·Σ|a||b| per element, k = the terms summed into it, r = {}: {}",
                              rule.extra_roundings, rule.extra_roundings, rule.why);
      break;
    case ToleranceKind::measured:
      out = "measured: 16 × the float32 oracle's largest error over three summation orders (CSR, rows reversed, rows "
            "shuffled) + 2·γ_(d+w+4)·(|y| + rms y + |f(|inputs|)| + rms answer)";
      break;
    case ToleranceKind::softmax_per_row:
      out = "per row, relative to alpha, an interval: α_k·e^−Λ − φ ≤ α̂_k ≤ α_k·e^Λ + φ, Λ = N·u/(1 − ρ), "
            "N = 6d + 30L + 9·ln d + 12, ρ = (6 + 4.8L + 2.4·ln d)·u the largest single rounding (d = the row's length, "
            "L = its largest |logit|; any summation order, running-max rescaling, fast exp; linear in d, so an all-zero "
            "row fails at any length up to ≈ 1.9·10^8 float32 edges), φ from the format's smallest normal (larger "
            "where a term may underflow); the logits gradient within α_k·(|ᾱ_k| + Σ_row α|ᾱ|)·β + φ·(…), "
            "β = e^(2Λ + (d+8)·u) − 1; rows where the analysis gives no bound (ρ > 1/2) fall back to the measured model";
      break;
  }
  for (ToleranceFloor f : rule.floors) {
    if (f == ToleranceFloor::gat_attention)
      out += "; plus edge_softmax's backward rounding propagated through the layer into att_src, att_dst, weight and x";
    if (f == ToleranceFloor::gatv2_attention)
      out += "; plus edge_softmax's backward rounding propagated through each channel's LeakyReLU into att, weight_src, "
             "weight_dst and x";
    if (f == ToleranceFloor::rgat_attention)
      out += "; plus edge_softmax's backward rounding propagated through the logits q·out_i + k·out_j into q, k, weight "
             "and x";
    if (f == ToleranceFloor::attention_logits)
      out += "; plus edge_softmax's backward rounding on the logits' gradient, γ_(d+C+4)·α_k·(G_k + Σ_row α·G) with "
             "G_k = Σ_c |grad_y[row_k]|·|x[col_k]| (near one-hot rows, where it cancels)";
    if (f == ToleranceFloor::segment_softmax)
      out += "; with aggr = softmax, plus the softmax backward's rounding per segment and feature, γ_(d+4)·α_k·(|G_k| + "
             "Σ α·|G|) with G_k = grad_y·x[k], carried to t through |x| and to x through |t| (near one-hot segments)";
    if (f == ToleranceFloor::agnn_attention)
      out += "; plus the softmax backward's rounding per edge carried to beta through |cos| and to x through the "
             "normalization's Jacobian (growing as 1/‖x_j‖ near zero rows)";
  }
  if (rule.softmax_rows) {
    std::string scales;
    for (const std::string& name : rule.logit_scales) scales += (scales.empty() ? "" : ", ") + name;
    out += "; in a format coarser than float32, a case with a softmax row inside past the analysis (ρ = (6 + 4.8·L + "
           "2.4·ln d)·u > 1/2, L = the row's largest |logit|) has no bound, and is checked with " + scales +
           " scaled by the power of two that brings L·u to 2^-6 or below, well within it";
  }
  return out;
}

std::vector<Attributes> each_other_choice(const AttributeSpec& a) {
  std::vector<Attributes> variants;
  for (const AttrValue& choice : a.choices)
    if (choice != a.default_value) variants.push_back({{a.name, choice}});
  return variants;
}

std::vector<std::string> width_attributes(const TargetSpec& spec) {
  std::vector<std::string> widths;
  for (const auto& a : spec.attributes)
    if (a.name.find("features") != std::string::npos) widths.push_back(a.name);
  return widths;
}

const TensorSlot* find_slot(const TargetSpec& spec, const std::string& name) {
  for (const auto* slots : {&spec.inputs, &spec.outputs})
    for (const TensorSlot& slot : *slots)
      if (slot.name == name) return &slot;
  return nullptr;
}

std::vector<std::pair<std::string, std::int64_t>> index_tensors(const TargetSpec& spec, const Attributes& attrs) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const TensorSlot& slot : spec.inputs)
    if (slot.is_index()) out.emplace_back(slot.name, attrs.get_int(slot.index_range));
  return out;
}

const std::vector<TargetDef>& all_targets() {
  static const std::vector<TargetDef> targets = [] {
    std::vector<TargetDef> all = op_targets();
    for (auto& def : layer_targets()) all.push_back(std::move(def));
    for (auto& def : all) {  // the entry's own variants, then the generic ones, simplest first
      for (auto& v : generic_wrong_variants(def.spec)) def.wrong_variants.push_back(std::move(v));
      std::stable_sort(def.wrong_variants.begin(), def.wrong_variants.end(),
                       [](const WrongVariant& a, const WrongVariant& b) { return a.simplicity < b.simplicity; });
    }
    return all;
  }();
  return targets;
}

const TargetDef* lookup_target(const std::string& name) {
  static const std::unordered_map<std::string, const TargetDef*> by_name = [] {
    std::unordered_map<std::string, const TargetDef*> index;
    for (const auto& def : all_targets()) index.emplace(def.spec.name, &def);
    return index;
  }();
  const auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : it->second;
}

const TargetDef& find_target(const std::string& name) {
  if (const TargetDef* def = lookup_target(name)) return *def;
  std::vector<std::string> names;
  for (const auto& def : all_targets()) names.push_back(def.spec.name);
  throw InputError(fmt::format("unknown target '{}'; known targets: {}", name, fmt::join(names, ", ")));
}

const TargetDef& entry_of(const Case& c) {
  if (c.entry) {
    const auto& def = static_cast<const TargetDef&>(*c.entry);
    if (def.spec.name == c.target) return def;
  }
  return find_target(c.target);
}

void set_target(Case& c, const TargetDef& def) {
  c.target = def.spec.name;
  c.entry = &def;
}

void set_target_by_name(Case& c, const std::string& name) {
  c.target = name;
  c.entry = nullptr;
  if (const TargetDef* def = lookup_target(name)) set_target(c, *def);
}

double dropout_probability(const TargetDef& def, const Attributes& attrs) {
  return def.dropout.probability_attribute.empty() ? 0.0 : attrs.get_double(def.dropout.probability_attribute);
}

Attributes with_defaults(const TargetSpec& spec, const Attributes& given) {
  Attributes out;
  for (const auto& a : spec.attributes) out.set(a.name, a.default_value);
  for (const auto& [name, value] : given.values()) {
    bool known = false;
    for (const auto& a : spec.attributes) known = known || a.name == name;
    if (!known) {
      std::vector<std::string> names;
      for (const auto& a : spec.attributes) names.push_back(a.name);
      throw InputError(fmt::format("target '{}' has no attribute '{}'; its attributes: {}", spec.name, name,
                                   names.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(names, ", "))));
    }
    out.set(name, value);
  }
  return out;
}


const AttributeSpec* TargetSpec::find_attribute(const std::string& name) const {
  for (const auto& a : attributes)
    if (a.name == name) return &a;
  return nullptr;
}

ImplementedAttributes validated_implemented_attributes(const TargetSpec& spec, const ImplementedAttributes& declared) {
  ImplementedAttributes out;
  for (const auto& [name, values] : declared) {
    const AttributeSpec* attribute = spec.find_attribute(name);
    if (!attribute) {
      std::vector<std::string> names;
      for (const auto& a : spec.attributes) names.push_back(a.name);
      throw InputError(fmt::format("target '{}' has no attribute '{}'; its attributes: {}", spec.name, name,
                                   names.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(names, ", "))));
    }
    if (values.empty())
      throw InputError(fmt::format("target '{}', attribute '{}': the values implemented are empty (leave the attribute out "
                                   "to implement every value)",
                                   spec.name, name));
    std::vector<AttrValue>& kept = out[name];
    for (const AttrValue& v : values) {
      AttrValue typed = v;
      // An integer is a number too: "negative_slope": [1] means 1.0.
      if (std::holds_alternative<double>(attribute->default_value) && std::holds_alternative<std::int64_t>(v))
        typed = static_cast<double>(std::get<std::int64_t>(v));
      if (typed.index() != attribute->default_value.index())
        throw InputError(fmt::format("target '{}', attribute '{}': expected {} (like its default {}), got {}", spec.name, name,
                                     type_name(attribute->default_value), to_plain_string(attribute->default_value), gnncheck::to_string(v)));
      if (!attribute->choices.empty() &&
          std::find(attribute->choices.begin(), attribute->choices.end(), typed) == attribute->choices.end()) {
        std::vector<std::string> choices;
        for (const auto& c : attribute->choices) choices.push_back(to_plain_string(c));
        throw InputError(fmt::format("target '{}', attribute '{}': '{}' is not one of its values ({})", spec.name, name,
                                     to_plain_string(typed), fmt::join(choices, ", ")));
      }
      if (std::find(kept.begin(), kept.end(), typed) == kept.end()) kept.push_back(std::move(typed));
    }
  }
  return out;
}

std::vector<AttrValue> values_not_implemented(const AttributeSpec& attribute, const std::vector<AttrValue>& implemented) {
  std::vector<AttrValue> all = attribute.choices;
  if (std::holds_alternative<bool>(attribute.default_value)) all = {AttrValue(false), AttrValue(true)};
  std::vector<AttrValue> out;
  for (const auto& v : all)
    if (std::find(implemented.begin(), implemented.end(), v) == implemented.end()) out.push_back(v);
  return out;
}

std::string describe(const ImplementedAttributes& implemented) {
  std::vector<std::string> parts;
  for (const auto& [name, values] : implemented) {
    std::vector<std::string> shown;
    for (const auto& v : values) shown.push_back(to_plain_string(v));
    parts.push_back(fmt::format("{} ∈ {{{}}}", name, fmt::join(shown, ", ")));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

namespace {

// The values of t as To: element by element, in parallel (a large case's feature matrix is 10^8
// values, and each evaluation converts its inputs and, in float32, its results).
template <class To, class From>
DenseTensor<To> converted(const DenseTensor<From>& t) {
  DenseTensor<To> out(t.shape());
  const index_t n = t.size();
#pragma omp parallel for schedule(static) if (worth_parallel(n))
  for (index_t i = 0; i < n; ++i) out[i] = static_cast<To>(t[i]);
  return out;
}

// Runs `evaluate` on a case validate_case accepted, its inputs converted to T.
template <class T>
Result evaluate_in(const TargetDef& def, const EvaluateFn<T>& evaluate, const Case& c, const Attributes& attrs) {
  const Graph& g = *c.graph;
  TensorMapOf<T> inputs;
  for (const auto& [name, shape] : def.input_shapes(g, attrs)) {
    const TensorMap& from = c.inputs.count(name) ? c.inputs : c.parameters;
    inputs.emplace(name, converted<T>(from.at(name)));
  }
  TensorMapOf<T> grad_outputs;
  if (!c.grad_outputs.empty())
    for (const auto& [name, shape] : def.output_shapes(g, attrs)) grad_outputs.emplace(name, converted<T>(c.grad_outputs.at(name)));
  const auto start = std::chrono::steady_clock::now();
  Evaluation<T> ev = evaluate(g, attrs, inputs, grad_outputs);
  Result r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // float64 results move into the Result (a layer's input gradient can be the whole feature matrix).
  auto to_result = [](DenseTensor<T>& t) {
    if constexpr (std::is_same_v<T, double>) return std::move(t);
    else return converted<double>(t);
  };
  for (auto& [name, t] : ev.outputs) r.outputs.emplace(name, to_result(t));
  for (auto& [name, t] : ev.gradients) r.gradients.emplace(name, to_result(t));
  return r;
}

}  // namespace

Attributes validate_case(const TargetDef& def, const Case& c) {
  if (!c.graph) throw InputError("case has no graph");
  const Graph& g = *c.graph;
  if (def.spec.needs_square_graph && !g.is_square())
    throw InputError(fmt::format("target '{}' needs a square graph; got {}", def.spec.name, g.summary()));
  Attributes attrs = with_defaults(def.spec, c.attributes);
  for (const auto& [name, shape] : def.input_shapes(g, attrs)) {
    const TensorMap& from = c.inputs.count(name) ? c.inputs : c.parameters;
    auto it = from.find(name);
    if (it == from.end()) throw InputError(fmt::format("target '{}': input '{}' is missing", def.spec.name, name));
    require_shape(it->second, shape, fmt::format("target '{}', input '{}'", def.spec.name, name));
  }
  for (const auto& [name, count] : index_tensors(def.spec, attrs)) {
    const TensorMap& from = c.inputs.count(name) ? c.inputs : c.parameters;
    const auto it = from.find(name);
    if (it == from.end()) continue;  // switched off by the attributes
    const auto& values = it->second.values();
    for (std::size_t k = 0; k < values.size(); ++k)
      if (!(values[k] >= 0 && values[k] < static_cast<double>(count) && values[k] == std::floor(values[k])))
        throw InputError(fmt::format("target '{}', input '{}': element {} is {:.17g}; an index tensor holds integers in "
                                     "[0, {}) ({} = {})",
                                     def.spec.name, name, k, values[k], count, find_slot(def.spec, name)->index_range, count));
  }
  if (!c.grad_outputs.empty()) {
    for (const auto& [name, shape] : def.output_shapes(g, attrs)) {
      auto it = c.grad_outputs.find(name);
      if (it == c.grad_outputs.end())
        throw InputError(fmt::format("target '{}': gradient of output '{}' is missing", def.spec.name, name));
      require_shape(it->second, shape, fmt::format("target '{}', gradient of output '{}'", def.spec.name, name));
    }
  }
  return attrs;
}

Result evaluate_f32_right_of_kinks(const Case& c) {
  Result r;
  try {
    if (!c.graph) throw InputError("case has no graph");
    const TargetDef& def = entry_of(c);
    const Attributes attrs = validate_case(def, c);
    return evaluate_in<float>(def, def.kinks.evaluate_f32_right ? def.kinks.evaluate_f32_right : def.evaluate_f32, c, attrs);
  } catch (const InputError& e) {
    r.status = Status::error;
    r.message = e.what();
  }
  return r;
}

Result evaluate_with_flipped_kinks(const Case& c, const layers::KinkFlips& flips) {
  Result r;
  try {
    if (!c.graph) throw InputError("case has no graph");
    const TargetDef& def = entry_of(c);
    if (!def.kinks.evaluate_f64_flipped)
      throw InputError(fmt::format("target '{}' has no kink unit to flip", def.spec.name));
    const Attributes attrs = validate_case(def, c);
    return evaluate_in<double>(def, def.kinks.evaluate_f64_flipped(flips), c, attrs);
  } catch (const InputError& e) {
    r.status = Status::error;
    r.message = e.what();
  }
  return r;
}

Result evaluate(const Case& c, Precision precision) {
  Result r;
  try {
    if (!c.graph) throw InputError("case has no graph");
    const TargetDef& def = entry_of(c);
    const Attributes attrs = validate_case(def, c);
    switch (precision) {
      case Precision::float64: return evaluate_in<double>(def, def.evaluate_f64, c, attrs);
      case Precision::float32: return evaluate_in<float>(def, def.evaluate_f32, c, attrs);
      default:
        r.status = Status::unsupported;
        r.message = fmt::format("the oracle evaluates in float64 or float32, not {}", to_string(precision));
        return r;
    }
  } catch (const InputError& e) {
    r.status = Status::error;
    r.message = e.what();
  }
  return r;
}

}  // namespace gnncheck::oracle
