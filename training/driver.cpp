#include "training/driver.h"

#include <chrono>
#include <cmath>
#include <mutex>

#include <fmt/format.h>

#include "oracle/layers/dropout.h"
#include "oracle/targets.h"
#include "training/adam.h"

namespace gnncheck::training {

using oracle::layers::derive_seed;
using oracle::layers::dropout_keeps;
using oracle::layers::dropout_scale;

std::vector<double> TrainingHistory::train_losses() const {
  std::vector<double> losses;
  for (const auto& e : epochs) losses.push_back(e.train_loss);
  return losses;
}

std::optional<TrainingRecipe> recipe_for(const std::string& target, const NodeClassificationTask& task,
                                         std::optional<index_t> heads, std::optional<index_t> hidden) {
  const oracle::TargetDef& def = oracle::find_target(target);
  if (!def.accuracy) return std::nullopt;
  const oracle::AccuracyRecipe& recipe = *def.accuracy;
  TrainingConfig c;
  c.learning_rate = recipe.learning_rate;
  c.weight_decay = recipe.weight_decay;
  c.decay_scope = recipe.decay_all_layers ? DecayScope::all_layers : DecayScope::first_layer;
  c.input_dropout = recipe.input_dropout;
  c.hidden_dropout = recipe.hidden_dropout;
  c.attention_dropout = recipe.attention_dropout;
  const ModelSpec model = two_layer_model(target, {.in_features = task.num_features(),
                                                   .hidden = hidden.value_or(recipe.hidden),
                                                   .classes = task.num_classes,
                                                   .heads = heads.value_or(recipe.heads),
                                                   .activation = recipe.elu ? Activation::elu : Activation::relu,
                                                   .frozen = recipe.frozen});
  return TrainingRecipe{model, c};
}

std::vector<std::string> trained_targets() {
  std::vector<std::string> out;
  for (const oracle::TargetDef& def : oracle::all_targets())
    if (def.accuracy) out.push_back(def.spec.name);
  return out;
}

TrainingRecipe gcn_recipe(const NodeClassificationTask& task) { return *recipe_for("gcn", task); }
TrainingRecipe gat_recipe(const NodeClassificationTask& task, index_t heads, index_t hidden) {
  return *recipe_for("gat", task, heads, hidden);
}
TrainingRecipe gin_recipe(const NodeClassificationTask& task) { return *recipe_for("gin", task); }
TrainingRecipe sage_recipe(const NodeClassificationTask& task) { return *recipe_for("sage", task); }

namespace {

void validate_config(const TrainingConfig& c) {
  if (c.epochs < 1) throw InputError(fmt::format("training: epochs must be ≥ 1, got {}", c.epochs));
  for (auto [name, p] : {std::pair{"input_dropout", c.input_dropout}, std::pair{"hidden_dropout", c.hidden_dropout},
                         std::pair{"attention_dropout", c.attention_dropout}})
    if (!(p >= 0.0 && p < 1.0)) throw InputError(fmt::format("training: {} must be in [0, 1), got {}", name, p));
}

// Inverted dropout with the mask of layers/dropout.h; `seed` identifies the use (epoch, place).
Tensor apply_dropout(const Tensor& x, double p, std::uint64_t seed) {
  if (p <= 0.0) return x;
  Tensor out = x;
  const double scale = dropout_scale(p);
  for (index_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0.0) continue;  // a zero stays zero either way; skipping it keeps sparse inputs cheap
    out[i] = dropout_keeps(seed, static_cast<std::uint64_t>(i), p) ? out[i] * scale : 0.0;
  }
  return out;
}

// The gradient through apply_dropout: the same mask, never skipping (the gradient need not be 0
// where the input was).
Tensor dropout_backward(const Tensor& grad, double p, std::uint64_t seed) {
  if (p <= 0.0) return grad;
  Tensor out = grad;
  const double scale = dropout_scale(p);
  for (index_t i = 0; i < out.size(); ++i)
    out[i] = dropout_keeps(seed, static_cast<std::uint64_t>(i), p) ? out[i] * scale : 0.0;
  return out;
}

Tensor activate(const Tensor& z, Activation a) {
  Tensor out = z;
  for (auto& v : out.values()) v = a == Activation::relu ? std::max(v, 0.0) : (v > 0 ? v : std::expm1(v));
  return out;
}

Tensor activate_backward(const Tensor& z, const Tensor& grad, Activation a) {
  Tensor out = grad;
  for (index_t i = 0; i < z.size(); ++i) {
    if (z[i] > 0) continue;
    out[i] = a == Activation::relu ? 0.0 : out[i] * std::exp(z[i]);
  }
  return out;
}

// The seeds of one epoch's dropout masks: input features, each hidden activation, each layer's attention.
std::uint64_t input_mask_seed(std::uint64_t seed, int epoch) { return derive_seed(seed, static_cast<std::uint64_t>(epoch), 0); }
std::uint64_t hidden_mask_seed(std::uint64_t seed, int epoch, size_t layer) {
  return derive_seed(seed, static_cast<std::uint64_t>(epoch), 1 + layer);
}
std::uint64_t attention_mask_seed(std::uint64_t seed, int epoch, size_t layer) {
  return derive_seed(seed, static_cast<std::uint64_t>(epoch), 1000 + layer);
}

// Raised inside one run when the system fails; train() turns it into the history's status.
struct SystemFailure {
  Status status;
  std::string message;
};

class Runner {
 public:
  Runner(System& system, const ModelSpec& model, const NodeClassificationTask& task, const TrainingConfig& config,
         TrainingHistory& history)
      : system_(system), model_(model), task_(task), config_(config), history_(history), features_(task.features) {}

