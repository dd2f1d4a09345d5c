// Layer forwards against values worked out by hand, the float32 evaluation against float64, and
// the errors for inputs a layer cannot take.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include <omp.h>

#include "oracle/layers/dense.h"
#include "oracle/layers/dropout.h"
#include "oracle/layers/gcn.h"
#include "oracle/layers/self_loops.h"
#include "oracle/layers/tests/layer_test_support.h"

namespace gnncheck::oracle::layer_tests {
namespace {

using ::testing::HasSubstr;

// 3 nodes, directed: 0 ← 1, 0 ← 2, 1 ← 2. In-degrees 2, 1, 0; out-degrees 0, 1, 2.
std::shared_ptr<const Graph> directed_triangle() {
  const std::vector<index_t> dst{0, 0, 1}, src{1, 2, 2};
  return std::make_shared<const Graph>(Graph::from_edges(3, 3, dst, src));
}

Tensor column(std::vector<double> v) {
  const index_t n = static_cast<index_t>(v.size());
  return Tensor({n, 1}, std::move(v));
}
Tensor scalar_matrix(double v) { return Tensor({1, 1}, std::vector<double>{v}); }
Tensor vec(std::vector<double> v) {
  const index_t n = static_cast<index_t>(v.size());
  return Tensor({n}, std::move(v));
}

Result run(const std::string& target, const Attributes& attrs, TensorMap inputs, TensorMap params) {
  Case c;
  c.target = target;
  c.attributes = attrs;
  c.graph = directed_triangle();
  c.inputs = std::move(inputs);
  c.parameters = std::move(params);
  return evaluate(c);
}

const Attributes kWidth1{{"in_features", std::int64_t{1}}, {"out_features", std::int64_t{1}}};

Attributes width1(std::initializer_list<std::pair<const std::string, AttrValue>> extra) {
  Attributes a = kWidth1;
  for (const auto& [k, v] : extra) a.set(k, v);
  return a;
}

TEST(LayerForward, GcnSymmetricNormalizationUsesInDegreeOfRowAndOutDegreeOfColumn) {
  const Result r = run("gcn", width1({{"self_loops", false}, {"bias", false}}), {{"x", column({1, 2, 3})}},
                       {{"weight", scalar_matrix(1)}});
  ASSERT_TRUE(r.ok()) << r.message;
  // ŵ(0←1) = 1/√(2·1), ŵ(0←2) = 1/√(2·2), ŵ(1←2) = 1/√(1·2).
  EXPECT_NEAR(r.outputs.at("y")[0], 2 / std::sqrt(2.0) + 3 * 0.5, 1e-15);
  EXPECT_NEAR(r.outputs.at("y")[1], 3 / std::sqrt(2.0), 1e-15);
  EXPECT_EQ(r.outputs.at("y")[2], 0.0);  // empty row
}

// source_degree = in: one degree per node, the in-degree, on both sides (PyG's gcn_norm). On the
// directed triangle (in-degrees 2, 1, 0) source 2 has out-degree 2 but in-degree 0, so its factor is
// 0 and it sends nothing; source 1 has in-degree 1, as its out-degree.
TEST(LayerForward, GcnSourceInDegreeScalesEachSourceByItsOwnInDegree) {
  const Result r = run("gcn", width1({{"self_loops", false}, {"bias", false}, {"source_degree", std::string("in")}}),
                       {{"x", column({1, 2, 3})}}, {{"weight", scalar_matrix(1)}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_NEAR(r.outputs.at("y")[0], 2 / std::sqrt(2.0), 1e-15);  // ŵ(0←1) = 1/√(2·1), ŵ(0←2) = 0
  EXPECT_EQ(r.outputs.at("y")[1], 0.0);                          // ŵ(1←2) = 0
  EXPECT_EQ(r.outputs.at("y")[2], 0.0);
}

// The two conventions are different functions exactly where some source's in- and out-degree
// differ, and the same function (bit for bit) where every node's two degrees agree.
TEST(LayerForward, SourceDegreeConventionsDifferOnDirectedGraphsAndAgreeOnSymmetricOnes) {
  const std::vector<index_t> dst{0, 0, 1, 1, 2, 2, 3}, src{1, 2, 0, 2, 0, 1, 3};  // symmetric, a self-loop
  const auto symmetric = std::make_shared<const Graph>(Graph::from_edges(4, 4, dst, src));
  for (const std::string target : {"gcn", "normalized_spmm"}) {
    for (const bool self_loops : {true, false}) {
      Attributes attrs;
      if (target == "gcn") attrs = {{"self_loops", self_loops}};
      else if (self_loops) continue;
      for (const auto& [graph, degrees_agree] :
           {std::pair{symmetric, true}, std::pair{directed_triangle(), false}, std::pair{random_graph(30, 3, 5), false}}) {
        Case out = layer_case(target, graph, attrs, 9);
        Case in = out;
        in.attributes.set("source_degree", std::string("in"));
        const Result r_out = evaluate(out), r_in = evaluate(in);
        ASSERT_TRUE(r_out.ok() && r_in.ok()) << r_out.message << r_in.message;
        const std::string where = target + " on " + graph->summary() + (self_loops ? " with self-loops" : "");
        if (degrees_agree) {
          EXPECT_EQ(r_out.outputs.at("y"), r_in.outputs.at("y")) << where;
          EXPECT_EQ(r_out.gradients.at("x"), r_in.gradients.at("x")) << where;
        } else {
          EXPECT_NE(r_out.outputs.at("y"), r_in.outputs.at("y")) << where;
          EXPECT_NE(r_out.gradients.at("x"), r_in.gradients.at("x")) << where;
        }
      }
    }
  }
}

TEST(LayerForward, GcnWithSelfLoopsAndBiasOnAPath) {
  const std::vector<index_t> dst{0, 1}, src{1, 0};
  Case c;
  c.target = "gcn";
  c.attributes = kWidth1;
  c.graph = std::make_shared<const Graph>(Graph::from_edges(2, 2, dst, src));
  c.inputs["x"] = column({1, 3});
  c.parameters = {{"weight", scalar_matrix(2)}, {"bias", vec({1})}};
  const Result r = evaluate(c);
  ASSERT_TRUE(r.ok()) << r.message;
  // Â = [[½, ½], [½, ½]], x·W = [2, 6] -> 4 per node, + 1.
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[0], 5.0);
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[1], 5.0);
}

TEST(LayerForward, GcnRowMeanWithSelfLoops) {
  const Result r = run("gcn", width1({{"norm", std::string("row_mean")}, {"bias", false}}),
                       {{"x", column({1, 2, 3})}}, {{"weight", scalar_matrix(1)}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[0], 2.0);  // mean of x1, x2, x0
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[1], 2.5);  // mean of x2, x1
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[2], 3.0);  // only the self-loop
}

TEST(LayerForward, SageIsSelfTermPlusNeighborMean) {
  const Result r = run("sage", width1({{"bias", false}}), {{"x", column({1, 2, 3})}},
                       {{"weight_self", scalar_matrix(10)}, {"weight_neigh", scalar_matrix(1)}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[0], 10 + 2.5);
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[1], 20 + 3.0);
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[2], 30 + 0.0);  // no in-neighbors: zero mean
}

