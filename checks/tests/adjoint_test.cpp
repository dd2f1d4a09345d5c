// The pieces behind "a verdict you can trust": the pure derivative probe, the kink screen, the
// verdict's conclusions, and the adjoint check's bound — which no system can widen with its own
// noise and which a correct system cannot exceed.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "oracle/cpu_systems.h"
#include "adapters/replicas/replicas.h"
#include "checks/checks.h"
#include "checks/derivative_probe.h"
#include "checks/kinks.h"
#include "checks/tests/test_systems.h"
#include "fixtures/generators.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::checks {
namespace {

// ---- classify_probe: one test per outcome ----

StepProbe step(double h, double quotient, double derivative, double jump, double resolution = 1e-12) {
  return StepProbe{h, quotient, derivative, jump, resolution};
}

TEST(DerivativeProbe, AgreesWithinTheBound) {
  // Smooth: q = τh², the jump halves with the step.
  const DerivativeProbe p{step(0.5e-3, 2.0 + 0.25e-6, 2.0, 1e-4), step(1e-3, 2.0 + 1e-6, 2.0, 2e-4),
                          step(2e-3, 2.0 + 4e-6, 2.0, 4e-4), 2e-6};
  const ProbeFinding f = classify_probe(p);
  EXPECT_EQ(f.outcome, ProbeOutcome::agrees) << f.reason;
}

TEST(DerivativeProbe, DisagreesWhereTheForwardIsSmooth) {
  // A wrong derivative: q ≈ 0.5 at every step, curvature small and falling with the step.
  const DerivativeProbe p{step(0.5e-3, 2.0, 1.5, 1e-4), step(1e-3, 2.0, 1.5, 2e-4), step(2e-3, 2.0, 1.5, 4e-4), 1e-3};
  const ProbeFinding f = classify_probe(p);
  EXPECT_EQ(f.outcome, ProbeOutcome::disagrees) << f.reason;
  EXPECT_NE(f.reason.find("smooth"), std::string::npos) << f.reason;
}

TEST(DerivativeProbe, KinkWhenTheOneSidedSlopesDifferByAConstantJump) {
  // ReLU crossed within the step: the slopes differ by 0.8 at every step, and q is of that size.
  const DerivativeProbe p{step(0.5e-3, 2.4, 2.0, 0.8), step(1e-3, 2.4, 2.0, 0.8), step(2e-3, 2.4, 2.0, 0.8), 1e-3};
  const ProbeFinding f = classify_probe(p);
  EXPECT_EQ(f.outcome, ProbeOutcome::kink) << f.reason;
}

TEST(DerivativeProbe, KinksNearXMakeTheJumpGrowAsTheStepShrinks) {
  const DerivativeProbe p{step(0.5e-3, 2.4, 2.0, 1.0), step(1e-3, 2.3, 2.0, 0.5), step(2e-3, 2.2, 2.0, 0.2), 1e-3};
  EXPECT_EQ(classify_probe(p).outcome, ProbeOutcome::kink);
}

TEST(DerivativeProbe, SingularWhenTheQuotientsGrowAsTheStepShrinks) {
  // x/‖x‖ at 0: the quotient doubles each time the step halves; no constant jump.
  const DerivativeProbe p{step(0.5e-3, 40, 1, 0.1), step(1e-3, 20, 1, 0.4), step(2e-3, 10, 1, 1.6), 1e-3};
  const ProbeFinding f = classify_probe(p);
  EXPECT_EQ(f.outcome, ProbeOutcome::singular) << f.reason;
}

TEST(DerivativeProbe, NonFiniteNumbersDisagree) {
  const DerivativeProbe p{step(0.5e-3, NAN, 1, 0), step(1e-3, NAN, 1, 0), step(2e-3, NAN, 1, 0), 1e9};
  EXPECT_EQ(classify_probe(p).outcome, ProbeOutcome::disagrees);
}

// ---- verdict conclusions ----

TensorComparison comparison(Agreement a) {
  TensorComparison tc;
  tc.tensor = "gradient x";
  tc.input = "x";
  tc.is_gradient = true;
  tc.agreement = a;
  tc.elements = 1;
  if (a == Agreement::inconclusive) tc.reason = "a kink";
  if (a == Agreement::disagrees) tc.worst_ratio = 3;
  return tc;
}

TEST(Conclusions, OnlyAConclusiveAgreementPasses) {
  Verdict all_inconclusive;
  all_inconclusive.comparisons = {comparison(Agreement::inconclusive), comparison(Agreement::inconclusive)};
  summarize(all_inconclusive);
  EXPECT_EQ(all_inconclusive.conclusion, Conclusion::inconclusive);
  EXPECT_FALSE(all_inconclusive.passed());
  EXPECT_EQ(all_inconclusive.detail, "a kink");

  Verdict mixed;
  mixed.comparisons = {comparison(Agreement::inconclusive), comparison(Agreement::agrees)};
  summarize(mixed);
  EXPECT_TRUE(mixed.passed());
  EXPECT_EQ(inconclusive_comparisons(mixed), 1);
  EXPECT_NE(one_line(mixed).find("1 of 2 comparisons inconclusive"), std::string::npos) << one_line(mixed);

  Verdict failing;
  failing.comparisons = {comparison(Agreement::inconclusive), comparison(Agreement::agrees), comparison(Agreement::disagrees)};
  summarize(failing);
  EXPECT_EQ(failing.conclusion, Conclusion::fail);

  Verdict nothing;
  summarize(nothing);
  EXPECT_EQ(nothing.conclusion, Conclusion::inconclusive);

  Verdict crashed;
  crashed.system_status = Status::crashed;
  crashed.comparisons = {comparison(Agreement::agrees)};
  summarize(crashed);
  EXPECT_EQ(crashed.conclusion, Conclusion::error);
  crashed.system_status = Status::unsupported;
  summarize(crashed);
  EXPECT_EQ(crashed.conclusion, Conclusion::unsupported);

  for (auto [c, name] : {std::pair{Conclusion::pass, "pass"}, {Conclusion::fail, "fail"}, {Conclusion::error, "error"},
                         {Conclusion::unsupported, "unsupported"}, {Conclusion::not_applicable, "not applicable"},
                         {Conclusion::inconclusive, "inconclusive"}})
    EXPECT_EQ(to_string(c), name);
}

TEST(Conclusions, ComparisonsNameTheirInputAndAnEmptyCaseIsNotApplicable) {
  const std::vector<index_t> dst{0, 1, 2}, src{1, 2, 3};
  auto g = std::make_shared<const Graph>(Graph::from_edges(4, 4, dst, src));
  const Case c = oracle::make_random_case(oracle::find_target("spmm_ve"), g, {}, 3);
  auto float32 = make_cpu_float32_system();
  const Verdict v = differential(*float32, c);
  ASSERT_TRUE(v.passed()) << v.message;
  bool saw_edge_gradient = false;
  for (const auto& tc : v.comparisons) {
    EXPECT_FALSE(tc.input.empty()) << tc.tensor;
    saw_edge_gradient = saw_edge_gradient || (tc.is_gradient && tc.input == "edge_values");
  }
  EXPECT_TRUE(saw_edge_gradient);

  const std::vector<index_t> none;
  auto empty = std::make_shared<const Graph>(Graph::from_edges(0, 0, none, none));
  const Case nothing = oracle::make_random_case(oracle::find_target("spmm"), empty, {}, 3);
  for (const Verdict& none : {differential(*float32, nothing), adjoint(*float32, nothing)}) {
    EXPECT_EQ(none.conclusion, Conclusion::not_applicable) << to_string(none.check);
    EXPECT_NE(none.detail.find("nothing to compare"), std::string::npos) << to_string(none.check) << ": " << none.detail;
  }
  // An edge tensor empty beside node tensors that are not: the node gradients decide.
  const Case edgeless = oracle::make_random_case(oracle::find_target("sddmm_add"),
                                                 std::make_shared<const Graph>(Graph::from_edges(3, 3, none, none)), {}, 3);
  EXPECT_EQ(differential(*float32, edgeless).conclusion, Conclusion::pass);
  // Empty and a doubt beside it stays a doubt: an output beyond the range, with an empty gradient.
  Verdict mixed;
  mixed.comparisons.resize(2);
  mixed.comparisons[0].agreement = mixed.comparisons[1].agreement = Agreement::inconclusive;
  mixed.comparisons[0].empty = true;
  summarize(mixed);
  EXPECT_EQ(mixed.conclusion, Conclusion::inconclusive);
}

// ---- kinks ----

std::shared_ptr<const Graph> square_graph(index_t n, std::uint64_t seed) {
  return std::make_shared<const Graph>(erdos_renyi_m(n, n, 2 * n, seed));
}

// Small integers everywhere: ReLU pre-activations land exactly on 0.
Case integer_case(const std::string& target, std::uint64_t seed, Attributes attrs = {}) {
  const oracle::TargetDef& def = oracle::find_target(target);
  Case c = oracle::make_random_case(def, square_graph(6, seed), attrs, seed);
  const auto is_index = [&def](const std::string& name) {  // an edge's relation stays a relation
    for (const auto& slot : def.spec.inputs)
      if (slot.name == name) return !slot.index_range.empty();
    return false;
  };
  for (TensorMap* m : {&c.inputs, &c.parameters, &c.grad_outputs})
    for (auto& [name, t] : *m)
      if (!is_index(name))
        for (double& v : t.values()) v = std::round(2 * v);
  return c;
}

TEST(Kinks, ExactZerosAreNearForEveryPrecisionAndUniformValuesAreNot) {
  int exact = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto k = nearest_kink(integer_case("gin", seed), Precision::float64);
    ASSERT_TRUE(k);
    if (k->distance == 0) {
      ++exact;
      EXPECT_TRUE(k->near) << k->description;
      EXPECT_NE(k->description.find("ReLU pre-activation z1"), std::string::npos) << k->description;
    }
  }
  EXPECT_GT(exact, 5);
  const Case uniform = oracle::make_random_case(oracle::find_target("gat"), square_graph(8, 2), {}, 2);
  const auto k = nearest_kink(uniform, Precision::float32);
  ASSERT_TRUE(k);
  EXPECT_FALSE(k->near) << k->description;
  EXPECT_FALSE(nearest_kink(uniform, Precision::float64)->near);
  EXPECT_FALSE(nearest_kink(oracle::make_random_case(oracle::find_target("spmm"), square_graph(8, 2), {}, 2),
                            Precision::float32));
  Case linear_gat = uniform;
  linear_gat.attributes.set("negative_slope", 1.0);
  EXPECT_FALSE(nearest_kink(linear_gat, Precision::float32));
}

