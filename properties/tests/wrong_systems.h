// Systems for the property tests. Deliberately wrong ones that the replica catalogue
// (adapters/replicas/) does not have: softmax normalized over each source's out-edges instead of
// each destination's in-edges, and an edge-softmax backward that drops the −Σ α·ḡ term. And a
// correct one the tolerance model never measures: the oracle's code in float32 on the case with
// every row's edges randomly permuted (a third summation order), mapped back.
#pragma once

#include "checks/case_transforms.h"

#include <memory>

#include "core/system.h"
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

class ShuffledOrderFloat32 final : public System {
 public:
  std::string name() const override { return "cpu_float32_shuffled_rows"; }
  bool supports(const std::string&) const override { return true; }
  Precision precision(const std::string&) const override { return Precision::float32; }
  Result evaluate(const Case& c) override {
    const checks::Relabeling moved = checks::shuffle_edges_within_rows(c, c.seed * 31 + 17);
    Result r = oracle::evaluate(moved.transformed, Precision::float32);
    if (!r.ok()) return r;
    const auto& spec = oracle::entry_of(c).spec;
    for (auto& [name, t] : r.outputs) t = checks::to_original_order(t, checks::output_kind(spec, name), moved);
    for (auto& [name, t] : r.gradients) t = checks::to_original_order(t, checks::input_kind(spec, name), moved);
    return r;
  }
};

}  // namespace gnncheck::properties::testing