TEST(LayerForward, GinSumsNeighborsAndScalesSelfByOnePlusEps) {
  const Result r = run("gin", width1({{"hidden_features", std::int64_t{1}}, {"bias", false}}),
                       {{"x", column({1, 2, 3})}},
                       {{"weight1", scalar_matrix(1)}, {"weight2", scalar_matrix(1)}, {"eps", vec({0.5})}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[0], 1.5 * 1 + 2 + 3);
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[1], 1.5 * 2 + 3);
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[2], 1.5 * 3);
}

TEST(LayerForward, GinMlpAppliesReluBetweenItsLayers) {
  const Result r = run("gin", width1({{"hidden_features", std::int64_t{1}}, {"bias", false}}),
                       {{"x", column({1, 2, 3})}},
                       {{"weight1", scalar_matrix(-1)}, {"weight2", scalar_matrix(1)}, {"eps", vec({0})}});
  ASSERT_TRUE(r.ok()) << r.message;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.outputs.at("y")[i], 0.0);
}

TEST(LayerForward, GatWithZeroAttentionAveragesOverNeighborsAndSelf) {
  const Result r = run("gat", width1({{"heads", std::int64_t{1}}, {"bias", false}}), {{"x", column({1, 2, 3})}},
                       {{"weight", scalar_matrix(1)}, {"att_src", scalar_matrix(0)}, {"att_dst", scalar_matrix(0)}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[0], 2.0);
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[1], 2.5);
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[2], 3.0);
}

