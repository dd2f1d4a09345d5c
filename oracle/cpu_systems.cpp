#include "oracle/cpu_systems.h"

#include "oracle/layers/agnn.h"
#include "oracle/layers/gat.h"
#include "oracle/layers/gin.h"
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

// The oracle's float32 answer (which validates the case and gives the outputs), with the gradients
// of the layers that have a kink recomputed by the same layer code taking KinkSide::right.
class RightDerivativesFloat32 final : public System {
 public:
  std::string name() const override { return "cpu_float32_right_derivatives"; }
  bool supports(const std::string& target) const override { return float32_.supports(target); }
  Precision precision(const std::string&) const override { return Precision::float32; }
  Result evaluate(const Case& c) override {
    Result r = float32_.evaluate(c);
    const bool has_kink = c.target == "gin" || c.target == "gat" || c.target == "agnn";
    if (!r.ok() || c.grad_outputs.empty() || !has_kink) return r;
    namespace L = oracle::layers;
    const Attributes attrs = oracle::with_defaults(oracle::find_target(c.target).spec, c.attributes);
    const Graph& g = *c.graph;
    auto in = [&](const std::string& name) {
      const TensorMap& from = c.inputs.count(name) ? c.inputs : c.parameters;
      auto it = from.find(name);
      return it == from.end() ? TensorF{} : cast<float>(it->second);
    };
    const TensorF grad_y = cast<float>(c.grad_outputs.at("y"));
    auto set = [&](const std::string& name, const TensorF& t) {
      if (r.gradients.count(name)) r.gradients[name] = cast<double>(t);
    };
    if (c.target == "gin") {
      auto cfg = L::GinConfig::from_attributes(attrs);
      cfg.kink_side = L::KinkSide::right;
      const L::GinParameters<float> p{in("weight1"), in("bias1"), in("weight2"), in("bias2"), in("eps")};
      const auto grads = L::gin_backward(g, cfg, in("x"), p, grad_y);
      set("x", grads.grad_x);
      set("weight1", grads.grad.weight1);
      set("bias1", grads.grad.bias1);
      set("weight2", grads.grad.weight2);
      set("bias2", grads.grad.bias2);
      set("eps", grads.grad.eps);
    } else if (c.target == "gat") {
      auto cfg = L::GatConfig::from_attributes(attrs);
      cfg.kink_side = L::KinkSide::right;
      const L::GatParameters<float> p{in("weight"), in("att_src"), in("att_dst"), in("bias")};
      const auto grads = L::gat_backward(g, cfg, in("x"), p, grad_y);
      set("x", grads.grad_x);
      set("weight", grads.grad.weight);
      set("att_src", grads.grad.att_src);
      set("att_dst", grads.grad.att_dst);
      set("bias", grads.grad.bias);
    } else if (c.target == "agnn") {
      auto cfg = L::AgnnConfig::from_attributes(attrs);
      cfg.kink_side = L::KinkSide::right;
      const auto grads = L::agnn_backward(g, cfg, in("x"), in("beta"), grad_y);
      set("x", grads.grad_x);
      set("beta", grads.grad_beta);
    }
    return r;
  }

 private:
  OracleCodeSystem float32_{"cpu_float32", Precision::float32};
};

}  // namespace

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
