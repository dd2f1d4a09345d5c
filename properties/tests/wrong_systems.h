// Deliberately wrong systems that the replica catalogue (adapters/replicas/) does not have, kept
// local to the property tests: softmax normalized over each source's out-edges instead of each
// destination's in-edges, and an edge-softmax backward that drops the −Σ α·ḡ term.
#pragma once

#include <memory>

#include "adapters/system.h"
#include "oracle/edge_softmax.h"
#include "oracle/eshuffle.h"
#include "oracle/targets.h"

namespace gnncheck::properties::testing {

class SoftmaxOverSource final : public System {
 public:
  std::string name() const override { return "softmax_over_source"; }
  bool supports(const std::string& target) const override { return target == "edge_softmax"; }
  Precision precision(const std::string&) const override { return Precision::float32; }
  Result evaluate(const Case& c) override {
    // Softmax over Aᵀ's rows (= A's columns), moved there and back with eShuffle.
    const Graph& g = *c.graph;
    const Graph gt = g.transposed();
    Result r;
    const Tensor alpha_t = oracle::edge_softmax_forward(gt, oracle::eshuffle_forward(g, c.inputs.at("logits")));
    r.outputs["alpha"] = oracle::eshuffle_inverse_forward(g, alpha_t);
    if (!c.grad_outputs.empty()) {
      const Tensor grad_t =
          oracle::edge_softmax_backward(gt, alpha_t, oracle::eshuffle_forward(g, c.grad_outputs.at("alpha")));
      r.gradients["logits"] = oracle::eshuffle_inverse_forward(g, grad_t);
    }
    return r;
  }
};

class SoftmaxBackwardDropsSum final : public System {
 public:
  std::string name() const override { return "softmax_backward_drops_sum"; }
  bool supports(const std::string& target) const override { return target == "edge_softmax"; }
  Precision precision(const std::string&) const override { return Precision::float32; }
  Result evaluate(const Case& c) override {
    Result r = oracle::evaluate(c, Precision::float32);
    if (r.ok() && !c.grad_outputs.empty()) {
      // grad_s = α ⊙ ḡ: the −α·Σ α·ḡ term of the softmax Jacobian is missing.
      Tensor& g = r.gradients.at("logits");
      const Tensor& alpha = r.outputs.at("alpha");
      const Tensor& gy = c.grad_outputs.at("alpha");
      for (index_t i = 0; i < g.size(); ++i) g[i] = alpha[i] * gy[i];
    }
    return r;
  }
};

}  // namespace gnncheck::properties::testing
