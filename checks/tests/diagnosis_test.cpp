// The diagnosis of a failure (checks/diagnosis.h): every CPU replica that one evaluation shows is
// named by its own bug class after a failing check; correct systems never get a diagnosis; a wrong
// answer that matches no variant says so, with what its wrong elements share in graph terms.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/replicas/replicas.h"
#include "checks/checks.h"
#include "checks/diagnosis.h"
#include "oracle/cpu_systems.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::checks {
namespace {

using ::testing::HasSubstr;

// 6 nodes: directed (A ≠ Aᵀ), in- and out-degrees that differ, a duplicate edge (1 ← 2 twice), a
// self-loop at 3, node 5 without in-edges.
std::shared_ptr<const Graph> square_graph() {
  const std::vector<index_t> dst{0, 0, 1, 1, 1, 2, 3, 3, 4, 4, 0};
  const std::vector<index_t> src{1, 2, 2, 2, 0, 5, 3, 4, 5, 1, 5};
  return std::make_shared<const Graph>(Graph::from_edges(6, 6, dst, src));
}

// 4 destinations, 7 sources: sources ≥ 4 and their edges are what a square-only backward misses.
std::shared_ptr<const Graph> wide_graph() {
  const std::vector<index_t> dst{0, 0, 1, 1, 2, 3, 3, 3};
  const std::vector<index_t> src{1, 5, 6, 2, 4, 0, 3, 6};
  return std::make_shared<const Graph>(Graph::from_edges(4, 7, dst, src));
}

// A star of 1200 nodes in both directions: a row and a column of 1199 edges.
std::shared_ptr<const Graph> hub_graph() {
  std::vector<index_t> dst, src;
  for (index_t j = 1; j < 1200; ++j) {
    dst.push_back(0), src.push_back(j);
    dst.push_back(j), src.push_back(0);
  }
  return std::make_shared<const Graph>(Graph::from_edges(1200, 1200, dst, src));
}

// 1000 copies of the edge 0 <- 1: a row and a column of 1000 equal terms.
std::shared_ptr<const Graph> parallel_edges_graph() {
  const std::vector<index_t> dst(1000, 0), src(1000, 1);
  return std::make_shared<const Graph>(Graph::from_edges(2, 2, dst, src));
}

std::shared_ptr<const Graph> graph_for(const ReplicaInfo& info) {
  if (info.name == "backward_assumes_square") return wide_graph();
  if (info.name == "hub_row_race") return hub_graph();
  if (info.name == "half_sums_in_float16") return parallel_edges_graph();
  return square_graph();
}

Attributes attributes_for(const oracle::TargetDef& def) {
  Attributes a;
  for (const auto& spec : def.spec.attributes)
    if (spec.name == "heads") a.set("heads", std::int64_t{2});
  return a;
}

// Values in small integers where the bug shows only at ties.
Case case_for(const ReplicaInfo& info, const oracle::TargetDef& def, std::uint64_t seed) {
  if (info.values != ReplicaInfo::Values::any) {  // 32: replica_detection_test's case with the values it needs
    const std::vector<index_t> dst = {0, 0, 0, 1, 1, 2, 3, 3}, src = {2, 1, 2, 0, 4, 0, 3, 1};
    Attributes a;
    for (const auto& spec : def.spec.attributes) {
      if (spec.name == "out_features") a.set(spec.name, std::int64_t{33});
      if (spec.name == "in_features") a.set(spec.name, std::int64_t{5});
      if (spec.name == "heads") a.set(spec.name, std::int64_t{2});
    }
    Case c = oracle::make_random_case(def, std::make_shared<const Graph>(Graph::from_edges(5, 5, dst, src)), a, seed);
    reveal_values(info, c);
    return c;
  }
  const auto graph = graph_for(info);
  Case c = oracle::make_random_case(def, graph, revealing_attributes(info, def.spec, *graph, attributes_for(def)), seed);
  if (info.needs_tied_values) oracle::round_to_small_integers(c);
  reveal_values(info, c);
  return c;
}

// The check a replica's failure is diagnosed after: numerics for the overflow, state_interleaved for
// state left by the previous call, differential otherwise.
CheckKind check_for(const ReplicaInfo& info) {
  if (info.after_previous_call) return CheckKind::state_interleaved;
  return info.expected_check == "numerics" ? CheckKind::numerics : CheckKind::differential;
}

TEST(Diagnosis, EachCpuReplicaRunThroughAFailingCheckIsNamedByItsOwnClass) {
  int diagnosed = 0;
  double slowest = 0;
  for (const ReplicaInfo& info : replica_catalogue()) {
    if (!info.single_evaluation && !info.after_previous_call) continue;
    for (const std::string& target : info.targets) {
      const oracle::TargetDef& def = oracle::find_target(target);
      auto sys = make_replica(info.name, make_cpu_float32_system());
      const CheckKind kind = check_for(info);
      // The first of a few seeds on which the check fails (the hub race loses updates at random).
      std::optional<Case> failing;
      for (std::uint64_t seed = 1; seed <= 12 && !failing; ++seed) {
        const Case c = case_for(info, def, seed);
        const Verdict v = run_check(kind, *sys, c);
        if (v.conclusion == Conclusion::fail) failing = c;
      }
      ASSERT_TRUE(failing) << info.name << " on " << target << ": no failing case to diagnose";
      const std::optional<Diagnosis> d =
          diagnose_failure(kind, *make_replica(info.name, make_cpu_float32_system()), *failing, replica_variants(target), {});
      ASSERT_TRUE(d) << info.name << " on " << target;
      EXPECT_TRUE(d->matched) << info.name << " on " << target << ": " << d->text;
      EXPECT_EQ(d->bug_class, info.bug_class) << info.name << " on " << target << ": " << d->text;
      EXPECT_THAT(d->text, HasSubstr("Diagnosis: matches: "));
      EXPECT_LT(d->seconds, 5.0) << info.name << " on " << target;
      slowest = std::max(slowest, d->seconds);
      ++diagnosed;
    }
  }
  EXPECT_GE(diagnosed, 40);
  std::printf("%d replica × target failures diagnosed, the slowest in %.4f s\n", diagnosed, slowest);
}

TEST(Diagnosis, TheSimplestMatchIsNamedAndTheOthersListed) {
  // spmm with A for Aᵀ: the generic transform and replica 1 both reproduce it; the transform is simpler.
  auto sys = make_replica("tcgnn_backward_uses_A", make_cpu_float32_system());
  const Case c = oracle::make_random_case(oracle::find_target("spmm"), square_graph(), {}, 3);
  ASSERT_EQ(run_check(CheckKind::differential, *sys, c).conclusion, Conclusion::fail);
  const std::optional<Diagnosis> d = diagnose_failure(CheckKind::differential, *sys, c, replica_variants("spmm"), {});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->variant, "transposed_graph_in_backward");
  EXPECT_THAT(d->text, HasSubstr("backward uses A where Aᵀ is needed (the TC-GNN bug class)"));
  EXPECT_EQ(d->also_matching, std::vector<std::string>{"tcgnn_backward_uses_A"});
}

