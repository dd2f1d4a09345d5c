#include "training/adam.h"

#include <cmath>

#include <fmt/format.h>

namespace gnncheck::training {

Adam::Adam(AdamOptions options) : options_(options) {
  if (!(options_.learning_rate > 0)) throw InputError(fmt::format("Adam: learning rate must be positive, got {}", options_.learning_rate));
  if (options_.weight_decay < 0) throw InputError(fmt::format("Adam: weight decay must be ≥ 0, got {}", options_.weight_decay));
}

void Adam::step(TensorMap& params, const TensorMap& grads, const std::set<std::string>& frozen) {
  ++t_;
  const double bias1 = 1.0 - std::pow(options_.beta1, t_);
  const double bias2 = 1.0 - std::pow(options_.beta2, t_);
  for (auto& [name, theta] : params) {
    if (frozen.count(name)) continue;
    auto g = grads.find(name);
    if (g == grads.end()) throw InputError(fmt::format("Adam: no gradient for parameter '{}'", name));
    require_shape(g->second, theta.shape(), fmt::format("Adam: gradient of '{}'", name));
    Tensor& m = m_.try_emplace(name, theta.shape()).first->second;
    Tensor& v = v_.try_emplace(name, theta.shape()).first->second;
    for (index_t k = 0; k < theta.size(); ++k) {
      const double grad = g->second[k] + options_.weight_decay * theta[k];
      m[k] = options_.beta1 * m[k] + (1 - options_.beta1) * grad;
      v[k] = options_.beta2 * v[k] + (1 - options_.beta2) * grad * grad;
      theta[k] -= options_.learning_rate * (m[k] / bias1) / (std::sqrt(v[k] / bias2) + options_.epsilon);
    }
  }
}

}  // namespace gnncheck::training
