#include "oracle/cpu_systems.h"

#include <cmath>
#include <vector>

#include "oracle/targets.h"

namespace gnncheck {
namespace {

class OracleCodeSystem final : public System {
 public:
  OracleCodeSystem(std::string name, Precision precision) : name_(std::move(name)), precision_(precision) {}

  std::string name() const override { return name_; }
  bool supports(const std::string& target) const override {
    for (const auto& def : oracle::all_targets())
      if (def.spec.name == target) return true;
    return false;
  }
  Precision precision(const std::string&) const override { return precision_; }
  Result evaluate(const Case& c) override { return oracle::evaluate(c, precision_); }

 private:
  std::string name_;
  Precision precision_;
};

// The oracle's float32 code taking the other one-sided derivative (KinkSide::right) at every kink
// of the targets whose catalogue entries declare kinks (KinkHooks); cpu_float32 for the others.
class RightDerivativesFloat32 final : public System {
 public:
  std::string name() const override { return "cpu_float32_right_derivatives"; }
  bool supports(const std::string& target) const override { return float32_.supports(target); }
  Precision precision(const std::string&) const override { return Precision::float32; }
  Result evaluate(const Case& c) override { return oracle::evaluate_f32_right_of_kinks(c); }

 private:
  OracleCodeSystem float32_{"cpu_float32", Precision::float32};
};

// Online (running-max) edge softmax in float32, one pass per row: each term is exp(s − c) with c the
// maximum seen so far, and the sum is rescaled by exp(c_old − c_new) whenever the maximum grows; the
// stored terms are rescaled to the row's final maximum at the end. The backward recomputes alpha the
// same way and takes the distributive form α⊙ᾱ − α·(Σ α·ᾱ), summing the dot in reverse order.
TensorF online_edge_softmax(const Graph& g, const TensorF& logits) {
  const index_t heads = logits.row_size();
  TensorF alpha(logits.shape());
  std::vector<float> shift;
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t begin = g.row_ptr()[i], end = g.row_ptr()[i + 1];
    shift.resize(static_cast<size_t>(end - begin));
    for (index_t h = 0; h < heads; ++h) {
      float running_max = -INFINITY, sum = 0.0f;
      for (index_t k = begin; k < end; ++k) {
        const float s = logits[k * heads + h];
        if (s > running_max) {
          sum = sum * std::exp(running_max - s);  // exp(−inf) = 0 on the first term
          running_max = s;
        }
        alpha[k * heads + h] = std::exp(s - running_max);
        shift[static_cast<size_t>(k - begin)] = running_max;
        sum += alpha[k * heads + h];
      }
      for (index_t k = begin; k < end; ++k)
        alpha[k * heads + h] = alpha[k * heads + h] * std::exp(shift[static_cast<size_t>(k - begin)] - running_max) / sum;
    }
  }
  return alpha;
}

class OnlineSoftmaxFloat32 final : public System {
 public:
  std::string name() const override { return "cpu_float32_online_softmax"; }
  bool supports(const std::string& target) const override { return float32_.supports(target); }
  Precision precision(const std::string&) const override { return Precision::float32; }
  Result evaluate(const Case& c) override {
    Result r = float32_.evaluate(c);  // validates the case; every other target is cpu_float32
    if (!r.ok() || c.target != "edge_softmax") return r;
    const Graph& g = *c.graph;
    const TensorF alpha = online_edge_softmax(g, cast<float>(c.inputs.at("logits")));
    r.outputs["alpha"] = cast<double>(alpha);
    if (c.grad_outputs.empty()) return r;
    const TensorF again = online_edge_softmax(g, cast<float>(c.inputs.at("logits")));
    const TensorF grad_alpha = cast<float>(c.grad_outputs.at("alpha"));
    const index_t heads = again.row_size();
    TensorF grad_logits(again.shape());
    for (index_t i = 0; i < g.n_dst(); ++i)
      for (index_t h = 0; h < heads; ++h) {
        float dot = 0.0f;
        for (index_t k = g.row_ptr()[i + 1]; k-- > g.row_ptr()[i];) dot += again[k * heads + h] * grad_alpha[k * heads + h];
        for (index_t k = g.row_ptr()[i]; k < g.row_ptr()[i + 1]; ++k)
          grad_logits[k * heads + h] = again[k * heads + h] * grad_alpha[k * heads + h] - again[k * heads + h] * dot;
      }
    r.gradients["logits"] = cast<double>(grad_logits);
    return r;
  }

 private:
  OracleCodeSystem float32_{"cpu_float32", Precision::float32};
};

}  // namespace

std::unique_ptr<System> make_cpu_float32_online_softmax_system() { return std::make_unique<OnlineSoftmaxFloat32>(); }

std::unique_ptr<System> make_oracle_system() {
  return std::make_unique<OracleCodeSystem>("oracle", Precision::float64);
}

std::unique_ptr<System> make_cpu_float32_system() {
  return std::make_unique<OracleCodeSystem>("cpu_float32", Precision::float32);
}

std::unique_ptr<System> make_cpu_float32_right_derivatives_system() {
  return std::make_unique<RightDerivativesFloat32>();
}

}  // namespace gnncheck
