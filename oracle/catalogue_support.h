// gnncheck/oracle/catalogue_support.h — what the catalogue's entry files share (op_targets.cpp,
// gspmm_target.cpp, gsddmm_target.cpp, <layer>_target.cpp): building a TargetDef from one evaluation
// written over the scalar type, the size and drawn attributes, and reading an evaluation's tensors. Internal to oracle/.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "oracle/targets.h"

namespace gnncheck::oracle::catalogue {

using Shapes = std::map<std::string, std::vector<index_t>>;

inline AttributeSpec features_attribute() {
  return {"features", std::int64_t{4}, "feature width C of each node row (per head for multi-head ops); ≥ 1"};
}
inline AttributeSpec heads_attribute() {
  return {"heads", std::int64_t{1}, "number of attention heads H; node rows hold H·features values; ≥ 1"};
}

// An attribute drawn in every case from an enumeration's names (AttributeSpec::drawn; gspmm's
// message, gsddmm's op and sides).
template <std::size_t N>
AttributeSpec drawn_choice(std::string name, std::string default_value, std::string help,
                           const std::array<std::string_view, N>& names) {
  std::vector<AttrValue> choices;
  for (std::string_view value : names) choices.emplace_back(std::string(value));
  return {std::move(name), std::move(default_value), std::move(help), std::move(choices), /*drawn=*/true};
}

// A tensor by name, or null: an input the attributes switch off (gspmm's e with copy_u).
template <class T>
const DenseTensor<T>* optional_tensor(const TensorMapOf<T>& map, const std::string& name) {
  const auto it = map.find(name);
  return it == map.end() ? nullptr : &it->second;
}

// Looks up a tensor that evaluate() has already validated against input_shapes/output_shapes.
template <class T>
const DenseTensor<T>& get(const TensorMapOf<T>& map, const char* name) {
  auto it = map.find(name);
  if (it == map.end()) throw InternalError(fmt::format("oracle evaluation: tensor '{}' was not supplied", name));
  return it->second;
}

// Builds a target whose float64 and float32 evaluations are one generic callable (its scalar type
// deduced from the tensors it is given).
template <class Fn>
TargetDef make_target(TargetSpec spec, ShapesFn input_shapes, ShapesFn output_shapes, Fn evaluate) {
  TargetDef def;
  def.spec = std::move(spec);
  def.input_shapes = std::move(input_shapes);
  def.output_shapes = std::move(output_shapes);
  def.evaluate_f64 = [evaluate](const Graph& g, const Attributes& a, const TensorMapOf<double>& in,
                                const TensorMapOf<double>& gout) { return evaluate(g, a, in, gout); };
  def.evaluate_f32 = [evaluate](const Graph& g, const Attributes& a, const TensorMapOf<float>& in,
                                const TensorMapOf<float>& gout) { return evaluate(g, a, in, gout); };
  return def;
}

}  // namespace gnncheck::oracle::catalogue