  // Forward through every layer. With `training`, dropout is on for `epoch` and the layer inputs and
  // outputs are kept for backward; without, nothing is kept (evaluation mode).
  Tensor forward(const ModelParameters& params, bool training, int epoch) {
    const bool drop_input = training && config_.input_dropout > 0.0;
    if (drop_input) dropped_features_ = apply_dropout(features_, config_.input_dropout, input_mask_seed(config_.seed, epoch));
    if (training) {
      hidden_inputs_.clear();
      outputs_.clear();
      input_dropped_ = drop_input;
    }
    Tensor h;
    for (size_t l = 0; l < model_.layers.size(); ++l) {
      // Layer 0 reads the (dropped-out) features in place; later layers read the previous activation.
      Tensor& x = l == 0 ? (drop_input ? dropped_features_ : features_) : h;
      Result r = evaluate(l, params, x, training, epoch, nullptr);
      Tensor z = take_output(r, l, epoch);
      if (training && l > 0) hidden_inputs_.push_back(std::move(h));
      if (training) outputs_.push_back(z);
      if (l + 1 == model_.layers.size()) return z;
      h = activate(z, model_.activation);
      if (training) h = apply_dropout(h, config_.hidden_dropout, hidden_mask_seed(config_.seed, epoch, l));
    }
    throw InternalError("training: model without layers");
  }

  // Backward from the gradient of the logits; needs the preceding forward(training = true).
  ModelParameters backward(const ModelParameters& params, Tensor grad, int epoch) {
    ModelParameters grads(model_.layers.size());
    for (size_t l = model_.layers.size(); l-- > 0;) {
      Tensor& x = l == 0 ? (input_dropped_ ? dropped_features_ : features_) : hidden_inputs_[l - 1];
      Result r = evaluate(l, params, x, true, epoch, &grad);
      for (const auto& [name, value] : params[l]) {
        if (model_.layers[l].frozen.count(name)) continue;
        grads[l][name] = take_gradient(r, name, value.shape(), l, epoch);
      }
      if (l == 0) break;
      grad = take_gradient(r, "x", x.shape(), l, epoch);
      grad = dropout_backward(grad, config_.hidden_dropout, hidden_mask_seed(config_.seed, epoch, l - 1));
      grad = activate_backward(outputs_[l - 1], grad, model_.activation);
    }
    return grads;
  }

 private:
  std::string where(size_t l, int epoch, const char* pass) const {
    return fmt::format("epoch {}, layer {} ({}) {}", epoch, l, model_.layers[l].target, pass);
  }