TEST(Diagnosis, TheCaseAsDrawnDecidesAmongTheMistakesAMinimalCaseFits) {
  // One edge 0 <- 1 with ḡ = (1, 0): A·ḡ is 0 everywhere, so "backward uses A" and "no gradient"
  // both fit the minimal case; the larger case it was shrunk from tells them apart.
  auto sys = make_replica("tcgnn_backward_uses_A", make_cpu_float32_system());
  const auto& def = oracle::find_target("spmm");
  const auto edge = std::make_shared<const Graph>(Graph::from_edges(2, 2, std::vector<index_t>{0}, std::vector<index_t>{1}));
  Case minimal = oracle::make_random_case(def, edge, {{"features", std::int64_t{1}}}, 5);
  minimal.grad_outputs.at("y") = Tensor({2, 1}, std::vector<double>{1.0, 0.0});
  ASSERT_EQ(run_check(CheckKind::differential, *sys, minimal).conclusion, Conclusion::fail);
  const std::optional<Diagnosis> alone = diagnose_failure(CheckKind::differential, *sys, minimal, replica_variants("spmm"), {});
  ASSERT_TRUE(alone && alone->matched);
  EXPECT_EQ(alone->bug_class, "gradient_dropped") << alone->text;  // the simplest fit of the minimal case alone

  const Case drawn = oracle::make_random_case(def, square_graph(), {}, 7);
  const std::optional<Diagnosis> d =
      diagnose_failure(CheckKind::differential, *sys, minimal, replica_variants("spmm"), {}, drawn);
  ASSERT_TRUE(d && d->matched);
  EXPECT_EQ(d->bug_class, "a_for_at") << d->text;
  EXPECT_EQ(d->matching_classes, std::vector<std::string>{"a_for_at"});
  EXPECT_THAT(d->ruled_out_as_drawn, ::testing::Contains("zero_gradient_x"));
  EXPECT_THAT(d->text, HasSubstr("Diagnosis: matches: backward uses A where Aᵀ is needed"));
  EXPECT_THAT(d->text, HasSubstr("fits the case as drawn too, which zero_gradient_x"));
}