// Every target with a kink, on cases that sit exactly on it: GIN and GAT with small integers
// (pre-activations and logits exactly 0, for every LeakyReLU slope but 1), AGNN with a row of x
// whose float32 norm is exactly the floor (√(v²) = v in IEEE arithmetic). The control system takes
// the other one-sided derivative there, so its gradients differ from cpu_float32's by O(1); both
// must pass (or be not applicable to) every check.
std::vector<Case> cases_on_kinks() {
  std::vector<Case> out;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    out.push_back(integer_case("gin", seed));
    out.push_back(integer_case("gine", seed));
    out.push_back(integer_case("gin", seed, {{"aggr", std::string(seed % 2 ? "max" : "mean")}}));
    out.push_back(integer_case("gine", seed, {{"aggr", std::string("max")}}));
    out.push_back(integer_case("sage", seed, {{"aggr", std::string("max")}, {"project", seed % 2 == 0}}));
    out.push_back(integer_case("gat", seed, {{"negative_slope", seed % 2 ? 0.2 : 0.01}, {"heads", std::int64_t{2}}}));
    if (seed % 4 == 0) out.push_back(integer_case("gat", seed, {{"attn_dropout", 0.3}, {"dropout_seed", std::int64_t{5}}}));
    out.push_back(integer_case("gatv2", seed, {{"negative_slope", seed % 2 ? 0.2 : 0.01}, {"heads", std::int64_t{2}}}));
    out.push_back(integer_case("rgat", seed, {{"negative_slope", seed % 2 ? 0.2 : 0.01}, {"heads", std::int64_t{2}}}));
    Case agnn = oracle::make_random_case(oracle::find_target("agnn"), square_graph(6, seed), {}, seed);
    Tensor& x = agnn.inputs.at("x");
    for (index_t c = 0; c < x.row_size(); ++c) x.at(1, c) = c == 0 ? static_cast<double>(1e-12f) : 0.0;
    out.push_back(agnn);
  }
  return out;
}

