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
// `a` with how generators draw it and what the selfcheck tries with it (AttributeSpec::draw,
// selfcheck_variants, large_graph_variants).
inline AttributeSpec drawn_as(AttributeSpec a, AttributeDraw draw, std::vector<Attributes> selfcheck = {},
                              std::vector<Attributes> large_graph = {}) {
  a.draw = std::move(draw);
  a.selfcheck_variants = std::move(selfcheck);
  a.large_graph_variants = std::move(large_graph);
  return a;
}
inline AttributeSpec selfchecked(AttributeSpec a, std::vector<Attributes> selfcheck,
                                 std::vector<Attributes> large_graph = {}) {
  a.selfcheck_variants = std::move(selfcheck);
  a.large_graph_variants = std::move(large_graph);
  return a;
}
// A mode whose every other value the selfcheck tries (a layer's aggr, a degree convention).
inline AttributeSpec selfchecked_choices(AttributeSpec a, std::vector<Attributes> large_graph = {}) {
  std::vector<Attributes> variants = each_other_choice(a);
  return selfchecked(std::move(a), std::move(variants), std::move(large_graph));
}

inline AttributeSpec heads_attribute(std::int64_t default_value = 1,
                                     std::string help = "number of attention heads H; node rows hold H·features "
                                                        "values; ≥ 1") {
  return drawn_as({"heads", default_value, std::move(help)}, AttributeDraw::heads(), {{{"heads", std::int64_t{2}}}});
}
// A switch drawn either way in every case (self_loops, bias, root_weight).
inline AttributeSpec coin_attribute(std::string name, bool default_value, std::string help) {
  return drawn_as({std::move(name), default_value, std::move(help)}, AttributeDraw::coin());
}
// The number of edge or node types of a typed graph: one type, and up to 4 (an empty type is drawn
// with the types). The selfcheck tries a single relation, where every edge weighs alike.
inline AttributeSpec type_count_attribute(std::string name, std::string help, bool selfcheck_one_type) {
  std::vector<Attributes> one_type;
  if (selfcheck_one_type) one_type.push_back({{name, std::int64_t{1}}});
  return drawn_as({name, std::int64_t{3}, std::move(help)}, AttributeDraw::integers(1, 4), std::move(one_type));
}
// The heads of an attention layer concatenated or averaged (three averaged, so the mean is no power of two).
inline AttributeSpec concat_attribute() {
  return drawn_as({"concat", true, "concatenate the heads, y [n_dst, H*C] (true), or average them, y [n_dst, C] (false)"},
                  AttributeDraw::coin(), {{{"concat", false}, {"heads", std::int64_t{3}}}});
}
// A LeakyReLU's slope: PyG's default, a small and a large slope, and no kink at all.
inline AttributeSpec negative_slope_attribute(std::string help) {
  return drawn_as({"negative_slope", 0.2, std::move(help)}, AttributeDraw::one_of({0.2, 0.01, 0.5, 1.0}),
                  {{{"negative_slope", 0.01}}});
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

// max and min over an empty row (gspmm, segment_reduce): the selfcheck tries the identity under max.
template <std::size_t N>
AttributeSpec empty_rows_attribute(std::string help, const std::array<std::string_view, N>& names) {
  return selfchecked(drawn_choice("empty_rows", "zero", std::move(help), names),
                     {{{"reduce", std::string("max")}, {"empty_rows", std::string("identity")}}});
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