TEST(LayerForward, GatAttentionFollowsLeakyReluLogits) {
  // One head, W = 1, att_src = 1, att_dst = 0: logit of (i ← j) is x_j; node 1 attends over
  // x2 = 3 and itself x1 = 2 with weights softmax(3, 2).
  const Result r = run("gat", width1({{"heads", std::int64_t{1}}, {"bias", false}}), {{"x", column({1, 2, 3})}},
                       {{"weight", scalar_matrix(1)}, {"att_src", scalar_matrix(1)}, {"att_dst", scalar_matrix(0)}});
  ASSERT_TRUE(r.ok()) << r.message;
  const double a = std::exp(3.0) / (std::exp(3.0) + std::exp(2.0));
  EXPECT_NEAR(r.outputs.at("y")[1], a * 3 + (1 - a) * 2, 1e-15);
}

TEST(LayerForward, GatMeanOfHeadsEqualsAverageOfConcatenatedHeads) {
  const auto g = small_square_graph();
  Case concat = layer_case("gat", g, {{"heads", std::int64_t{3}}, {"bias", false}}, 9);
  concat.grad_outputs.clear();
  Case mean = concat;
  mean.attributes.set("concat", false);
  const Result rc = evaluate(concat), rm = evaluate(mean);
  ASSERT_TRUE(rc.ok() && rm.ok()) << rc.message << rm.message;
  const Tensor& yc = rc.outputs.at("y");
  const Tensor& ym = rm.outputs.at("y");
  ASSERT_EQ(ym.shape(), (std::vector<index_t>{5, 4}));
  for (index_t i = 0; i < 5; ++i)
    for (index_t c = 0; c < 4; ++c)
      EXPECT_NEAR(ym.at(i, c), (yc.at(i, c) + yc.at(i, 4 + c) + yc.at(i, 8 + c)) / 3, 1e-15);
}

TEST(LayerForward, AgnnWithAlignedFeaturesAveragesUniformly) {
  const Result r = run("agnn", Attributes{{"features", std::int64_t{1}}}, {{"x", column({1, 2, 3})}},
                       {{"beta", vec({5})}});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[0], 2.0);  // every cosine is 1
  EXPECT_DOUBLE_EQ(r.outputs.at("y")[1], 2.5);
}

TEST(LayerForward, AgnnZeroFeatureRowStaysFinite) {
  const Result r = run("agnn", Attributes{{"features", std::int64_t{1}}, {"self_loops", true}},
                       {{"x", column({0, 2, 3})}}, {{"beta", vec({1})}});
  ASSERT_TRUE(r.ok()) << r.message;
  for (double v : r.outputs.at("y").values()) EXPECT_TRUE(std::isfinite(v));
}