TEST(Kinks, TheOtherOneSidedDerivativeAtEveryKinkPassesEveryCheck) {
  auto control = make_cpu_float32_right_derivatives_system();
  auto float32 = make_cpu_float32_system();
  std::map<std::string, int> differs;  // by target: cases where the two conventions' gradients differ
  for (const Case& c : cases_on_kinks()) {
    const Result right = control->evaluate(c), left = float32->evaluate(c);
    ASSERT_TRUE(right.ok() && left.ok()) << right.message << left.message;
    EXPECT_EQ(right.outputs, left.outputs) << c.target;
    differs[c.target] += right.gradients != left.gradients ? 1 : 0;
    for (CheckKind kind : all_check_kinds()) {
      for (System* s : {control.get(), float32.get()}) {
        const Verdict v = run_check(kind, *s, c);
        EXPECT_TRUE(v.passed() || v.conclusion == Conclusion::not_applicable)
            << s->name() << " " << c.target << " seed " << c.seed << ": " << one_line(v) << "\n" << v.message;
      }
    }
  }
  for (const std::string target : {"gin", "gine", "sage", "gat", "agnn", "rgat"})
    EXPECT_GT(differs[target], 2) << target << ": the cases should sit exactly on the kinks";
}

// Away from kinks the control is cpu_float32 exactly: the convention is the only difference.
TEST(Kinks, TheControlSystemIsCpuFloat32AwayFromKinks) {
  auto control = make_cpu_float32_right_derivatives_system();
  auto float32 = make_cpu_float32_system();
  for (const auto& def : oracle::all_targets()) {  // every op and layer, so every output name
    const std::string& target = def.spec.name;
    const Case c = oracle::make_random_case(def, square_graph(8, 3), {}, 3);
    ASSERT_FALSE(nearest_kink(c, Precision::float32) && nearest_kink(c, Precision::float32)->near) << target;
    const Result right = control->evaluate(c), left = float32->evaluate(c);
    ASSERT_TRUE(right.ok()) << target << ": " << right.message;
    EXPECT_EQ(right.outputs, left.outputs) << target;
    EXPECT_EQ(right.gradients, left.gradients) << target;
  }
}

