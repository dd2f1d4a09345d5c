#include "oracle/cpu_systems.h"

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

}  // namespace

std::unique_ptr<System> make_oracle_system() {
  return std::make_unique<OracleCodeSystem>("oracle", Precision::float64);
}

std::unique_ptr<System> make_cpu_float32_system() {
  return std::make_unique<OracleCodeSystem>("cpu_float32", Precision::float32);
}

}  // namespace gnncheck
