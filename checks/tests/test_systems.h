// Systems for the checks' own tests: correct ones the tolerance model must pass (a TF32 emulation;
// the other one-sided derivatives at kinks are the built-in cpu_float32_right_derivatives) and wrong ones no bound may absorb (forwards that are
// random, noisy on every call, or noisy as a function of their input).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>

#include "core/system.h"
#include "checks/case_transforms.h"
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

// The float32 answer with the first element of every output and gradient NaN on every call, as a
// fused kernel dividing 0/0 on an empty row does: the same wrong value each time.
class NanOnEveryCall final : public System {
 public:
  std::string name() const override { return "nan_on_every_call"; }
  bool supports(const std::string&) const override { return true; }
  Precision precision(const std::string&) const override { return Precision::float32; }
  Result evaluate(const Case& c) override {
    Result r = oracle::evaluate(c, Precision::float32);
    if (!r.ok()) return r;
    for (TensorMap* m : {&r.outputs, &r.gradients})
      for (auto& [name, t] : *m)
        if (t.size() > 0) t[0] = std::nan("");
    return r;
  }
};

}  // namespace gnncheck::checks::testing
