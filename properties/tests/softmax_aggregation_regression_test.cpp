// segment_aggregation's softmax false alarm on PyTorch (torch adapter, float32; CUDA on an H100 and
// torch 1.13 on the CPU alike): t's gradient −0.5727 against −0.6680, 1.38× the measured bound, on a
// 4×5 graph of 63 features near 10³. PyTorch differentiates the softmax by autograd, whose backward
// cancels on near one-hot segments from terms of |grad_y|·|x|; the oracle's float32 code does not,
// so the measured model missed it. The floor that fixed it: checks/segment_softmax_floor.h. The case
// as it was saved: properties/tests/data/torch-segment_aggregation-differential-*.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "adapters/process_system.h"
#include "checks/checks.h"
#include "oracle/cpu_systems.h"
#include "oracle/targets.h"
#include "properties/counterexample.h"

namespace gnncheck::properties {
namespace {

const std::filesystem::path kCase =
    std::filesystem::path(GNNCHECK_PROPERTIES_TEST_DATA) / "torch-segment_aggregation-differential-8092577675970085";

// The float32 oracle's answer with t's gradient replaced by `grad_t`, declared float32.
class RecordedGradT final : public System {
 public:
  explicit RecordedGradT(double grad_t) : grad_t_(grad_t) {}
  std::string name() const override { return "recorded_grad_t"; }
  bool supports(const std::string& t) const override { return t == "segment_aggregation"; }
  Precision precision(const std::string&) const override { return Precision::float32; }
  Result evaluate(const Case& c) override {
    Result r = float32_->evaluate(c);
    if (r.ok() && r.gradients.count("t")) r.gradients["t"][0] = grad_t_;
    return r;
  }

 private:
  double grad_t_;
  std::unique_ptr<System> float32_ = make_cpu_float32_system();
};

// PyTorch's values: −0.572657466 on CUDA (H100), −0.572654724 on the CPU (exact: −0.668024563).
TEST(SoftmaxAggregationRegression, PyTorchsRecordedGradientsPassAndAWrongOneFails) {
  const SavedCase saved = load_counterexample(kCase);
  ASSERT_EQ(saved.c.target, "segment_aggregation");
  for (double recorded : {-0.572657466, -0.572654724}) {
    RecordedGradT system(recorded);
    const checks::Verdict v = checks::run_check(checks::CheckKind::differential, system, saved.c);
    EXPECT_TRUE(v.passed()) << recorded << ": " << v.message;
  }
  // The floor is γ·|grad_y|·|x|² per element: rigorous, and on values near 10³ far above the error
  // seen (about 10² against 0.095 here). On the same graph at |x| ≤ 1 it is small, and t's gradient
  // dropped fails.
  Case moderate = saved.c;
  for (double& value : moderate.inputs.at("x").values()) value *= 1e-3;
  RecordedGradT dropped(0.0);
  const checks::Verdict v = checks::run_check(checks::CheckKind::differential, dropped, moderate);
  EXPECT_EQ(v.conclusion, checks::Conclusion::fail) << v.message;
}

TEST(SoftmaxAggregationRegression, TheSavedCasePassesThroughTheTorchAdapter) {
  if (std::system(fmt::format("{} -c 'import torch' > /dev/null 2>&1", GNNCHECK_TEST_PYTHON).c_str()) != 0)
    GTEST_SKIP() << GNNCHECK_TEST_PYTHON << " cannot import torch (the adapter needs it)";
  auto system = make_process_system({GNNCHECK_TEST_PYTHON, std::string(GNNCHECK_TEST_SOURCE_DIR) + "/adapters/python/torch_adapter.py",
                                     "--device", "cpu"});
  ASSERT_TRUE(system->availability().available) << system->availability().reason;
  const SavedCase saved = load_counterexample(kCase);
  const checks::Verdict v = checks::run_check(checks::CheckKind::differential, *system, saved.c);
  EXPECT_TRUE(v.passed()) << v.message;
}

}  // namespace
}  // namespace gnncheck::properties