TEST(Diagnosis, AnAnswerCloseToAnotherVariantOnlyWithinTheLongSumsRoundingIsNotNamedByIt) {
  // 1002 copies of one edge: the own rounding of a 1006-term TF32 sum would cover any answer, so it is
  // capped; the edge-value gradient off by 1/8 is named as such, not as a dropped gradient.
  const std::vector<index_t> dst(1002, 1), src(1002, 0);
  const auto multigraph = std::make_shared<const Graph>(Graph::from_edges(2, 2, dst, src));
  auto sys = make_replica("tf32_edge_value_grad", make_cpu_float32_system());
  const Case c = oracle::make_random_case(oracle::find_target("spmm_ve"), multigraph, {}, 11);
  ASSERT_EQ(run_check(CheckKind::differential, *sys, c).conclusion, Conclusion::fail);
  const std::optional<Diagnosis> d = diagnose_failure(CheckKind::differential, *sys, c, replica_variants("spmm_ve"), {});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->bug_class, "scaled_edge_gradient") << d->text;
  EXPECT_EQ(std::count(d->matching_classes.begin(), d->matching_classes.end(), "gradient_dropped"), 0) << d->text;
}

TEST(Diagnosis, CorrectSystemsNeverGetOne) {
  for (auto make : {make_oracle_system, make_cpu_float32_system}) {
    auto sys = make();
    for (const oracle::TargetDef& def : oracle::all_targets())
      for (const auto& graph : {square_graph(), hub_graph()})
        for (CheckKind kind : {CheckKind::differential, CheckKind::op_order, CheckKind::numerics}) {
          const Case c = oracle::make_random_case(def, graph, attributes_for(def), 7);
          EXPECT_FALSE(diagnose_failure(kind, *sys, c, replica_variants(def.spec.name), {}))
              << sys->name() << " on " << def.spec.name << " (" << to_string(kind) << ")";
        }
  }
}

// The float64 oracle with one planted mistake that no variant knows: its outputs (or its gradient of
// the edge values) moved by 1 where `wrong` says.
class PlantedMistake final : public System {
 public:
  enum class Where { rows_with_duplicates, heads_after_the_first };
  explicit PlantedMistake(Where where) : where_(where) {}
  std::string name() const override { return "planted_mistake"; }
  bool supports(const std::string&) const override { return true; }
  Precision precision(const std::string&) const override { return Precision::float64; }
  Result evaluate(const Case& c) override {
    Result r = oracle::evaluate(c);
    if (!r.ok()) return r;
    const Graph& g = *c.graph;
    if (where_ == Where::rows_with_duplicates) {
      Tensor& y = r.outputs.at("y");
      for (index_t i = 0; i < g.n_dst(); ++i) {
        std::set<index_t> seen;
        bool duplicate = false;
        for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e) duplicate = !seen.insert(g.col_idx()[e]).second || duplicate;
        if (duplicate) y.at(i, 0) += 1.0;
      }
    } else {
      Tensor& gw = r.gradients.at("edge_values");
      for (index_t e = 0; e < gw.rows(); ++e) gw.at(e, 1) += 1.0;
    }
    return r;
  }

 private:
  Where where_;
};

TEST(Diagnosis, AnAnswerNoVariantMatchesSaysSoAndWhatItsWrongElementsShare) {
  {
    PlantedMistake sys(PlantedMistake::Where::rows_with_duplicates);
    const Case c = oracle::make_random_case(oracle::find_target("spmm"), square_graph(), {}, 5);
    ASSERT_EQ(run_check(CheckKind::differential, sys, c).conclusion, Conclusion::fail);
    const std::optional<Diagnosis> d = diagnose_failure(CheckKind::differential, sys, c, replica_variants("spmm"), {});
    ASSERT_TRUE(d);
    EXPECT_FALSE(d->matched);
    EXPECT_GT(d->variants_tried, 0);
    EXPECT_THAT(d->text, HasSubstr("no known variant matches"));
    EXPECT_THAT(d->shared, ::testing::Contains("only rows with duplicate edges (and the duplicates themselves)")) << d->text;
    EXPECT_THAT(d->shared, ::testing::Not(::testing::Contains("only heads > 0")));
  }
  {
    PlantedMistake sys(PlantedMistake::Where::heads_after_the_first);
    const Case c = oracle::make_random_case(oracle::find_target("spmm_ve"), square_graph(), {{"heads", std::int64_t{2}}}, 5);
    ASSERT_EQ(run_check(CheckKind::differential, sys, c).conclusion, Conclusion::fail);
    const std::optional<Diagnosis> d = diagnose_failure(CheckKind::differential, sys, c, replica_variants("spmm_ve"), {});
    ASSERT_TRUE(d);
    EXPECT_FALSE(d->matched) << d->text;
    EXPECT_THAT(d->text, HasSubstr("no known variant matches"));
    EXPECT_THAT(d->shared, ::testing::Contains("only heads > 0")) << d->text;
  }
}

