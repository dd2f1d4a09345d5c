// The finite-difference checker itself: it reproduces a known Jacobian, and it rejects a backward
// that is wrong in the ways published systems were wrong (A for Aᵀ, a missing gradient, a crash).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oracle/gradcheck.h"
#include "oracle/kink_arguments.h"
#include "oracle/random_case.h"
#include "oracle/spmm.h"

namespace gnncheck::oracle {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Result oracle_f64(const Case& c) { return evaluate(c, Precision::float64); }

// Directed chain 0 <- 1 <- 2 (A ≠ Aᵀ).
std::shared_ptr<const Graph> chain() {
  const std::vector<index_t> dst = {0, 1}, src = {1, 2};
  return std::make_shared<const Graph>(Graph::from_edges(3, 3, dst, src));
}

// The oracle with spmm's backward replaced by A·grad_y (TC-GNN's bug): right on symmetric graphs only.
Result spmm_backward_uses_a(const Case& c) {
  Result r = oracle_f64(c);
  if (r.ok() && !c.grad_outputs.empty()) r.gradients["x"] = spmm_forward(*c.graph, c.grad_outputs.at("y"));
  return r;
}

TEST(Gradcheck, JacobiansOfSpmmOnAChainAreTheAdjacencyMatrix) {
  const TargetDef& def = find_target("spmm");
  const Case c = make_random_case(def, chain(), {{"features", std::int64_t{1}}}, 3);
  const Jacobian numerical = numerical_jacobian(oracle_f64, c, def.spec, "x");
  const Jacobian analytical = analytical_jacobian(oracle_f64, c, def.spec, "x");
  // d y_i / d x_j = A_ij: y0 = x1, y1 = x2, y2 = 0. Linear, so the differences are exact here.
  EXPECT_THAT(numerical.values, ElementsAre(0, 1, 0, 0, 0, 1, 0, 0, 0));
  EXPECT_THAT(analytical.values, ElementsAre(0, 1, 0, 0, 0, 1, 0, 0, 0));
  EXPECT_EQ(numerical.row_label(2), "y[2]");
  const InputAgreement agreement = compare_jacobians(numerical, analytical, kGradcheckBound);
  EXPECT_TRUE(agreement.passed);
  EXPECT_EQ(agreement.worst_relative_error, 0.0);
  EXPECT_EQ(agreement.comparisons, 9);
}

TEST(Gradcheck, FullJacobianRejectsBackwardThatUsesAInsteadOfATranspose) {
  const TargetDef& def = find_target("spmm");
  const Case c = make_random_case(def, chain(), {}, 3);
  const GradcheckReport r = check_full_jacobian(spmm_backward_uses_a, c, def.spec);
  ASSERT_EQ(r.inputs.size(), 1u);
  EXPECT_FALSE(r.all_passed);
  EXPECT_FALSE(r.inputs[0].passed);
  EXPECT_EQ(r.inputs[0].worst_relative_error, 1.0);  // an entry that is 1 in Aᵀ and 0 in A
  EXPECT_THAT(r.inputs[0].worst_location, HasSubstr("/ d x["));
}

TEST(Gradcheck, RandomDirectionsRejectBackwardThatUsesAInsteadOfATranspose) {
  const TargetDef& def = find_target("spmm");
  const Case c = make_random_case(def, chain(), {}, 3);
  const GradcheckReport r = check_random_directions(spmm_backward_uses_a, c, def.spec);
  EXPECT_FALSE(r.all_passed);
  EXPECT_GT(r.inputs[0].worst_relative_error, 0.01);
  EXPECT_EQ(r.inputs[0].comparisons, 3);
}

TEST(Gradcheck, MissingGradientIsReportedAsFailure) {
  const TargetDef& def = find_target("spmm_ve");
  const Case c = make_random_case(def, chain(), {}, 3);
  const CaseEvaluator drops_edge_gradient = [](const Case& k) {
    Result r = oracle_f64(k);
    r.gradients.erase("edge_values");
    return r;
  };
  const GradcheckReport r = check_full_jacobian(drops_edge_gradient, c, def.spec);
  EXPECT_FALSE(r.all_passed);
  EXPECT_THAT(r.failure, HasSubstr("no gradient for 'edge_values'"));
}

TEST(Gradcheck, EvaluationErrorIsReportedAsFailure) {
  const TargetDef& def = find_target("spmm");
  const Case c = make_random_case(def, chain(), {}, 3);
  const CaseEvaluator fails = [](const Case&) {
    Result r;
    r.status = Status::crashed;
    r.message = "segmentation fault";
    return r;
  };
  for (const GradcheckReport& r : {check_full_jacobian(fails, c, def.spec), check_random_directions(fails, c, def.spec)}) {
    EXPECT_FALSE(r.all_passed);
    EXPECT_THAT(r.failure, HasSubstr("crashed: segmentation fault"));
  }
}

TEST(Gradcheck, NonFiniteGradientFails) {
  const TargetDef& def = find_target("edge_softmax");
  const Case c = make_random_case(def, chain(), {}, 3);
  const CaseEvaluator nan_gradient = [](const Case& k) {
    Result r = oracle_f64(k);
    if (r.gradients.count("logits")) r.gradients["logits"][0] = std::nan("");
    return r;
  };
  EXPECT_FALSE(check_full_jacobian(nan_gradient, c, def.spec).all_passed);
  EXPECT_FALSE(check_random_directions(nan_gradient, c, def.spec).all_passed);
}

TEST(Gradcheck, CompareRefusesJacobiansOfDifferentShapes) {
  Jacobian a{"x", {"y"}, {0, 2}, 2, 1, {0, 0}, {}, {}};
  Jacobian b{"x", {"y"}, {0, 1}, 1, 2, {0, 0}, {}, {}};
  EXPECT_THROW(compare_jacobians(a, b, kGradcheckBound), InternalError);
}

TEST(Gradcheck, AbsentOptionalParameterIsLeftOut) {
  // gcn with bias = false: the case has no bias, so the gradcheck compares weight and x only.
  const TargetDef& def = find_target("gcn");
  const Case c = make_random_case(def, chain(), {{"in_features", std::int64_t{2}}, {"out_features", std::int64_t{2}},
                                                 {"bias", false}},
                                  3);
  ASSERT_FALSE(c.parameters.count("bias"));
  EXPECT_THAT(differentiable_inputs(def.spec, c), ::testing::Not(::testing::Contains("bias")));
  for (const GradcheckReport& r : {check_full_jacobian(oracle_f64, c, def.spec), check_random_directions(oracle_f64, c, def.spec)}) {
    EXPECT_TRUE(r.all_passed) << r.failure;
    EXPECT_EQ(r.inputs.size(), differentiable_inputs(def.spec, c).size());
    for (const InputAgreement& a : r.inputs) EXPECT_NE(a.input, "bias");
  }
}

// One destination with two in-edges whose logits differ by 40: the attention is one-hot up to
// e^-40 ≈ 4e-18, so every Jacobian entry is ~4e-18 while the difference quotient's rounding noise
// is ~1e-11. The absolute floor judges such a block by what the differences resolve.
Case saturated_softmax_case() {
  const std::vector<index_t> dst = {0, 0}, src = {0, 1};
  const TargetDef& def = find_target("edge_softmax");
  Case c = make_random_case(def, std::make_shared<const Graph>(Graph::from_edges(1, 2, dst, src)), {}, 3);
  c.inputs.at("logits") = Tensor({2, 1}, 0.0);
  c.inputs.at("logits")[1] = 40.0;
  return c;
}

TEST(Gradcheck, SaturatedSoftmaxPassesThroughTheAbsoluteFloor) {
  const TargetDef& def = find_target("edge_softmax");
  const Case c = saturated_softmax_case();
  const Jacobian numerical = numerical_jacobian(oracle_f64, c, def.spec, "logits");
  ASSERT_EQ(numerical.column_resolution.size(), 2u);
  // 64 · 2^-53 · max|α| (= 1) / 2^-18 = 2^-29
  EXPECT_DOUBLE_EQ(numerical.column_resolution[0], std::ldexp(1.0, -29));
  const GradcheckReport r = check_full_jacobian(oracle_f64, c, def.spec);
  EXPECT_TRUE(r.all_passed) << r.inputs[0].worst_location << " " << r.inputs[0].worst_relative_error;
}

TEST(Gradcheck, WrongBackwardOnASaturatedSoftmaxStillFails) {
  // A backward off by 1e-6 on the same case: far above the floor (2^-29 ≈ 1.9e-9).
  const TargetDef& def = find_target("edge_softmax");
  const CaseEvaluator off = [](const Case& k) {
    Result r = oracle_f64(k);
    if (r.gradients.count("logits")) r.gradients["logits"][0] += 1e-6;
    return r;
  };
  EXPECT_FALSE(check_full_jacobian(off, saturated_softmax_case(), def.spec).all_passed);
}

// A GIN case whose ReLU pre-activation z1[0, f] sits at `at` (bias1[f] moved by the offset).
Case gin_case_with_z1_at(double at, index_t f = 0) {
  const TargetDef& def = find_target("gin");
  Case c = make_random_case(def, chain(), {}, 11);
  const KinkArguments k = kink_arguments(c);
  EXPECT_LT(f, c.parameters.at("bias1").size());
  c.parameters.at("bias1")[f] += at - k.offsets[static_cast<size_t>(f)];  // argument n = i·width + f, i = 0
  return c;
}

TEST(Gradcheck, KinkBetweenTwoCasesIsASignChangeOfAKinkArgument) {
  EXPECT_TRUE(kink_between(gin_case_with_z1_at(-1e-3), gin_case_with_z1_at(1e-3)));
  EXPECT_FALSE(kink_between(gin_case_with_z1_at(1e-3), gin_case_with_z1_at(2e-3)));
  const Case spmm = make_random_case(find_target("spmm"), chain(), {}, 3);
  EXPECT_TRUE(kink_arguments(spmm).offsets.empty());  // no kink in spmm: never between
  EXPECT_FALSE(kink_between(spmm, spmm));
  // LeakyReLU with slope 1 is the identity: no kink.
  const Case linear = make_random_case(find_target("gat"), chain(), Attributes{{"negative_slope", 1.0}}, 3);
  EXPECT_TRUE(kink_arguments(linear).offsets.empty());
}

TEST(Gradcheck, AColumnWhoseEveryStepCrossesAKinkIsLeftOutAndCounted) {
  // z1[0, 0] within rounding of 0: every step of bias1[0] crosses ReLU's kink, and the quotient mixes
  // the slopes 0 and 1 (before: a relative error of order 0.5, a false alarm on a correct backward).
  const TargetDef& def = find_target("gin");
  const Case c = gin_case_with_z1_at(0.0);
  const Jacobian numerical = numerical_jacobian(oracle_f64, c, def.spec, "bias1");
  ASSERT_EQ(numerical.column_crosses_kink.size(), static_cast<size_t>(numerical.cols));
  EXPECT_EQ(numerical.column_crosses_kink[0], 1);
  for (index_t j = 1; j < numerical.cols; ++j) EXPECT_EQ(numerical.column_crosses_kink[static_cast<size_t>(j)], 0) << j;
  const GradcheckReport r = check_full_jacobian(oracle_f64, c, def.spec);
  ASSERT_TRUE(r.all_passed) << r.inputs[0].worst_location;
  for (const InputAgreement& in : r.inputs) {
    if (in.input != "bias1") continue;
    EXPECT_EQ(in.left_out_at_kinks, 1);
    EXPECT_EQ(in.comparisons, numerical.rows * (numerical.cols - 1));
  }
}

TEST(Gradcheck, AKinkAHalvedStepAvoidsIsComparedAtThatStep) {
  // z1[0, 0] = 1e-7: steps of bias1[0] down to 2^-23 ≈ 1.2e-7 cross it, 2^-24 does not; the column
  // is compared at that step, and passes. At 1e-9 even 2^-26, the last step tried, crosses.
  const TargetDef& def = find_target("gin");
  EXPECT_EQ(numerical_jacobian(oracle_f64, gin_case_with_z1_at(1e-9), def.spec, "bias1").column_crosses_kink.at(0), 1);
  const Case c = gin_case_with_z1_at(1e-7);
  const Jacobian numerical = numerical_jacobian(oracle_f64, c, def.spec, "bias1");
  EXPECT_TRUE(numerical.column_crosses_kink.empty());
  EXPECT_TRUE(check_full_jacobian(oracle_f64, c, def.spec).all_passed);
}

TEST(Gradcheck, AWrongBackwardNearAKinkStillFails) {
  // Leaving out the columns at a kink must not hide a wrong gradient elsewhere in the same input.
  const TargetDef& def = find_target("gin");
  const CaseEvaluator off = [](const Case& k) {
    Result r = oracle_f64(k);
    if (r.gradients.count("bias1") && r.gradients["bias1"].size() > 1) r.gradients["bias1"][1] *= 1.01;
    return r;
  };
  EXPECT_FALSE(check_full_jacobian(off, gin_case_with_z1_at(0.0), def.spec).all_passed);
}

TEST(Gradcheck, UnknownInputIsAnInputError) {
  const TargetDef& def = find_target("spmm");
  const Case c = make_random_case(def, chain(), {}, 3);
  EXPECT_THROW(numerical_jacobian(oracle_f64, c, def.spec, "no_such_input"), InputError);
}

}  // namespace
}  // namespace gnncheck::oracle