// GINE by hand on 0 ← 1 (edge 0) and 1 ← 0 (edge 1), eps = 0.5, W1 = [1; 2], W2 = [2], no bias:
// messages m = x[col] + edge_attr = [2, 2] and [1.5, −6], ReLU [2, 2] and [1.5, 0];
// h = 1.5·x + those = [3.5, −1] and [6, 1.5]; z1 = h·W1 = 1.5 and 9; y = 2·z1 = 3 and 18.
// Backward with grad_y = [1, −1]: grad_z1 = [2, −2], grad_h = [[2, 4], [−2, −4]], grad_m = grad_h[row]
// through ReLU'(m) = [2, 4] and [−2, 0] (m[1, 1] < 0), which is grad_edge_attr; grad_x gathers
// grad_m at col and adds 1.5·grad_h: [1, 6] and [−1, −2]; grad_eps = Σ grad_h ⊙ x = −16.
TEST(LayerForward, GineMessagesPassTheirEdgeFeaturesThroughAReluByHand) {
  const std::vector<index_t> dst{0, 1}, src{1, 0};
  Case c;
  c.target = "gine";
  c.graph = std::make_shared<const Graph>(Graph::from_edges(2, 2, dst, src));
  c.attributes = {{"in_features", std::int64_t{2}}, {"hidden_features", std::int64_t{1}}, {"out_features", std::int64_t{1}},
                  {"bias", false}};
  c.inputs = {{"x", Tensor({2, 2}, {1, -2, 3, 1})}, {"edge_attr", Tensor({2, 2}, {-1, 1, 0.5, -4})}};
  c.parameters = {{"weight1", Tensor({2, 1}, {1, 2})}, {"weight2", scalar_matrix(2)}, {"eps", vec({0.5})}};
  c.grad_outputs = {{"y", column({1, -1})}};
  for (Precision p : {Precision::float64, Precision::float32}) {
    const Result r = evaluate(c, p);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_THAT(r.outputs.at("y").values(), ::testing::ElementsAre(3, 18));
    EXPECT_THAT(r.gradients.at("edge_attr").values(), ::testing::ElementsAre(2, 4, -2, 0));
    EXPECT_THAT(r.gradients.at("x").values(), ::testing::ElementsAre(1, 6, -1, -2));
    EXPECT_THAT(r.gradients.at("weight1").values(), ::testing::ElementsAre(-5, -5));
    EXPECT_THAT(r.gradients.at("weight2").values(), ::testing::ElementsAre(-7.5));
    EXPECT_THAT(r.gradients.at("eps").values(), ::testing::ElementsAre(-16));
  }
  // An edge_attr that is not [E, in_features] is refused by name.
  c.inputs["edge_attr"] = Tensor({2, 1}, {1, 2});
  const Result bad = evaluate(c);
  EXPECT_EQ(bad.status, Status::error);
  EXPECT_THAT(bad.message, HasSubstr("edge_attr"));
}

