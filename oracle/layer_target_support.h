// gnncheck/oracle/layer_target_support.h — what the layers' catalogue entries share
// (oracle/<layer>_target.cpp): reading a layer's inputs, the tensor slots and attributes every layer
// has, the float32 evaluation at the other side of the kinks, and the attention layers' attributes.
//
// Every layer takes the node features "x" (kind src_nodes) and produces "y" (kind dst_nodes); its
// learnable parameters are inputs of kind `parameter`, named as in the layer's Parameters struct.
// A bias is optional: with bias = false it is listed in the spec but absent from input_shapes(),
// which is the exact set of tensors a case must carry. GIN's eps is always a parameter (whether a
// model learns it is the training driver's choice).
#pragma once

#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "oracle/catalogue_support.h"
#include "oracle/kink_arguments.h"
#include "oracle/targets.h"

namespace gnncheck::oracle::layer_catalogue {

using Shapes = std::map<std::string, std::vector<index_t>>;

template <class T>
const DenseTensor<T>& input(const TensorMapOf<T>& inputs, const std::string& name) {
  auto it = inputs.find(name);
  if (it == inputs.end()) throw InputError(fmt::format("layer input '{}' is missing", name));
  return it->second;
}

// An optional parameter: the tensor when enabled, an empty one otherwise.
template <class T>
DenseTensor<T> optional_input(const TensorMapOf<T>& inputs, const std::string& name, bool enabled) {
  return enabled ? input(inputs, name) : DenseTensor<T>{};
}

// The float32 evaluation of one generic lambda (a layer's evaluation at the other side of its kinks).
template <class Fn>
EvaluateFn<float> in_float32(Fn evaluate) {
  return [evaluate](const Graph& g, const Attributes& a, const TensorMapOf<float>& in, const TensorMapOf<float>& go) {
    return evaluate(g, a, in, go);
  };
}

// The kink hooks of a layer whose backward takes KinkSide and KinkFlips (`evaluate_at(side, flips)`
// returns its evaluation): the arguments, the float32 evaluation on the right side, and the float64
// one with units flipped.
template <class EvaluateAt>
KinkHooks one_sided_kink_hooks(void (*arguments)(const Case&, const Attributes&, KinkArguments&), EvaluateAt evaluate_at) {
  KinkHooks hooks{arguments, in_float32(evaluate_at(layers::KinkSide::right))};
  hooks.evaluate_f64_flipped = [evaluate_at](const layers::KinkFlips& flips) {
    return EvaluateFn<double>(evaluate_at(layers::KinkSide::left, flips));
  };
  return hooks;
}

// The receptive field of a layer that reads destination i's own features as source i.
inline ReceptiveField reads_own_features(const Attributes&) { return {.own_features = true}; }

// A case's input or parameter by name: what the kink hooks read (each argument's value, and its
// Σ|terms| on |inputs| through layers::absolute).
inline const Tensor& tensor_of(const Case& c, const std::string& name) {
  auto it = c.inputs.find(name);
  return it != c.inputs.end() ? it->second : c.parameters.at(name);
}

// The kinks of a layer with one kinked site (site 0: a LeakyReLU over every element of z), each
// argument of `terms` terms, whose gradients reach `upstream`.
inline void one_site_kink_arguments(KinkArguments& k, const Tensor& z, const Tensor& z_abs, double terms,
                                    std::vector<std::string> upstream) {
  k.offsets = z.values();
  k.abs_terms = z_abs.values();
  k.terms.assign(k.offsets.size(), terms);
  for (std::size_t n = 0; n < k.offsets.size(); ++n) k.units.push_back({0, static_cast<index_t>(n)});
  k.upstream = std::move(upstream);
}

inline const TensorSlot kX{"x", TensorKind::src_nodes, true};
inline const TensorSlot kY{"y", TensorKind::dst_nodes, true};
inline TensorSlot parameter(const std::string& name) { return {name, TensorKind::parameter, true}; }

inline AttributeSpec in_features_attr() { return {"in_features", std::int64_t{8}, "width of the input features x"}; }
inline AttributeSpec out_features_attr() { return {"out_features", std::int64_t{4}, "width of the output y"}; }
inline AttributeSpec bias_attr() { return catalogue::coin_attribute("bias", true, "add a learnable bias (true|false)"); }

// The attributes GAT and GATv2 share: widths, heads and how they are joined, bias, self-loops and
// the LeakyReLU's slope (`slope_help` says what it is applied to), then `extra`.
inline std::vector<AttributeSpec> attention_layer_attributes(const char* slope_help, std::vector<AttributeSpec> extra = {}) {
  std::vector<AttributeSpec> attributes{
      in_features_attr(),
      {"out_features", std::int64_t{4}, "channels per head (C)"},
      catalogue::heads_attribute(2, "number of attention heads (H)"),
      catalogue::concat_attribute(),
      bias_attr(),
      catalogue::coin_attribute("self_loops", true, "attend over A + I (true) or A (false)"),
      catalogue::negative_slope_attribute(slope_help)};
  for (auto& a : extra) attributes.push_back(std::move(a));
  return attributes;
}

}  // namespace gnncheck::oracle::layer_catalogue