// A backward that doubles its gradient (the plugin with a planted bug of suites/tests): no variant of
// spmm is that, but its wrong values are all one factor of the exact ones, and the text says so.
class ScaledGradient final : public System {
 public:
  explicit ScaledGradient(double factor) : factor_(factor) {}
  std::string name() const override { return "scaled_gradient"; }
  bool supports(const std::string&) const override { return true; }
  Precision precision(const std::string&) const override { return Precision::float64; }
  Result evaluate(const Case& c) override {
    Result r = oracle::evaluate(c);
    if (r.ok() && r.gradients.count("x"))
      for (index_t k = 0; k < r.gradients.at("x").size(); ++k) r.gradients.at("x")[k] *= factor_;
    return r;
  }

 private:
  double factor_;
};

TEST(Diagnosis, AScaledAnswerIsSaidToBeOneConstantFactorOfTheExactOne) {
  for (double factor : {2.0, -1.0, 0.5}) {
    ScaledGradient sys(factor);
    const Case c = oracle::make_random_case(oracle::find_target("spmm"), square_graph(), {}, 5);
    ASSERT_EQ(run_check(CheckKind::differential, sys, c).conclusion, Conclusion::fail);
    const std::optional<Diagnosis> d = diagnose_failure(CheckKind::differential, sys, c, replica_variants("spmm"), {});
    ASSERT_TRUE(d);
    EXPECT_FALSE(d->matched) << d->text;
    EXPECT_THAT(d->text, HasSubstr(fmt::format("gradient x: the wrong values are {:.4g}× the exact ones", factor))) << d->text;
  }
  // A wrong answer that is no one factor (duplicates' rows shifted) gets no such sentence.
  PlantedMistake shifted(PlantedMistake::Where::rows_with_duplicates);
  const Case c = oracle::make_random_case(oracle::find_target("spmm"), square_graph(), {}, 5);
  const std::optional<Diagnosis> d = diagnose_failure(CheckKind::differential, shifted, c, replica_variants("spmm"), {});
  ASSERT_TRUE(d);
  EXPECT_THAT(d->text, ::testing::Not(HasSubstr("constant factor"))) << d->text;
}

// torch.segment_reduce's max backward (torch 1.13 to 2.x): every tied row gets the whole output
// gradient, and only a positive one is then divided by the count of ties. No variant reproduces
// that; the diagnosis says the wrong elements all sit at ties and that the gradient was copied there.
TEST(Diagnosis, AGradientCopiedToTiedEntriesIsSaidToBeTheTieClassWithoutAVariant) {
  Case c;
  c.target = "segment_reduce";
  const std::vector<index_t> dst = {0, 0, 1, 1}, src = {0, 0, 0, 0};
  c.graph = std::make_shared<const Graph>(Graph::from_edges(2, 1, dst, src));
  c.attributes = {{"reduce", std::string("max")}, {"features", std::int64_t{1}}};
  c.inputs["x"] = Tensor({4, 1}, {2, 2, 3, 3});
  c.grad_outputs["y"] = Tensor({2, 1}, {-1, 1});
  Result answer = oracle::evaluate(c);
  answer.gradients.at("x") = Tensor({4, 1}, {-1, -1, 0.5, 0.5});  // row 0 copied, row 1 split
  const std::optional<Diagnosis> d = diagnose_answer(c, answer, Precision::float32, {}, {});
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->matched) << d->text;
  EXPECT_THAT(d->text, HasSubstr("only gradient elements at the case's 2 ties")) << d->text;
  EXPECT_THAT(d->text, HasSubstr("at 1 of the 1 ties with a wrong element every tied candidate received the whole "
                                 "output gradient"))
      << d->text;
  EXPECT_THAT(d->text, HasSubstr("tie_gradient_copied")) << d->text;
  // A wrong gradient away from the ties says nothing of them.
  answer.gradients.at("x") = Tensor({4, 1}, {-1, 0, 0.5, 0.5});
  answer.outputs.at("y") = Tensor({2, 1}, {2, 4});
  const std::optional<Diagnosis> other = diagnose_answer(c, answer, Precision::float32, {}, {});
  ASSERT_TRUE(other);
  EXPECT_THAT(other->text, ::testing::Not(HasSubstr("ties of a max or min"))) << other->text;
}

