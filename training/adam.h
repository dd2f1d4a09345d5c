// gnncheck/training/adam.h — Adam (Kingma & Ba 2015) with L2 weight decay, as torch.optim.Adam does it.
//
//   g ← ∇ + λ·θ;  m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²;
//   θ ← θ − lr · (m / (1−β1^t)) / (√(v / (1−β2^t)) + ε)
// Decay is added to the gradient (coupled L2, not AdamW), which is what the GCN and GAT reference
// recipes use. State is kept per parameter name, so one optimizer serves one layer's TensorMap.
//
//   Adam opt({.learning_rate = 0.01, .weight_decay = 5e-4});
//   opt.step(params, grads);   // updates every parameter that has a gradient in `grads`
#pragma once

#include <set>
#include <string>

#include "core/case.h"

namespace gnncheck::training {

struct AdamOptions {
  double learning_rate = 0.01;
  double weight_decay = 0.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
};

class Adam {
 public:
  explicit Adam(AdamOptions options);
  // One step on every parameter in `params` except those in `frozen`; each must have a gradient of
  // the same shape in `grads` (InputError naming the parameter otherwise).
  void step(TensorMap& params, const TensorMap& grads, const std::set<std::string>& frozen = {});
  int steps_taken() const { return t_; }

 private:
  AdamOptions options_;
  int t_ = 0;
  TensorMap m_;
  TensorMap v_;
};

}  // namespace gnncheck::training