// GATv2 by hand on the single edge 0 ← 1 with self-loops (row 0: 0 ← 1, 0 ← 0; row 1: 1 ← 1),
// x = [1, 2], one head of C = 2, W_src = [1, −1], W_dst = 0, att = [1, 1], slope 0.2, no bias:
// z = h_src[j] = x_j·[1, −1], so row 0's logits are Σ_c LeakyReLU(z_c) = 2 − 0.4 = 1.6 (edge) and
// 1 − 0.2 = 0.8 (loop) — GAT's order (the LeakyReLU after the attention) would give 0 for both.
// alpha = softmax(1.6, 0.8): a = 1 / (1 + e^−0.8); y[0] = a·[2, −2] + (1 − a)·[1, −1], y[1] = [2, −2].
// With grad_y = [[1, 0], [0, 0]]: grad_alpha = ⟨grad_y[0], h_src[j]⟩ = 2 and 1, grad_logit = ±a(1 − a),
// grad_att = a(1 − a)·(LeakyReLU(z_edge) − LeakyReLU(z_loop)) = a(1 − a)·[1, −0.2].
TEST(LayerForward, Gatv2AppliesTheLeakyReluPerChannelBeforeTheAttentionByHand) {
  Case c;
  c.target = "gatv2";
  c.graph = std::make_shared<const Graph>(Graph::from_edges(2, 2, std::vector<index_t>{0}, std::vector<index_t>{1}));
  c.attributes = {{"in_features", std::int64_t{1}}, {"out_features", std::int64_t{2}}, {"heads", std::int64_t{1}},
                  {"bias", false}};
  c.inputs = {{"x", column({1, 2})}};
  c.parameters = {{"weight_src", Tensor({1, 2}, {1, -1})}, {"weight_dst", Tensor({1, 2}, {0, 0})},
                  {"att", Tensor({1, 2}, {1, 1})}};
  c.grad_outputs = {{"y", Tensor({2, 2}, {1, 0, 0, 0})}};
  const double a = 1 / (1 + std::exp(-0.8)), s = a * (1 - a);
  for (Precision p : {Precision::float64, Precision::float32}) {
    const double tol = p == Precision::float64 ? 1e-15 : 1e-6;
    const Result r = evaluate(c, p);
    ASSERT_TRUE(r.ok()) << r.message;
    const Tensor& y = r.outputs.at("y");
    EXPECT_NEAR(y.at(0, 0), a * 2 + (1 - a), tol);
    EXPECT_NEAR(y.at(0, 1), -(a * 2 + (1 - a)), tol);
    EXPECT_NEAR(y.at(1, 0), 2, tol);
    EXPECT_NEAR(y.at(1, 1), -2, tol);
    const Tensor& att = r.gradients.at("att");
    EXPECT_NEAR(att[0], s, tol);
    EXPECT_NEAR(att[1], -0.2 * s, tol);
    EXPECT_NEAR(r.gradients.at("weight_dst")[0], 0, tol);  // the logits' gradients cancel across the row
  }
  // A weight_dst that is not [in_features, heads·C] is refused by name.
  c.parameters["weight_dst"] = Tensor({2, 1}, {0, 0});
  const Result bad = evaluate(c);
  EXPECT_EQ(bad.status, Status::error);
  EXPECT_THAT(bad.message, HasSubstr("weight_dst"));
}

// SAGE with aggr = max on the directed triangle (0 ← 1, 0 ← 2, 1 ← 2), x = [1, 5, 5], W_self = 1,
// W_neigh = 2: row 0's maximum ties between sources 1 and 2, row 2 is empty (aggregates 0).
// y = x + 2·max = [11, 15, 5]; with grad_y = 1 the tie's gradient goes to the first edge's source
// (the oracle's choice): grad_x = grad_y·W_self + 2 at sources 1 and 2 = [1, 3, 3]; the other
// one-sided choice (the control system's, cpu_float32_right_derivatives) sends row 0's to source 2.
TEST(LayerForward, SageMaxSendsATiesGradientToOneSourceByHand) {
  Case c;
  c.target = "sage";
  c.graph = directed_triangle();
  c.attributes = width1({{"bias", false}, {"aggr", std::string("max")}});
  c.inputs = {{"x", column({1, 5, 5})}};
  c.parameters = {{"weight_self", scalar_matrix(1)}, {"weight_neigh", scalar_matrix(2)}};
  c.grad_outputs = {{"y", column({1, 1, 1})}};
  const Result r = evaluate(c);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_THAT(r.outputs.at("y").values(), ::testing::ElementsAre(11, 15, 5));
  EXPECT_THAT(r.gradients.at("x").values(), ::testing::ElementsAre(1, 3, 3));
  EXPECT_THAT(r.gradients.at("weight_neigh").values(), ::testing::ElementsAre(10));
  EXPECT_THAT(r.gradients.at("weight_self").values(), ::testing::ElementsAre(11));
  const Result right = evaluate_f32_right_of_kinks(c);
  ASSERT_TRUE(right.ok()) << right.message;
  EXPECT_THAT(right.gradients.at("x").values(), ::testing::ElementsAre(1, 1, 5));
  // The pool aggregator: p = ReLU(x·W_pool + b_pool) with W_pool = −1, b_pool = 4: p = [3, 0, 0]
  // (source 0 is read by no edge); both rows' maxima tie at 0, so max = [0, 0, 0], y = x, and the
  // ReLU's kink at sources 1, 2 (z = −1 < 0) stops every neighbour gradient: grad_W_pool = 0.
  c.attributes.set("project", true);
  c.parameters["weight_pool"] = scalar_matrix(-1);
  c.parameters["bias_pool"] = vec({4});
  const Result pooled = evaluate(c);
  ASSERT_TRUE(pooled.ok()) << pooled.message;
  EXPECT_THAT(pooled.outputs.at("y").values(), ::testing::ElementsAre(1, 5, 5));
  EXPECT_THAT(pooled.gradients.at("x").values(), ::testing::ElementsAre(1, 1, 1));
  EXPECT_THAT(pooled.gradients.at("weight_pool").values(), ::testing::ElementsAre(0));
  c.attributes.set("aggr", std::string("min"));
  EXPECT_THAT(evaluate(c).message, HasSubstr("aggr"));
}

