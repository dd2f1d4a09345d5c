// Systems for the checks' own tests: correct ones the tolerance model must pass (a TF32 emulation,
// a GIN whose ReLU has derivative 1 at 0) and wrong ones no bound may absorb (forwards that are
// random, noisy on every call, or noisy as a function of their input).
#pragma once

#include <cstdint>
#include <memory>
#include <random>

#include "core/system.h"
#include "checks/case_transforms.h"
#include "oracle/layers/dense.h"
#include "oracle/spmm.h"
#include "oracle/targets.h"

namespace gnncheck::checks::testing {

// A correct TF32 tensor-core kernel, emulated: inputs rounded to TF32 (10 stored significand bits),
// products and sums in float32, as tensor cores do.
class Tf32Emulation final : public System {
 public:
  std::string name() const override { return "tf32_emulation"; }
  bool supports(const std::string&) const override { return true; }
  Precision precision(const std::string&) const override { return Precision::tf32; }
  Result evaluate(const Case& c) override {
    Case rounded_case = c;
    for (TensorMap* m : {&rounded_case.inputs, &rounded_case.parameters, &rounded_case.grad_outputs})
      for (auto& [name, t] : *m) t = rounded(t, Precision::tf32);
    return oracle::evaluate(rounded_case, Precision::float32);
  }
};

// The float32 answer with every output element multiplied by (1 + relative·r), r uniform in
// [-1, 1): drawn afresh on every call (`per_call`), or from the input values (repeatable, but
// still not the function it claims). relative = 1 makes the outputs O(1) wrong: "random".
class NoisyForward final : public System {
 public:
  NoisyForward(double relative, bool per_call) : relative_(relative), per_call_(per_call) {}
  std::string name() const override { return per_call_ ? "noisy_forward_per_call" : "noisy_forward_per_input"; }
  bool supports(const std::string&) const override { return true; }
  Precision precision(const std::string&) const override { return Precision::float32; }
  Result evaluate(const Case& c) override {
    Result r = oracle::evaluate(c, Precision::float32);
    if (!r.ok()) return r;
    std::uint64_t seed = per_call_ ? ++calls_ : 0x9e3779b97f4a7c15ull;
    if (!per_call_)
      for (const auto& m : {c.inputs, c.parameters})
        for (const auto& [name, t] : m)
          for (double v : t.values()) seed = seed * 1099511628211ull ^ std::hash<double>{}(v);
    std::mt19937_64 rng(seed);
    for (auto& [name, y] : r.outputs)
      for (double& v : y.values())
        v *= 1 + relative_ * (static_cast<double>(rng() >> 11) * 0x1p-52 - 1.0);
    return r;
  }

 private:
  double relative_;
  bool per_call_;
  std::uint64_t calls_ = 0;
};

// GIN in float64 with the other valid convention at ReLU's kink: derivative 1 at z₁ = 0 (the
// oracle takes 0). The layer's backward written out with oracle/layers' primitives, as gin.cpp
// does, with only that convention changed.
class ReluOneAtZero final : public System {
 public:
  std::string name() const override { return "gin_relu_derivative_one_at_zero"; }
  bool supports(const std::string& target) const override { return target == "gin"; }
  Precision precision(const std::string&) const override { return Precision::float64; }
  Result evaluate(const Case& c) override {
    Result r = oracle::evaluate(c, Precision::float64);
    if (!r.ok() || c.grad_outputs.empty()) return r;
    namespace L = oracle::layers;
    const Graph& g = *c.graph;
    const Tensor& x = c.inputs.at("x");
    const Tensor& w1 = c.parameters.at("weight1");
    const Tensor& w2 = c.parameters.at("weight2");
    const double eps = c.parameters.at("eps")[0];
    const bool bias = c.parameters.count("bias1") > 0;
    const Tensor x_dst = L::first_rows(x, g.n_dst());
    Tensor h = oracle::spmm_forward(g, x);
    L::add_scaled(h, 1 + eps, x_dst);
    Tensor z1 = L::matmul(h, w1);
    if (bias) L::add_bias(z1, c.parameters.at("bias1"));
    const Tensor a1 = L::relu(z1);
    const Tensor& grad_y = c.grad_outputs.at("y");
    Tensor grad_z1 = L::matmul_a_bt(grad_y, w2);
    for (index_t k = 0; k < grad_z1.size(); ++k)
      if (z1[k] < 0) grad_z1[k] = 0;  // z₁ = 0 passes the gradient: derivative 1 there
    r.gradients["weight2"] = L::matmul_at_b(a1, grad_y);
    r.gradients["weight1"] = L::matmul_at_b(h, grad_z1);
    if (bias) {
      r.gradients["bias2"] = L::column_sums(grad_y);
      r.gradients["bias1"] = L::column_sums(grad_z1);
    }
    const Tensor grad_h = L::matmul_a_bt(grad_z1, w1);
    Tensor grad_x = oracle::spmm_backward(g, grad_h);
    L::add_into_first_rows(grad_x, 1 + eps, grad_h);
    r.gradients["x"] = grad_x;
    double grad_eps = 0;
    for (index_t k = 0; k < grad_h.size(); ++k) grad_eps += grad_h[k] * x_dst[k];
    r.gradients["eps"] = Tensor({1}, std::vector<double>{grad_eps});
    return r;
  }
};

}  // namespace gnncheck::checks::testing