  // Asks the system for layer l's forward (grad_y null) or backward. The layer input x (and grad_y)
  // are moved into the case and x is moved back afterwards: the first layer's input is the whole
  // feature matrix, and copying it several times per epoch would dominate the oracle's run time.
  Result evaluate(size_t l, const ModelParameters& params, Tensor& x, bool training, int epoch, Tensor* grad_y) {
    const LayerSpec& layer = model_.layers[l];
    const char* pass = grad_y ? "backward" : "forward";
    Case c;
    c.target = layer.target;
    c.attributes = layer.attributes;
    if (layer.attention_dropout) {
      const bool on = training && config_.attention_dropout > 0.0;
      c.attributes.set("attn_dropout", on ? config_.attention_dropout : 0.0);
      c.attributes.set("dropout_seed", on ? static_cast<std::int64_t>(attention_mask_seed(config_.seed, epoch, l) >> 1)
                                          : std::int64_t{0});
    }
    c.graph = task_.graph;
    c.parameters = params[l];
    c.seed = config_.seed;
    c.inputs["x"] = std::move(x);
    if (grad_y) c.grad_outputs["y"] = std::move(*grad_y);
    Result r = system_.evaluate(c);
    x = std::move(c.inputs["x"]);
    history_.system_seconds += r.seconds;
    if (!r.ok()) throw SystemFailure{r.status, fmt::format("{}: {}: {}", where(l, epoch, pass), to_string(r.status), r.message)};
    if (expected_output_shapes_.size() <= l) {
      const auto& def = oracle::entry_of(c);
      expected_output_shapes_.push_back(def.output_shapes(*c.graph, oracle::with_defaults(def.spec, c.attributes)).at("y"));
    }
    return r;
  }

  Tensor take_output(Result& r, size_t l, int epoch) {
    auto it = r.outputs.find("y");
    if (it == r.outputs.end())
      throw SystemFailure{Status::invalid_output, fmt::format("{}: no output 'y'", where(l, epoch, "forward"))};
    if (it->second.shape() != expected_output_shapes_[l])
      throw SystemFailure{Status::invalid_output, fmt::format("{}: output 'y' has shape {}, expected {}",
                                                              where(l, epoch, "forward"), it->second.shape(),
                                                              expected_output_shapes_[l])};
    return std::move(it->second);
  }

  Tensor take_gradient(Result& r, const std::string& name, const std::vector<index_t>& shape, size_t l, int epoch) {
    auto it = r.gradients.find(name);
    if (it == r.gradients.end())
      throw SystemFailure{Status::invalid_output, fmt::format("{}: no gradient for '{}'", where(l, epoch, "backward"), name)};
    if (it->second.shape() != shape)
      throw SystemFailure{Status::invalid_output, fmt::format("{}: gradient of '{}' has shape {}, expected {}",
                                                              where(l, epoch, "backward"), name, it->second.shape(), shape)};
    return std::move(it->second);
  }

  System& system_;
  const ModelSpec& model_;
  const NodeClassificationTask& task_;
  const TrainingConfig& config_;
  TrainingHistory& history_;
  Tensor features_;                      // the task's features (layer 0's input without input dropout)
  Tensor dropped_features_;              // this epoch's features after input dropout
  bool input_dropped_ = false;           // whether the last training forward used dropped_features_
  std::vector<Tensor> hidden_inputs_;    // the input x of layers 1, 2, … in the last training forward
  std::vector<Tensor> outputs_;          // each layer's output y in the last training forward
  std::vector<std::vector<index_t>> expected_output_shapes_;  // y's shape per layer, from the catalogue
};

bool any_dropout(const TrainingConfig& c) {
  return c.input_dropout > 0 || c.hidden_dropout > 0 || c.attention_dropout > 0;
}

}  // namespace

