// gnncheck/training/model.h — multi-layer GNN models described as a list of catalogue targets.
//
// A model is a stack of layer targets (oracle/<layer>_target.cpp) with an activation and optional
// dropout between them; the last layer's output is the class logits. The description is data, so
// the training driver can ask any System to evaluate each layer. The presets are the two-layer models
// of the GNN-pitfalls paper (ATC'25) and of the original papers:
//   gcn_model     GCN → ReLU → GCN, hidden 16 (Kipf & Welling)
//   gat_model     GAT (H heads × C, concat) → ELU → GAT (1 head, mean); 8 × 8 is Veličković's Cora
//                 recipe, 1 × 16 and 3 × 16 the paper's variants
//   gin_model     GIN → ReLU → GIN, hidden 64, ε a frozen parameter (GIN-0) unless learn_eps
//   sage_model    SAGE-mean → ReLU → SAGE-mean, hidden 16
// Initial parameters follow PyTorch Geometric: Glorot-uniform weights and attention vectors, zero
// biases, GIN's ε = 0, AGNN's β = 1, all drawn from one seed.
//
//   ModelSpec m = gcn_model(/*in=*/1433, /*hidden=*/16, /*classes=*/7);
//   ModelParameters p = initial_parameters(m, /*seed=*/1);   // p[0]["weight"] is [1433, 16]
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/case.h"

namespace gnncheck::training {

enum class Activation { relu, elu };
std::string_view to_string(Activation a);

struct LayerSpec {
  std::string target;             // a layer of the catalogue: gcn, gin, gat, sage, agnn
  Attributes attributes;          // complete, including in_features/out_features (or features)
  std::set<std::string> frozen;   // parameters the optimizer leaves unchanged (e.g. GIN-0's eps)
  bool attention_dropout = false; // the layer takes attn_dropout/dropout_seed (GAT)
};

struct ModelSpec {
  std::string name;                 // e.g. "gcn-16", "gat-8x8"
  std::vector<LayerSpec> layers;
  Activation activation = Activation::relu;  // between layers (never after the last)
};

// Parameters of each layer by name, in layer order.
using ModelParameters = std::vector<TensorMap>;

// The two-layer model of any layer target: in → hidden (per head; `heads` concatenated where the
// layer has heads, and hidden_features = hidden where it has an MLP) → activation → classes
// (output_heads averaged). Attention dropout where the layer's entry declares a dropout.
struct TwoLayerShape {
  index_t in_features = 0;
  index_t hidden = 16;
  index_t classes = 0;
  index_t heads = 1;
  index_t output_heads = 1;
  Activation activation = Activation::relu;
  std::vector<std::string> frozen = {};  // on both layers
};
ModelSpec two_layer_model(const std::string& target, const TwoLayerShape& shape);

ModelSpec gcn_model(index_t in_features, index_t hidden, index_t classes);
// hidden = channels per head of the first layer; the output layer has output_heads heads, averaged.
ModelSpec gat_model(index_t in_features, index_t hidden, index_t heads, index_t classes, index_t output_heads = 1);
ModelSpec gin_model(index_t in_features, index_t hidden, index_t classes, bool learn_eps = false);
ModelSpec sage_model(index_t in_features, index_t hidden, index_t classes);

// Throws InputError unless every layer is a known layer target, its attributes are accepted, and
// each layer's input width equals the previous layer's output width.
void validate_model(const ModelSpec& model);

// Width of a layer's input and output as its attributes say.
index_t layer_input_width(const LayerSpec& layer);
index_t layer_output_width(const LayerSpec& layer);

// Glorot-uniform matrices (limit √(6 / (rows + cols))), zero biases, eps = 0, beta = 1, from `seed`.
ModelParameters initial_parameters(const ModelSpec& model, std::uint64_t seed);

}  // namespace gnncheck::training
