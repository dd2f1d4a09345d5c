// The self-consistency checks (metamorphic, adjoint, state) compare the system's answers with each
// other. Their bounds come from the exact answer's terms, which are ~0 where the exact answer is 0;
// a system computing another function rounds its own sums there. These tests hold the checks to
// what they claim: a backward that is linear but wrong passes linearity and fails differential, and
// a failure on a case whose forward already disagrees with the oracle says that first.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "adapters/replicas/replicas.h"
#include "checks/checks.h"
#include "checks/tests/test_systems.h"
#include "core/graph.h"
#include "oracle/cpu_systems.h"
#include "oracle/random_case.h"

namespace gnncheck::checks {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Every destination reads source 0 and one other: column 0 is long, most columns are empty, so the
// exact Aᵀ·ȳ is 0 on most rows while A·ȳ is not.
Case star_spmm_case(std::uint64_t seed) {
  const std::vector<index_t> dst = {0, 1, 2, 3, 4, 5, 1, 3};
  const std::vector<index_t> src = {0, 0, 0, 0, 0, 0, 2, 4};
  auto graph = std::make_shared<const Graph>(Graph::from_edges(6, 6, dst, src));
  return oracle::make_random_case(oracle::find_target("spmm"), graph, {{"features", std::int64_t{4}}}, seed);
}

TEST(SelfConsistency, ALinearButWrongBackwardPassesLinearityAndFailsDifferential) {
  // A·ḡ for Aᵀ·ḡ, computed as a TF32 kernel: linear in ḡ, so linearity holds up to its own rounding.
  auto wrong = make_replica("tcgnn_backward_uses_A", std::make_unique<testing::Tf32Emulation>());
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const Case c = star_spmm_case(seed);
    const Verdict linear = metamorphic_linearity(*wrong, c);
    EXPECT_TRUE(linear.passed()) << "seed " << seed << ": " << linear.message;
    const Verdict diff = differential(*wrong, c);
    EXPECT_EQ(diff.conclusion, Conclusion::fail) << "seed " << seed;
  }
}

// A forward 1.5× too large and a backward that is not linear: linearity fails, and its message
// first says the forward already disagrees with the oracle.
class WrongForwardNonlinearBackward final : public System {
 public:
  std::string name() const override { return "wrong_forward_nonlinear_backward"; }
  bool supports(const std::string&) const override { return true; }
  Precision precision(const std::string&) const override { return Precision::float32; }
  Result evaluate(const Case& c) override {
    Result r = oracle::evaluate(c, Precision::float32);
    for (auto& [name, y] : r.outputs)
      for (double& v : y.values()) v *= 1.5;
    for (auto& [name, g] : r.gradients)
      for (double& v : g.values()) v += v * std::abs(v);
    return r;
  }
};

TEST(SelfConsistency, AFailureOnACaseWhoseForwardDisagreesSaysSoFirst) {
  WrongForwardNonlinearBackward wrong;
  const Verdict v = metamorphic_linearity(wrong, star_spmm_case(3));
  ASSERT_EQ(v.conclusion, Conclusion::fail) << v.message;
  EXPECT_THAT(v.message, StartsWith("The system's own forward already disagrees with the oracle on this case (output y at "));
  EXPECT_THAT(v.message, HasSubstr("the backward is not linear in the output gradient"));
  // A correct forward with the same backward: no such sentence.
  class NonlinearBackward final : public System {
   public:
    std::string name() const override { return "nonlinear_backward"; }
    bool supports(const std::string&) const override { return true; }
    Precision precision(const std::string&) const override { return Precision::float32; }
    Result evaluate(const Case& c) override {
      Result r = oracle::evaluate(c, Precision::float32);
      for (auto& [name, g] : r.gradients)
        for (double& x : g.values()) x += x * std::abs(x);
      return r;
    }
  } only_backward;
  const Verdict w = metamorphic_linearity(only_backward, star_spmm_case(3));
  ASSERT_EQ(w.conclusion, Conclusion::fail) << w.message;
  EXPECT_THAT(w.message, ::testing::Not(HasSubstr("forward already disagrees")));
}

}  // namespace
}  // namespace gnncheck::checks