TEST(LayerForward, Float32EvaluationAgreesWithFloat64) {
  const std::vector<std::pair<std::string, Attributes>> variants = {
      {"gcn", {}}, {"gcn", {{"source_degree", std::string("in")}}}, {"gin", {}}, {"gat", {}},
      {"gat", {{"negative_slope", 0.01}, {"attn_dropout", 0.3}}}, {"sage", {}}, {"agnn", {}}, {"gine", {}},
      {"sage", {{"aggr", std::string("max")}, {"project", true}}}};
  for (const auto& [target, attrs] : variants) {
    const Case c = layer_case(target, random_graph(200, 5, 3), attrs, 4);
    const Result r64 = evaluate(c, Precision::float64), r32 = evaluate(c, Precision::float32);
    ASSERT_TRUE(r64.ok() && r32.ok()) << target << ": " << r64.message << r32.message;
    for (const auto& [name, g64] : r64.gradients) {
      const Tensor& g32 = r32.gradients.at(name);
      double scale = 0, worst = 0;
      for (index_t k = 0; k < g64.size(); ++k) {
        scale = std::max(scale, std::abs(g64[k]));
        worst = std::max(worst, std::abs(g64[k] - g32[k]));
      }
      // float32 rounding (u = 6e-8) over sums of at most a few hundred terms: far below 1e-4.
      EXPECT_LE(worst, 1e-4 * std::max(scale, 1.0)) << target << " gradient " << name;
    }
  }
}

TEST(LayerErrors, SelfLoopsNeedDestinationsToBeSources) {
  const std::vector<index_t> dst{0, 3}, src{1, 0};
  Case c = layer_case("gcn", std::make_shared<const Graph>(Graph::from_edges(4, 2, dst, src)),
                      {{"self_loops", false}}, 1);
  EXPECT_TRUE(evaluate(c).ok());  // no self-loops: any block works
  c.attributes.set("self_loops", true);
  const Result r = evaluate(c);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, HasSubstr("n_dst <= n_src"));
  EXPECT_THAT(r.message, HasSubstr("Graph 4×2"));
}

TEST(LayerErrors, BadAttributesNameTheLayerAndAttribute) {
  Case c = layer_case("gat", small_square_graph(), {}, 1);
  c.attributes.set("heads", std::int64_t{0});
  EXPECT_THAT(evaluate(c).message, HasSubstr("layer 'gat': attribute 'heads' must be a positive integer, got 0"));
  c = layer_case("gat", small_square_graph(), {}, 1);
  c.attributes.set("attn_dropout", 1.0);
  EXPECT_THAT(evaluate(c).message, HasSubstr("'attn_dropout' must be in [0, 1)"));
  c = layer_case("gcn", small_square_graph(), {}, 1);
  c.attributes.set("norm", std::string("both"));
  EXPECT_EQ(evaluate(c).status, Status::error);
}