TrainingHistory train(System& system, const ModelSpec& model, const NodeClassificationTask& task,
                      const TrainingConfig& config, const ModelParameters& initial) {
  validate_model(model);
  validate_task(task);
  validate_config(config);
  if (layer_input_width(model.layers.front()) != task.num_features())
    throw InputError(fmt::format("model '{}' takes {} input features but task '{}' has {}", model.name,
                                 layer_input_width(model.layers.front()), task.name, task.num_features()));
  if (layer_output_width(model.layers.back()) != task.num_classes)
    throw InputError(fmt::format("model '{}' outputs {} classes but task '{}' has {}", model.name,
                                 layer_output_width(model.layers.back()), task.name, task.num_classes));
  if (initial.size() != model.layers.size())
    throw InputError(fmt::format("model '{}' has {} layers but {} parameter sets were given", model.name,
                                 model.layers.size(), initial.size()));

  TrainingHistory history;
  history.system = system.name();
  history.model = model.name;
  history.task = task.name;
  history.seed = config.seed;
  const auto start = std::chrono::steady_clock::now();
  for (const auto& layer : model.layers)
    if (!system.supports(layer.target)) {
      history.status = Status::unsupported;
      history.message = fmt::format("system '{}' does not support layer '{}'", system.name(), layer.target);
      return history;
    }

  ModelParameters params = initial;
  std::vector<Adam> optimizers;
  for (size_t l = 0; l < model.layers.size(); ++l) {
    const bool decays = config.decay_scope == DecayScope::all_layers || l == 0;
    optimizers.emplace_back(AdamOptions{config.learning_rate, decays ? config.weight_decay : 0.0});
  }
  Runner runner(system, model, task, config, history);
  try {
    for (int epoch = 0; epoch < config.epochs; ++epoch) {
      const Tensor logits = runner.forward(params, true, epoch);
      LossAndGradient loss = cross_entropy(logits, task.labels, task.train_nodes);
      if (!std::isfinite(loss.loss))
        throw SystemFailure{Status::invalid_output, fmt::format("epoch {}: the training loss is {}", epoch, loss.loss)};
      EpochRecord record;
      record.epoch = epoch;
      record.train_loss = loss.loss;
      // Evaluation mode: the same parameters without dropout (the same forward when dropout is off).
      Tensor eval_logits;
      if (any_dropout(config)) {
        eval_logits = runner.forward(params, false, epoch);
      } else {
        eval_logits = logits;
      }
      record.val_loss = cross_entropy_loss(eval_logits, task.labels, task.val_nodes);
      record.train_accuracy = accuracy(eval_logits, task.labels, task.train_nodes);
      record.val_accuracy = accuracy(eval_logits, task.labels, task.val_nodes);
      record.test_accuracy = accuracy(eval_logits, task.labels, task.test_nodes);
      history.epochs.push_back(record);

      const ModelParameters grads = runner.backward(params, std::move(loss.grad_logits), epoch);
      for (size_t l = 0; l < model.layers.size(); ++l) optimizers[l].step(params[l], grads[l], model.layers[l].frozen);
    }
    const Tensor final_logits = runner.forward(params, false, config.epochs);
    history.final_train_accuracy = accuracy(final_logits, task.labels, task.train_nodes);
    history.final_val_accuracy = accuracy(final_logits, task.labels, task.val_nodes);
    history.final_test_accuracy = accuracy(final_logits, task.labels, task.test_nodes);
    history.best_val_epoch = config.epochs;
    history.best_val_accuracy = history.final_val_accuracy;
    history.test_accuracy_at_best_val = history.final_test_accuracy;
    for (const EpochRecord& e : history.epochs)
      if (e.val_accuracy > history.best_val_accuracy ||
          (e.val_accuracy == history.best_val_accuracy && e.epoch < history.best_val_epoch)) {
        history.best_val_epoch = e.epoch;
        history.best_val_accuracy = e.val_accuracy;
        history.test_accuracy_at_best_val = e.test_accuracy;
      }
  } catch (const SystemFailure& failure) {
    history.status = failure.status;
    history.message = failure.message;
  }
  history.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return history;
}

TrainingHistory train(System& system, const ModelSpec& model, const NodeClassificationTask& task,
                      const TrainingConfig& config) {
  return train(system, model, task, config, initial_parameters(model, config.seed));
}

}  // namespace gnncheck::training