// ---- the adjoint bound: nothing the system says widens it ----

Case layer_case(const std::string& target, std::uint64_t seed, index_t n = 12) {
  return oracle::make_random_case(oracle::find_target(target), square_graph(n, seed), {}, seed);
}

// A forward random on every call, noisy on every call (10⁻² relative, 1.7·10⁵ float32 roundoffs),
// or noisy as a function of its input fails adjoint. Noise far below that is summed with random
// signs in ⟨ȳ, J·u⟩ while the bound sums |ȳ|·B: it fails state_repeat (every call) or differential
// (a function of the input) instead, both element-wise.
TEST(AdjointBound, ARandomOrNoisyForwardFails) {
  for (const std::string target : {"spmm", "spmm_ve", "edge_softmax", "gcn", "gin", "gine", "gat", "gatv2", "agnn"}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const Case c = layer_case(target, seed);
      testing::NoisyForward random(1.0, true), noisy(1e-2, true), repeatable_noise(1e-2, false);
      for (System* s : std::initializer_list<System*>{&random, &noisy, &repeatable_noise}) {
        const Verdict v = adjoint(*s, c);
        EXPECT_EQ(v.conclusion, Conclusion::fail) << s->name() << " " << one_line(v);
      }
      testing::NoisyForward slightly_noisy(1e-4, true), slightly_wrong(1e-4, false);
      EXPECT_EQ(state_repeat(slightly_noisy, c).conclusion, Conclusion::fail) << target;
      EXPECT_EQ(differential(slightly_wrong, c).conclusion, Conclusion::fail) << target;
    }
  }
}

TEST(AdjointBound, ATf32WrongEdgeValueGradientFailsOnFortyNodeGraphs) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const Case c = oracle::make_random_case(oracle::find_target("spmm_ve"), square_graph(40, seed),
                                            {{"heads", std::int64_t{2}}, {"features", std::int64_t{16}}}, seed);
    testing::Tf32Emulation correct;
    const Verdict ok = adjoint(correct, c);
    EXPECT_TRUE(ok.passed()) << one_line(ok) << "\n" << ok.message;
    auto wrong = make_replica("tcgnn_agnn_attention_grad", std::make_unique<testing::Tf32Emulation>());
    const Verdict v = adjoint(*wrong, c);
    ASSERT_EQ(v.conclusion, Conclusion::fail) << one_line(v);
    EXPECT_GT(v.metric, 10 * v.bound) << one_line(v);
    for (const auto& tc : v.comparisons)
      if (tc.input == "edge_values") { EXPECT_TRUE(tc.disagrees()) << tc.tensor; }
  }
}

TEST(AdjointBound, CorrectSystemsStayFarBelowItAcrossKinkyLayers) {
  // The layers with kinks, on the non-square block family that failed before (40×90, p = 0.08,
  // duplicate edges, empty rows), in float32 and TF32. TF32's rounding of a pre-activation is
  // ~2^13 times float32's: on these layers some pre-activation is within it of 0 in most cases, and
  // the gradients before it are then inconclusive (shown, never passed); the rest must pass.
  auto float32 = make_cpu_float32_system();
  testing::Tf32Emulation tf32;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    auto g = std::make_shared<const Graph>(make_graph(
        "erdos_renyi", {{"n_dst", std::int64_t{40}}, {"n_src", std::int64_t{90}}, {"p", 0.08},
                        {"duplicate_fraction", 0.05}, {"empty_row_fraction", 0.1}},
        seed));
    for (const std::string target : {"gin", "gat", "agnn", "sage"}) {
      const Case c = oracle::make_random_case(oracle::find_target(target), g, {}, seed);
      for (System* s : std::initializer_list<System*>{float32.get(), &tf32}) {
        const Verdict v = adjoint(*s, c);
        EXPECT_TRUE(v.passed()) << one_line(v) << "\n" << v.message;
        EXPECT_LT(v.metric, 0.5 * v.bound) << one_line(v);
        if (s == float32.get()) { EXPECT_EQ(inconclusive_comparisons(v), 0) << one_line(v); }
      }
    }
  }
}

}  // namespace
}  // namespace gnncheck::checks