TEST(LayerErrors, WrongParameterShapeIsNamed) {
  Case c = layer_case("sage", small_square_graph(), {}, 1);
  c.parameters["weight_neigh"] = Tensor({4, 8});
  const Result r = evaluate(c);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, HasSubstr("weight_neigh"));
}

TEST(LayerCatalogue, DisabledBiasIsNotAnInput) {
  const TargetDef& def = find_target("gcn");
  const auto g = small_square_graph();
  EXPECT_EQ(def.input_shapes(*g, with_defaults(def.spec, {})).count("bias"), 1u);
  EXPECT_EQ(def.input_shapes(*g, with_defaults(def.spec, {{"bias", false}})).count("bias"), 0u);
  const Result r = evaluate(layer_case("gcn", g, {{"bias", false}}, 2));
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.gradients.count("bias"), 0u);
  EXPECT_EQ(r.gradients.count("weight"), 1u);
}

TEST(LayerCatalogue, RandomCasesLeaveADisabledBiasOut) {
  const Case c = make_random_case(find_target("gat"), small_square_graph(), {{"bias", false}}, 3);
  EXPECT_EQ(c.parameters.count("bias"), 0u);
  EXPECT_EQ(c.parameters.count("weight"), 1u);
  EXPECT_TRUE(evaluate(c).ok());
}

TEST(LayerSelfLoops, BlockSelfLoopsAppendOneEdgePerDestination) {
  const Graph g = layers::with_destination_self_loops(*small_block_graph());
  EXPECT_EQ(g.num_edges(), 6 + 3);
  for (index_t i = 0; i < 3; ++i) EXPECT_EQ(g.col_idx()[g.row_ptr()[i + 1] - 1], i);
}

// Bag-of-words-like operand: 98% exact zeros, large enough for matmul to skip them.
Tensor mostly_zeros(index_t rows, index_t cols, std::uint64_t seed) {
  Tensor a = random_tensor({rows, cols}, seed, "sparse", {-1.0, 1.0, 0.98, true});
  return a;
}

TEST(LayerDense, ZeroSkippingProductsEqualTheDenseSums) {
  const Tensor a = mostly_zeros(300, 200, 3);
  const Tensor b = random_tensor({200, 7}, 4, "b");
  const Tensor g = random_tensor({300, 7}, 5, "g");
  const Tensor y = layers::matmul(a, b), gw = layers::matmul_at_b(a, g);
  for (index_t i = 0; i < 300; ++i)
    for (index_t c = 0; c < 7; ++c) {
      double sum = 0;
      for (index_t k = 0; k < 200; ++k) sum += a.at(i, k) * b.at(k, c);
      EXPECT_NEAR(y.at(i, c), sum, 1e-14);
    }
  for (index_t k = 0; k < 200; ++k)
    for (index_t c = 0; c < 7; ++c) {
      double sum = 0;
      for (index_t i = 0; i < 300; ++i) sum += a.at(i, k) * g.at(i, c);
      EXPECT_NEAR(gw.at(k, c), sum, 1e-14);
    }
}

