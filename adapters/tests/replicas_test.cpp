// Each bug replica computes its documented wrong formula where the bug can show, and exactly the
// correct answer where it cannot (the symmetric, small-logit, multiple-of-32 cases that let the
// original systems pass their own tests). Detection by the checks is tested in replica_detection_test.
#include <cmath>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oracle/cpu_systems.h"
#include "adapters/replicas/replicas.h"
#include "adapters/tests/adapter_test_support.h"
#include "fixtures/generators.h"

namespace gnncheck {
namespace {

using ::testing::HasSubstr;

// Symmetric and regular: every node has in- and out-degree 2 (a directed-both-ways triangle).
std::shared_ptr<const Graph> symmetric_graph() {
  const std::vector<index_t> dst = {0, 0, 1, 1, 2, 2};
  const std::vector<index_t> src = {1, 2, 0, 2, 0, 1};
  return std::make_shared<const Graph>(Graph::from_edges(3, 3, dst, src));
}

double max_difference(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double worst = 0;
  for (index_t i = 0; i < std::min(a.size(), b.size()); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

struct Comparison {
  Result wrong, right;
  double output(const std::string& name) const { return max_difference(wrong.outputs.at(name), right.outputs.at(name)); }
  double gradient(const std::string& name) const {
    return max_difference(wrong.gradients.at(name), right.gradients.at(name));
  }
};

Comparison run(const std::string& replica, const Case& c) {
  auto system = make_replica(replica, make_oracle_system());
  Comparison cmp{system->evaluate(c), oracle::evaluate(c)};
  EXPECT_TRUE(cmp.wrong.ok()) << replica << ": " << cmp.wrong.message;
  EXPECT_TRUE(cmp.right.ok()) << cmp.right.message;
  return cmp;
}

Case make(const std::string& target, std::shared_ptr<const Graph> g, Attributes attrs = {}, std::uint64_t seed = 1) {
  return testing::random_case(target, std::move(g), attrs, seed);
}

TEST(ReplicaCatalogue, HasThirtyFourDocumentedReplicasInIssueOrder) {
  // 1–12 from issue 6, 13–16 from issue 15's blind spots, 17–22 for the generalized SpMM, 23–25 for
  // the shapes where kernels change path, 26 for GINE, 27 for GATv2, 28–30 for relational kernels,
  // 31–32 for float16 storage with float32 sums, 33 for RGAT's attention over relations, 34 for rows
  // sorted by type and never put back.
  const auto catalogue = replica_catalogue();
  ASSERT_EQ(catalogue.size(), 34u);
  std::set<std::string> names;
  const std::set<std::string> checks = {"differential", "adjoint",  "op_order", "state_interleaved",
                                        "state_repeat", "numerics", "resources"};
  for (size_t k = 0; k < catalogue.size(); ++k) {
    const ReplicaInfo& info = catalogue[k];
    EXPECT_EQ(info.number, static_cast<int>(k) + 1);
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_FALSE(info.origin.empty());
    EXPECT_FALSE(info.bug.empty());
    EXPECT_FALSE(info.needs.empty());
    EXPECT_TRUE(checks.count(info.expected_check)) << info.name << ": " << info.expected_check;
    EXPECT_FALSE(info.targets.empty()) << info.name;
    EXPECT_EQ(find_replica(info.name).number, info.number);
  }
  EXPECT_EQ(catalogue[13].hub_degree, 1000);
  EXPECT_EQ(catalogue[14].declared_precision, Precision::tf32);
  for (int k : {30, 31}) {
    EXPECT_EQ(catalogue[k].declared_precision, Precision::float16);
    EXPECT_EQ(catalogue[k].declared_accumulation, Precision::float32);
    auto replica = make_replica(catalogue[k].name, make_oracle_system());
    EXPECT_EQ(replica->precision(catalogue[k].targets.front()), Precision::float16);
    EXPECT_EQ(replica->accumulation(catalogue[k].targets.front()), Precision::float32);
  }
  // A declared precision alone is one format: 15 declares TF32 sums too.
  EXPECT_EQ(make_replica(catalogue[14].name, make_oracle_system())->accumulation("spmm_ve"), Precision::tf32);
}

TEST(IssueFifteenReplicas, EachBugShowsExactlyWhereItsCatalogueSays) {
  auto oracle = make_oracle_system();
  // 13: exact on square graphs; rectangular graphs lose the rows and columns beyond min(n_dst, n_src).
  auto square_bug = make_replica("backward_assumes_square", make_oracle_system());
  const Case square = make("spmm_ve", testing::asymmetric_graph(), {{"heads", std::int64_t{2}}});
  EXPECT_EQ(testing::max_abs_difference(square_bug->evaluate(square).gradients, oracle->evaluate(square).gradients), 0.0);
  const std::vector<index_t> dst = {0, 1}, src = {2, 0};
  const auto wide = std::make_shared<const Graph>(Graph::from_edges(2, 3, dst, src));
  const Case block = make("spmm", wide);
  const Result wrong = square_bug->evaluate(block), right = oracle->evaluate(block);
  EXPECT_EQ(wrong.gradients.at("x").at(2, 0), 0.0);  // source 2 ≥ n_dst: its gradient row is never written
  EXPECT_NE(right.gradients.at("x").at(2, 0), 0.0);
  EXPECT_EQ(wrong.gradients.at("x").at(0, 1), right.gradients.at("x").at(0, 1));

  // 14: exact below 1001 edges a row; on 1002 parallel edges with 64 features it loses about
  // 2·6.4 of the 2·64,128 updates, the same ones for the same seed.
  auto race = make_replica("hub_row_race", make_oracle_system());
  const auto below = std::make_shared<const Graph>(parallel_edges(1000));
  const Case small_hub = make("spmm", below, {{"features", std::int64_t{64}}});
  EXPECT_EQ(testing::max_abs_difference(race->evaluate(small_hub).outputs, oracle->evaluate(small_hub).outputs), 0.0);
  const Case hub = make("spmm", std::make_shared<const Graph>(parallel_edges(1002)), {{"features", std::int64_t{64}}});
  const Result lost = race->evaluate(hub), exact = oracle->evaluate(hub);
  EXPECT_GT(testing::max_abs_difference(lost.outputs, exact.outputs), 0.0);
  EXPECT_GT(testing::max_abs_difference(lost.gradients, exact.gradients), 0.0);
  EXPECT_EQ(testing::max_abs_difference(race->evaluate(hub).outputs, lost.outputs), 0.0);

  // 15: declares TF32; only the edge-value gradient is off, by exactly 1/8 of itself.
  auto tf32 = make_replica("tf32_edge_value_grad", make_oracle_system());
  EXPECT_EQ(tf32->precision("spmm_ve"), Precision::tf32);
  const Result off = tf32->evaluate(square), truth = oracle->evaluate(square);
  EXPECT_EQ(testing::max_abs_difference(off.outputs, truth.outputs), 0.0);
  EXPECT_EQ(off.gradients.at("x").values(), truth.gradients.at("x").values());
  for (index_t e = 0; e < truth.gradients.at("edge_values").size(); ++e)
    EXPECT_DOUBLE_EQ(off.gradients.at("edge_values")[e], 1.125 * truth.gradients.at("edge_values")[e]);

  // 16: two calls on the same case differ; a fresh instance repeats the first.
  auto noisy = make_replica("forward_not_repeatable", make_oracle_system());
  const Result first = noisy->evaluate(square), second = noisy->evaluate(square);
  EXPECT_GT(testing::max_abs_difference(first.outputs, second.outputs), 0.0);
  auto fresh = make_replica("forward_not_repeatable", make_oracle_system());
  EXPECT_EQ(testing::max_abs_difference(fresh->evaluate(square).outputs, first.outputs), 0.0);
}

TEST(ReplicaCatalogue, UnknownNamesAndMissingBaseAreInputErrors) {
  try {
    find_replica("tcgnn");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("known replicas: tcgnn_backward_uses_A"));
  }
  EXPECT_THROW(make_replica("missing_bias_grad", nullptr), InputError);
}

TEST(Replicas, SystemSupportsOnlyItsTargetsAndNamesThem) {
  auto r = make_replica("fusegnn_softmax_no_max", make_oracle_system());
  EXPECT_EQ(r->name(), "fusegnn_softmax_no_max");
  EXPECT_TRUE(r->supports("edge_softmax"));
  EXPECT_FALSE(r->supports("spmm"));
  const Result res = r->evaluate(make("spmm", testing::asymmetric_graph()));
  EXPECT_EQ(res.status, Status::unsupported);
  EXPECT_THAT(res.message, HasSubstr("edge_softmax"));
}

TEST(Replicas, BackwardUsesAShowsOnlyWhereAIsNotSymmetric) {
  const Comparison asym = run("tcgnn_backward_uses_A", make("spmm", testing::asymmetric_graph()));
  EXPECT_EQ(asym.output("y"), 0.0);
  EXPECT_GT(asym.gradient("x"), 0.1);
  EXPECT_EQ(run("tcgnn_backward_uses_A", make("spmm", symmetric_graph())).gradient("x"), 0.0);
  for (const char* layer : {"gcn", "gin"}) {
    const Comparison c = run("tcgnn_backward_uses_A", make(layer, testing::asymmetric_graph()));
    EXPECT_GT(c.gradient("x"), 1e-3) << layer;
    EXPECT_LT(run("tcgnn_backward_uses_A", make(layer, symmetric_graph())).gradient("x"), 1e-12) << layer;
  }
  auto replica = make_replica("tcgnn_backward_uses_A", make_oracle_system());
  EXPECT_EQ(replica->evaluate(make("spmm", testing::bipartite_graph())).status, Status::unsupported);
}

TEST(Replicas, AgnnAttentionGradUsesTheOutputGradientTwice) {
  const Comparison c = run("tcgnn_agnn_attention_grad", make("spmm_ve", testing::asymmetric_graph(), {{"heads", std::int64_t{2}}}));
  EXPECT_EQ(c.output("y"), 0.0);
  EXPECT_GT(c.gradient("edge_values"), 0.1);
  EXPECT_GT(c.gradient("x"), 0.1);
}

TEST(Replicas, SqrtDegreeChangesForwardAndBackwardConsistently) {
  for (const char* target : {"normalized_spmm", "gcn"}) {
    const Comparison c = run("gnnadvisor_sqrt_degree", make(target, testing::asymmetric_graph()));
    EXPECT_GT(c.output("y"), 1e-3) << target;
  }
}

TEST(Replicas, NormBackwardOrderShowsOnlyWhereDegreesDiffer) {
  for (const char* target : {"normalized_spmm", "gcn"}) {
    EXPECT_GT(run("gnnadvisor_norm_backward_order", make(target, testing::asymmetric_graph())).gradient("x"), 1e-3);
    const Comparison sym = run("gnnadvisor_norm_backward_order", make(target, symmetric_graph()));
    EXPECT_LT(sym.gradient("x"), 1e-12) << target;
    EXPECT_EQ(sym.output("y"), 0.0);
  }
}

TEST(Replicas, UntransposedAttentionChangesTheFeatureGradient) {
  const Comparison op = run("gat_backward_untransposed_attention", make("spmm_ve", testing::asymmetric_graph()));
  EXPECT_GT(op.gradient("x"), 0.1);
  EXPECT_EQ(op.gradient("edge_values"), 0.0);
  // The logits' backward: the source side gets the row sums (= the destination side's gradient).
  const Case add = make("sddmm_add", testing::asymmetric_graph(), {{"heads", std::int64_t{2}}});
  const Comparison logits = run("gat_backward_untransposed_attention", add);
  EXPECT_EQ(logits.gradient("a"), 0.0);
  EXPECT_GT(logits.gradient("b"), 0.1);
  const Tensor& wrong_b = logits.wrong.gradients.at("b");
  const Tensor& right_a = logits.right.gradients.at("a");
  ASSERT_EQ(wrong_b.size(), right_a.size());
  for (index_t i = 0; i < wrong_b.size(); ++i) EXPECT_DOUBLE_EQ(wrong_b[i], right_a[i]);
  // GAT: both wrong steps reach x, weight and att_src; the destination side and the forward stay.
  const Comparison gat = run("gat_backward_untransposed_attention", make("gat", testing::asymmetric_graph()));
  EXPECT_EQ(gat.output("y"), 0.0);
  EXPECT_GT(gat.gradient("x"), 1e-3);
  EXPECT_GT(gat.gradient("weight"), 1e-3);
  EXPECT_GT(gat.gradient("att_src"), 1e-3);
  EXPECT_EQ(gat.gradient("att_dst"), 0.0);
}

// With attention dropout on (the GAT training recipe) the GAT replicas recompute the attention with
// the layer's own deterministic mask: the parts a bug leaves alone stay exactly the layer's.
TEST(Replicas, GatReplicasFollowTheLayersDropoutMask) {
  Case c = make("gat", testing::asymmetric_graph());
  c.attributes.set("attn_dropout", 0.5);
  c.attributes.set("dropout_seed", std::int64_t{3});
  const Comparison wrong = run("gat_backward_untransposed_attention", c);
  EXPECT_EQ(wrong.output("y"), 0.0);
  EXPECT_EQ(wrong.gradient("att_dst"), 0.0);
  EXPECT_GT(wrong.gradient("x"), 1e-3);
  // With att_src = att_dst = 0 no gradient flows back through the attention scores, so dropping that
  // path changes nothing in grad x and grad W: equal only if the recomputed masked attention is right.
  Case flat = c;
  for (const char* att : {"att_src", "att_dst"})
    for (double& v : flat.parameters.at(att).values()) v = 0.0;
  const Comparison no_grad = run("tlpgnn_no_attention_grad", flat);
  EXPECT_LT(no_grad.gradient("x"), 1e-12);
  EXPECT_LT(no_grad.gradient("weight"), 1e-12);
}

TEST(Replicas, NoAttentionGradZeroesTheLogitGradient) {
  const Comparison softmax = run("tlpgnn_no_attention_grad", make("edge_softmax", testing::asymmetric_graph()));
  for (double v : softmax.wrong.gradients.at("logits").values()) EXPECT_EQ(v, 0.0);
  const Comparison gat = run("tlpgnn_no_attention_grad", make("gat", testing::asymmetric_graph()));
  for (double v : gat.wrong.gradients.at("att_src").values()) EXPECT_EQ(v, 0.0);
  EXPECT_GT(gat.gradient("att_dst"), 0.0);
  EXPECT_GT(gat.gradient("weight"), 0.0);
}

TEST(Replicas, SharedEdgeBufferLeaksOneForwardIntoAnotherBackward) {
  for (const char* target : {"edge_softmax", "spmm_ve"}) {
    auto replica = make_replica("shared_edge_buffer", make_oracle_system());
    const Case a = make(target, testing::asymmetric_graph(), {}, 11);
    const Case b = make(target, testing::asymmetric_graph(), {}, 12);
    const std::string grad = std::string(target) == "edge_softmax" ? "logits" : "x";
    // Alone, the replica is correct.
    const Result alone = replica->evaluate(a);
    EXPECT_EQ(max_difference(alone.gradients.at(grad), oracle::evaluate(a).gradients.at(grad)), 0.0) << target;
    // A forward of b in between: a's backward reads b's edge tensor.
    Case b_forward = b;
    b_forward.grad_outputs.clear();
    ASSERT_TRUE(replica->evaluate(b_forward).ok());
    const Result after = replica->evaluate(a);
    EXPECT_GT(max_difference(after.gradients.at(grad), oracle::evaluate(a).gradients.at(grad)), 1e-3) << target;
    EXPECT_EQ(max_difference(after.outputs.begin()->second, oracle::evaluate(a).outputs.begin()->second), 0.0);
  }
}

TEST(Replicas, SoftmaxWithoutMaxOverflowsOnlyAtLargeLogits) {
  Case small = make("edge_softmax", testing::asymmetric_graph(), {{"heads", std::int64_t{2}}});
  EXPECT_LT(run("fusegnn_softmax_no_max", small).output("alpha"), 1e-15);
  Case large = small;
  for (double& v : large.inputs.at("logits").values()) v *= 1000.0;
  auto replica = make_replica("fusegnn_softmax_no_max", make_oracle_system());
  const Result r = replica->evaluate(large);
  ASSERT_TRUE(r.ok());
  bool non_finite = false;
  for (double v : r.outputs.at("alpha").values()) non_finite = non_finite || !std::isfinite(v);
  EXPECT_TRUE(non_finite);
  // In float32 (base cpu_float32) it overflows already above 88.7.
  auto f32 = make_replica("fusegnn_softmax_no_max", make_cpu_float32_system());
  Case medium = small;
  for (double& v : medium.inputs.at("logits").values()) v *= 200.0;
  non_finite = false;
  // The Result must outlive the loop: a range-for over a member of a temporary reads freed memory.
  const Result r32 = f32->evaluate(medium);
  for (double v : r32.outputs.at("alpha").values()) non_finite = non_finite || !std::isfinite(v);
  EXPECT_TRUE(non_finite);
}

// Layer versions of replicas 2, 7 and 8: exactly the layer's answer where the bug cannot show, so
// the re-derived backward they share with the layer is right; wrong where it can.
TEST(Replicas, GatSharedEdgeBufferIsTheLayerAloneAndStaleAfterAnotherForward) {
  for (double dropout : {0.0, 0.5}) {
    auto replica = make_replica("shared_edge_buffer", make_oracle_system());
    Attributes attrs;
    attrs.set("heads", std::int64_t{2});
    attrs.set("attn_dropout", dropout);
    const Case a = make("gat", testing::asymmetric_graph(), attrs, 11);
    const Case b = make("gat", testing::asymmetric_graph(), attrs, 12);
    const Result right = oracle::evaluate(a);
    // Its own forward in the buffer: the backward recomputed from it is the layer's backward.
    Case a_forward = a;
    a_forward.grad_outputs.clear();
    ASSERT_TRUE(replica->evaluate(a_forward).ok());
    const Result own = replica->evaluate(a);
    ASSERT_TRUE(own.ok()) << own.message;
    for (const char* p : {"x", "weight", "att_src", "att_dst"})
      EXPECT_LT(max_difference(own.gradients.at(p), right.gradients.at(p)), 1e-12) << p << " dropout " << dropout;
    // b's forward in between: a's backward reads b's attention.
    Case b_forward = b;
    b_forward.grad_outputs.clear();
    ASSERT_TRUE(replica->evaluate(b_forward).ok());
    const Result stale = replica->evaluate(a);
    EXPECT_EQ(max_difference(stale.outputs.at("y"), right.outputs.at("y")), 0.0);
    EXPECT_GT(max_difference(stale.gradients.at("x"), right.gradients.at("x")), 1e-3) << "dropout " << dropout;
    EXPECT_GT(max_difference(stale.gradients.at("att_src"), right.gradients.at("att_src")), 1e-6);
  }
}

TEST(Replicas, GatSoftmaxWithoutMaxIsTheLayerAtSmallLogitsAndNonFiniteAtLarge) {
  Attributes attrs;
  attrs.set("heads", std::int64_t{2});
  attrs.set("concat", false);
  const Case small = make("gat", testing::asymmetric_graph(), attrs, 5);
  const Comparison c = run("fusegnn_softmax_no_max", small);
  EXPECT_LT(c.output("y"), 1e-12);
  for (const char* p : {"x", "weight", "att_src", "att_dst", "bias"}) EXPECT_LT(c.gradient(p), 1e-12) << p;
  Case large = small;
  for (double& v : large.parameters.at("att_src").values()) v *= 1e4;
  const Result r = make_replica("fusegnn_softmax_no_max", make_oracle_system())->evaluate(large);
  ASSERT_TRUE(r.ok()) << r.message;
  bool non_finite = false;
  for (double v : r.outputs.at("y").values()) non_finite = non_finite || !std::isfinite(v);
  EXPECT_TRUE(non_finite);
  const Result exact = oracle::evaluate(large);  // a range-for over a member of a temporary would read freed memory
  for (double v : exact.outputs.at("y").values()) EXPECT_TRUE(std::isfinite(v));
}

// AGNN: where ḡ = x and the attention matrix is symmetric (equal rows of x make every cosine 1; a
// regular graph then gives α = 1/degree both ways), both wrong steps compute the right values.
TEST(Replicas, AgnnAttentionGradIsTheLayerWhereBothStepsCoincide) {
  Attributes attrs;
  attrs.set("features", std::int64_t{3});
  Case degenerate = make("agnn", symmetric_graph(), attrs, 2);
  Tensor& x = degenerate.inputs.at("x");
  for (index_t i = 0; i < x.rows(); ++i)
    for (index_t k = 0; k < x.row_size(); ++k) x.at(i, k) = 0.5 + static_cast<double>(k);
  degenerate.grad_outputs.at("y") = x;
  const Comparison same = run("tcgnn_agnn_attention_grad", degenerate);
  EXPECT_LT(same.gradient("x"), 1e-12);
  EXPECT_LT(same.gradient("beta"), 1e-12);
  const Comparison wrong = run("tcgnn_agnn_attention_grad", make("agnn", testing::asymmetric_graph(), attrs, 2));
  EXPECT_EQ(wrong.output("y"), 0.0);
  EXPECT_GT(wrong.gradient("x"), 1e-3);
  EXPECT_GT(wrong.gradient("beta"), 1e-6);
}

TEST(Replicas, MemoryGrowthKeepsMemoryAliveAndReportsIt) {
  auto replica = make_replica("dgnn_memory_growth", make_oracle_system());
  const Case c = make("spmm", testing::asymmetric_graph());
  std::int64_t previous = 0;
  for (int k = 0; k < 4; ++k) {
    const Result r = replica->evaluate(c);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(testing::max_abs_difference(r.outputs, oracle::evaluate(c).outputs), 0.0);
    ASSERT_TRUE(replica->live_bytes().has_value());
    EXPECT_GE(*replica->live_bytes() - previous, 1 << 20);
    EXPECT_EQ(r.peak_bytes, replica->live_bytes());
    previous = *replica->live_bytes();
  }
}

TEST(Replicas, WidthTailIsWrongOnlyForWidthsNotAMultipleOf32) {
  const Comparison odd = run("width_not_multiple_of_32", make("spmm", testing::asymmetric_graph(), {{"features", std::int64_t{33}}}));
  EXPECT_GT(odd.output("y"), 0.0);
  EXPECT_GT(odd.gradient("x"), 0.0);
  const Comparison even = run("width_not_multiple_of_32", make("spmm", testing::asymmetric_graph(), {{"features", std::int64_t{64}}}));
  EXPECT_EQ(even.output("y"), 0.0);
  EXPECT_EQ(even.gradient("x"), 0.0);
}

TEST(Replicas, MissingEshuffleReadsEdgeValuesInTheWrongOrder) {
  const Comparison ve = run("missing_eshuffle", make("spmm_ve", testing::asymmetric_graph()));
  EXPECT_EQ(ve.output("y"), 0.0);
  EXPECT_GT(ve.gradient("x"), 0.1);
  EXPECT_GT(run("missing_eshuffle", make("spmm_ve_transposed", testing::asymmetric_graph())).output("z"), 0.1);
  EXPECT_GT(run("missing_eshuffle", make("gat", testing::asymmetric_graph())).gradient("x"), 1e-4);
}

TEST(Replicas, MissingBiasGradZeroesOnlyBiasGradients) {
  const Comparison gcn = run("missing_bias_grad", make("gcn", testing::asymmetric_graph()));
  for (double v : gcn.wrong.gradients.at("bias").values()) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(gcn.gradient("weight"), 0.0);
  Case without_bias = make("gcn", testing::asymmetric_graph());
  without_bias.attributes.set("bias", false);
  without_bias.parameters.erase("bias");
  without_bias.inputs.erase("bias");
  const Comparison no_bias = run("missing_bias_grad", without_bias);
  EXPECT_EQ(no_bias.wrong.gradients.count("bias"), 0u);
  EXPECT_EQ(no_bias.gradient("x"), 0.0);
}

}  // namespace
}  // namespace gnncheck