// A system that computes one known-wrong variant of every target (the correct answer where it does not apply).
class ComputesVariant final : public System {
 public:
  explicit ComputesVariant(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return "computes_" + name_; }
  bool supports(const std::string&) const override { return true; }
  Precision precision(const std::string&) const override { return Precision::float64; }
  Result evaluate(const Case& c) override {
    for (const auto& v : oracle::entry_of(c).wrong_variants)
      if (v.name == name_)
        if (std::optional<Result> r = v.evaluate(c, {})) return *r;
    return oracle::evaluate(c);
  }

 private:
  std::string name_;
};

TEST(Diagnosis, ASystemComputingAGenericVariantGetsItsClassAmongTheMatches) {
  std::set<std::string> named;
  for (const oracle::TargetDef& def : oracle::all_targets())
    for (const auto& v : def.wrong_variants) {
      ComputesVariant sys(v.name);
      const Case c = oracle::make_random_case(def, square_graph(), attributes_for(def), 13);
      if (run_check(CheckKind::differential, sys, c).conclusion != Conclusion::fail) continue;  // equal here, or no case
      const std::optional<Diagnosis> d = diagnose_failure(CheckKind::differential, sys, c, replica_variants(def.spec.name), {});
      ASSERT_TRUE(d) << def.spec.name << ": " << v.name;
      EXPECT_THAT(d->matching_classes, ::testing::Contains(v.bug_class)) << def.spec.name << ": " << v.name << ": " << d->text;
      named.insert(v.name.substr(0, v.name.find('=')));
    }
  // Every kind of generic transform was exercised on some target (previous_case_answer needs a state check).
  for (const char* kind : {"zero_gradient_x", "transposed_graph_in_backward", "norm", "source_degree", "one_head_for_all_heads",
                           "duplicates_coalesced", "edge_layout_transposed", "softmax_backward_without_subtraction"})
    EXPECT_TRUE(named.count(kind)) << kind;
}

// Answers a case with gradients from the inputs of the call before it (a cache keyed on nothing).
class AnswersThePreviousCall final : public System {
 public:
  std::string name() const override { return "answers_the_previous_call"; }
  bool supports(const std::string&) const override { return true; }
  Precision precision(const std::string&) const override { return Precision::float64; }
  Result evaluate(const Case& c) override {
    Case asked = c;
    if (previous_ && !c.grad_outputs.empty()) {
      asked = *previous_;
      asked.grad_outputs = c.grad_outputs;
    }
    previous_ = c;
    return oracle::evaluate(asked);
  }

 private:
  std::optional<Case> previous_;
};

TEST(Diagnosis, StateLeftFromThePreviousCallIsNamedAfterTheStateCheck) {
  AnswersThePreviousCall sys;
  const Case c = oracle::make_random_case(oracle::find_target("spmm_ve"), square_graph(), {}, 17);
  ASSERT_EQ(run_check(CheckKind::state_interleaved, sys, c).conclusion, Conclusion::fail);
  AnswersThePreviousCall fresh;
  const std::optional<Diagnosis> d = diagnose_failure(CheckKind::state_interleaved, fresh, c, replica_variants("spmm_ve"), {});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->variant, "previous_case_answer") << d->text;
  EXPECT_EQ(d->bug_class, "stale_state");
}

TEST(Diagnosis, EveryTargetDeclaresItsGenericVariantsSimplestFirst) {
  for (const oracle::TargetDef& def : oracle::all_targets()) {
    EXPECT_FALSE(def.wrong_variants.empty()) << def.spec.name;
    EXPECT_TRUE(std::is_sorted(def.wrong_variants.begin(), def.wrong_variants.end(),
                               [](const auto& a, const auto& b) { return a.simplicity < b.simplicity; }))
        << def.spec.name;
    for (const auto& v : def.wrong_variants) {
      EXPECT_FALSE(v.bug_class.empty()) << def.spec.name << ": " << v.name;
      EXPECT_TRUE(v.evaluate) << def.spec.name << ": " << v.name;
    }
  }
}

}  // namespace
}  // namespace gnncheck::checks