// Past 8192 rows, aᵀ·b is summed over fixed row groups: the same bits for any thread count, and
// the classical sum within rounding.
TEST(LayerDense, TallTransposedProductIsTheSameForAnyThreadCount) {
  const Tensor a = random_tensor({50000, 5}, 6, "a");
  const Tensor g = random_tensor({50000, 3}, 7, "g");
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const Tensor one = layers::matmul_at_b(a, g);
  omp_set_num_threads(std::max(2, saved));
  const Tensor many = layers::matmul_at_b(a, g);
  omp_set_num_threads(saved);
  EXPECT_EQ(one.values(), many.values());
  for (index_t k = 0; k < 5; ++k)
    for (index_t c = 0; c < 3; ++c) {
      double sum = 0, magnitude = 0;
      for (index_t i = 0; i < 50000; ++i) sum += a.at(i, k) * g.at(i, c), magnitude += std::abs(a.at(i, k) * g.at(i, c));
      EXPECT_NEAR(one.at(k, c), sum, 1e-12 * magnitude);
    }
}

TEST(LayerDense, ZeroSkippingNeverHidesANonFiniteWeight) {
  const Tensor a = mostly_zeros(300, 200, 3);
  Tensor b = random_tensor({200, 7}, 4, "b");
  b.at(0, 0) = INFINITY;  // 0 · Inf = NaN in every row whose a[i, 0] is zero
  const Tensor y = layers::matmul(a, b);
  bool any_nan = false;
  for (index_t i = 0; i < 300; ++i) any_nan = any_nan || std::isnan(y.at(i, 0));
  EXPECT_TRUE(any_nan);
}

TEST(LayerDropout, MaskIsAPureFunctionWithTheRequestedRate) {
  int kept = 0;
  for (std::uint64_t i = 0; i < 100000; ++i) kept += layers::dropout_keeps(42, i, 0.6);
  EXPECT_NEAR(kept / 100000.0, 0.4, 0.01);
  EXPECT_EQ(layers::dropout_uniform(42, 7), layers::dropout_uniform(42, 7));
  EXPECT_NE(layers::dropout_uniform(42, 7), layers::dropout_uniform(43, 7));
  EXPECT_TRUE(layers::dropout_keeps(42, 7, 0.0));
}

// A + I is shared between callers holding it for one graph, equals with_destination_self_loops,
// and a new graph at a freed graph's address gets its own A + I, not the one built from the old.
TEST(LayerForward, SharedSelfLoopsAreTheGraphsOwnEvenAtAReusedAddress) {
  auto ring = [](index_t n, index_t step) {
    std::vector<index_t> dst, src;
    for (index_t i = 0; i < n; ++i)
      for (index_t k = 1; k <= 2; ++k) dst.push_back(i), src.push_back((i + k * step) % n);
    return Graph::from_edges(n, n + 3, dst, src);  // not square: the block path of A + I
  };
  const index_t n = layers::kSharedSelfLoopsMinEdges / 2;  // 2n = the sharing threshold
  auto same_arrays = [](const Graph& a, const Graph& b) {
    return a.n_dst() == b.n_dst() && a.n_src() == b.n_src() && std::ranges::equal(a.row_ptr(), b.row_ptr()) &&
           std::ranges::equal(a.col_idx(), b.col_idx());
  };
  std::optional<Graph> g(ring(n, 1));
  const std::shared_ptr<const Graph> first = layers::shared_destination_self_loops(*g);
  EXPECT_TRUE(same_arrays(*first, layers::with_destination_self_loops(*g)));
  EXPECT_EQ(layers::shared_destination_self_loops(*g).get(), first.get()) << "a second caller builds its own while the first holds one";
  const Graph* address = &*g;
  g.reset();
  g.emplace(ring(n, 5));  // another graph, same sizes, at the same address
  ASSERT_EQ(&*g, address);
  const std::shared_ptr<const Graph> second = layers::shared_destination_self_loops(*g);
  EXPECT_NE(second.get(), first.get());
  EXPECT_TRUE(same_arrays(*second, layers::with_destination_self_loops(*g)));
  // Below the threshold every caller gets its own.
  const Graph small = ring(100, 1);
  EXPECT_NE(layers::shared_destination_self_loops(small).get(), layers::shared_destination_self_loops(small).get());
}

}  // namespace
}  // namespace gnncheck::oracle::layer_tests
