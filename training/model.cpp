#include "training/model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::training {

std::string_view to_string(Activation a) {
  switch (a) {
    case Activation::relu: return "relu";
    case Activation::elu: return "elu";
  }
  return "unknown";
}

namespace {

// Parameter shapes do not depend on the graph; any graph gives them.
const Graph& shape_probe_graph() {
  static const Graph g = Graph::from_csr(1, 1, {0, 0}, {});
  return g;
}

struct LayerShapes {
  std::map<std::string, std::vector<index_t>> inputs;
  std::map<std::string, std::vector<index_t>> outputs;
};

LayerShapes layer_shapes(const LayerSpec& layer) {
  const oracle::TargetDef& def = oracle::find_target(layer.target);
  if (!def.spec.is_layer) throw InputError(fmt::format("model layer '{}' is an op, not a layer", layer.target));
  const Attributes attrs = oracle::with_defaults(def.spec, layer.attributes);
  return {def.input_shapes(shape_probe_graph(), attrs), def.output_shapes(shape_probe_graph(), attrs)};
}

}  // namespace

index_t layer_input_width(const LayerSpec& layer) { return layer_shapes(layer).inputs.at("x").at(1); }
index_t layer_output_width(const LayerSpec& layer) { return layer_shapes(layer).outputs.at("y").at(1); }

void validate_model(const ModelSpec& model) {
  if (model.layers.empty()) throw InputError(fmt::format("model '{}' has no layers", model.name));
  for (size_t l = 0; l < model.layers.size(); ++l) {
    const LayerSpec& layer = model.layers[l];
    const LayerShapes shapes = layer_shapes(layer);  // throws for unknown targets and attributes
    for (const auto& name : layer.frozen)
      if (!shapes.inputs.count(name) || name == "x")
        throw InputError(fmt::format("model '{}' layer {} ({}): frozen '{}' is not one of its parameters", model.name,
                                     l, layer.target, name));
    if (l > 0 && layer_input_width(layer) != layer_output_width(model.layers[l - 1]))
      throw InputError(fmt::format("model '{}': layer {} ({}) takes {} features but layer {} ({}) gives {}", model.name,
                                   l, layer.target, layer_input_width(layer), l - 1, model.layers[l - 1].target,
                                   layer_output_width(model.layers[l - 1])));
  }
}

ModelSpec two_layer_model(const std::string& target, const TwoLayerShape& shape) {
  const oracle::TargetDef& def = oracle::find_target(target);
  const bool heads = def.spec.has_attribute("heads"), hidden_width = def.spec.has_attribute("hidden_features");
  const std::set<std::string> frozen(shape.frozen.begin(), shape.frozen.end());
  const bool attention_dropout = !def.dropout.probability_attribute.empty();
  const auto layer = [&](index_t in, index_t out, index_t layer_heads, bool concat) {
    Attributes a({{"in_features", in}, {"out_features", out}});
    if (heads) {
      a.set("heads", layer_heads);
      a.set("concat", concat);
    }
    if (hidden_width) a.set("hidden_features", shape.hidden);
    return LayerSpec{target, a, frozen, attention_dropout};
  };
  const std::string name = heads ? fmt::format("{}-{}x{}", target, shape.heads, shape.hidden)
                                 : fmt::format("{}-{}", target, shape.hidden);
  ModelSpec m{name, {}, shape.activation};
  m.layers.push_back(layer(shape.in_features, shape.hidden, shape.heads, true));
  m.layers.push_back(layer(shape.heads * shape.hidden, shape.classes, shape.output_heads, false));
  return m;
}

ModelSpec gcn_model(index_t in_features, index_t hidden, index_t classes) {
  return two_layer_model("gcn", {.in_features = in_features, .hidden = hidden, .classes = classes});
}

ModelSpec gat_model(index_t in_features, index_t hidden, index_t heads, index_t classes, index_t output_heads) {
  return two_layer_model("gat", {.in_features = in_features,
                                 .hidden = hidden,
                                 .classes = classes,
                                 .heads = heads,
                                 .output_heads = output_heads,
                                 .activation = Activation::elu});
}

ModelSpec gin_model(index_t in_features, index_t hidden, index_t classes, bool learn_eps) {
  TwoLayerShape shape{.in_features = in_features, .hidden = hidden, .classes = classes};
  if (!learn_eps) shape.frozen = {"eps"};
  return two_layer_model("gin", shape);
}

ModelSpec sage_model(index_t in_features, index_t hidden, index_t classes) {
  return two_layer_model("sage", {.in_features = in_features, .hidden = hidden, .classes = classes});
}

ModelParameters initial_parameters(const ModelSpec& model, std::uint64_t seed) {
  validate_model(model);
  ModelParameters params;
  for (size_t l = 0; l < model.layers.size(); ++l) {
    const LayerSpec& layer = model.layers[l];
    const oracle::TargetDef& def = oracle::find_target(layer.target);
    const LayerShapes shapes = layer_shapes(layer);
    TensorMap layer_params;
    for (const auto& slot : def.spec.inputs) {
      if (slot.kind != oracle::TensorKind::parameter) continue;
      auto shape = shapes.inputs.find(slot.name);
      if (shape == shapes.inputs.end()) continue;  // disabled (a bias with bias = false)
      const std::vector<index_t>& s = shape->second;
      if (s.size() == 2) {
        const double limit = std::sqrt(6.0 / static_cast<double>(s[0] + s[1]));
        layer_params[slot.name] =
            oracle::random_tensor(s, seed, fmt::format("layer {} {}", l, slot.name), {-limit, limit});
      } else {
        layer_params[slot.name] = Tensor(s, slot.name == "beta" ? 1.0 : 0.0);
      }
    }
    params.push_back(std::move(layer_params));
  }
  return params;
}

}  // namespace gnncheck::training
