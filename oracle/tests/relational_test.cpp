// The typed-graph targets by hand: gather_mm and the R-GCN and RGAT layers on cases worked out on paper, their
// wrong variants, and what an index tensor refuses.
#include <map>
#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "oracle/gather_mm.h"
#include "oracle/layers/rgat.h"
#include "oracle/layers/rgcn.h"
#include "oracle/random_case.h"
#include "oracle/target_listing.h"
#include "oracle/targets.h"
#include "oracle/tests/input_error.h"

namespace gnncheck::oracle {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Three rows of types 0, 2, 0: relation 1 has no row, so its gradient is exactly 0.
TEST(GatherMm, AppliesEachRowsRelationAndLeavesAnEmptyRelationsGradientZero) {
  const Tensor x({3, 2}, {1, 0, 0, 1, 2, 1});
  const Tensor types({3}, {0, 2, 0});
  const Tensor w({3, 2, 2}, {1, 2, 3, 4, 100, 100, 100, 100, 0, 1, 1, 0});
  // [1 0]·[1 2; 3 4] = [1 2]; [0 1]·[0 1; 1 0] = [1 0]; [2 1]·[1 2; 3 4] = [5 8].
  EXPECT_THAT(gather_mm_forward(x, types, w).values(), ElementsAre(1, 2, 1, 0, 5, 8));
  const Tensor grad_y({3, 2}, {1, 0, 0, 1, 1, 1});
  const auto grads = gather_mm_backward(x, types, w, grad_y);
  // grad_x[k] = grad_y[k] · w[t_k]ᵀ: [1 0]·[1 3; 2 4] = [1 3]; [0 1]·[0 1; 1 0] = [1 0]; [1 1]·[1 3; 2 4] = [3 7].
  EXPECT_THAT(grads.grad_x.values(), ElementsAre(1, 3, 1, 0, 3, 7));
  // grad_w[0] = [1 0]ᵀ[1 0] + [2 1]ᵀ[1 1]; grad_w[1] = 0; grad_w[2] = [0 1]ᵀ[0 1].
  EXPECT_THAT(grads.grad_w.values(), ElementsAre(3, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1));
}

TEST(GatherMm, RefusesATypeOutsideTheRelationsOrNotAnInteger) {
  const Tensor x({2, 1}, {1, 1}), w({2, 1, 1}, {1, 1});
  EXPECT_THAT(input_error_of([&] { gather_mm_forward(x, Tensor({2}, {0, 2}), w); }),
              HasSubstr("gather_mm: row 1 has type 2; types are integers in [0, 2)"));
  EXPECT_THAT(input_error_of([&] { gather_mm_forward(x, Tensor({2}, {0.5, 1}), w); }), HasSubstr("row 0 has type 0.5"));
  EXPECT_THAT(input_error_of([&] { gather_mm_forward(x, Tensor({3}, {0, 1, 1}), w); }),
              HasSubstr("the types must be [rows] (one per row of x, 2 rows)"));
}

Case gather_case() {
  Case c;
  c.target = "gather_mm";
  c.graph = std::make_shared<const Graph>(Graph::from_edges(2, 2, std::vector<index_t>{0, 1, 1}, std::vector<index_t>{1, 0, 1}));
  c.attributes = {{"relations", std::int64_t{3}}, {"in_features", std::int64_t{2}}, {"out_features", std::int64_t{2}}};
  c.inputs["x"] = Tensor({3, 2}, {1, 0, 0, 1, 2, 1});
  c.inputs["edge_type"] = Tensor({3}, {0, 2, 0});
  c.parameters["weight"] = Tensor({3, 2, 2}, {1, 2, 3, 4, 100, 100, 100, 100, 0, 1, 1, 0});
  c.grad_outputs["y"] = Tensor({3, 2}, {1, 0, 0, 1, 1, 1});
  return c;
}

// Every system shares validate_case: an index tensor holding anything but an integer in range is
// refused with the tensor, the element and the range.
TEST(GatherMm, ValidateCaseNamesTheIndexTensorTheElementAndTheRange) {
  Case c = gather_case();
  c.inputs["edge_type"] = Tensor({3}, {0, 3, 0});
  const Result r = evaluate(c);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, HasSubstr("target 'gather_mm', input 'edge_type': element 1 is 3; an index tensor holds integers "
                                   "in [0, 3) (relations = 3)"));
}



// typed_linear: gather_mm's rows are the nodes, each with its type. gather_case()'s tensors on the
// three source nodes of a 2×3 graph (its edges are not read): the same products, per node.
Case typed_linear_case() {
  Case c = gather_case();
  set_target(c, find_target("typed_linear"));
  c.graph = std::make_shared<const Graph>(Graph::from_edges(2, 3, std::vector<index_t>{0, 1}, std::vector<index_t>{2, 0}));
  c.attributes = {{"node_types", std::int64_t{3}}, {"in_features", std::int64_t{2}}, {"out_features", std::int64_t{2}}};
  c.inputs["node_type"] = c.inputs.at("edge_type");
  c.inputs.erase("edge_type");
  return c;
}

TEST(TypedLinear, AppliesEachNodesTypeAndLeavesAnEmptyTypesGradientZero) {
  const Result r = evaluate(typed_linear_case());
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_THAT(r.outputs.at("y").values(), ElementsAre(1, 2, 1, 0, 5, 8));
  EXPECT_THAT(r.gradients.at("x").values(), ElementsAre(1, 3, 1, 0, 3, 7));
  EXPECT_THAT(r.gradients.at("weight").values(), ElementsAre(3, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1));
  EXPECT_EQ(r.gradients.count("node_type"), 0u);  // an index tensor has no gradient
}

TEST(TypedLinear, HasOneRowPerSourceNodeAndRefusesATypeOutOfRange) {
  Case c = typed_linear_case();
  c.inputs["node_type"] = Tensor({3}, {0, 3, 0});
  const Result r = evaluate(c);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, HasSubstr("input 'node_type': element 1 is 3; an index tensor holds integers in [0, 3) "
                                   "(node_types = 3)"));
  const auto g = std::make_shared<const Graph>(Graph::from_edges(2, 5, std::vector<index_t>{0}, std::vector<index_t>{4}));
  const Case drawn = make_random_case(find_target("typed_linear"), g, {{"node_types", std::int64_t{2}}}, 3);
  EXPECT_EQ(drawn.inputs.at("x").rows(), 5);
  EXPECT_EQ(drawn.inputs.at("node_type").size(), 5);
  EXPECT_EQ(&entry_of(drawn), &find_target("typed_linear"));
}

// gather_mm's and typed_linear's own variants, on the same tensors.
TEST(GatherMm, WrongVariantsMoveARelationsGradientAndSkipTheTranspose) {
  for (const Case& c : {gather_case(), typed_linear_case()}) {
    SCOPED_TRACE(c.target);
    std::map<std::string, Result> answers;
    for (const auto& v : entry_of(c).wrong_variants)
      if (auto r = v.evaluate(c, {})) answers.emplace(v.name, std::move(*r));
    ASSERT_TRUE(answers.count("weight_gradient_to_next_relation"));
    EXPECT_THAT(answers.at("weight_gradient_to_next_relation").gradients.at("weight").values(),
                ElementsAre(0, 0, 0, 1, 3, 2, 1, 1, 0, 0, 0, 0));
    ASSERT_TRUE(answers.count("weight_not_transposed_in_backward"));
    // [1 0]·[1 2; 3 4] = [1 2]; [0 1]·[0 1; 1 0] = [1 0]; [1 1]·[1 2; 3 4] = [4 6].
    EXPECT_THAT(answers.at("weight_not_transposed_in_backward").gradients.at("x").values(),
                ElementsAre(1, 2, 1, 0, 4, 6));
    // Types 0, 2, 0 sorted stably: rows 0, 2, 1, and y left in that order.
    ASSERT_TRUE(answers.count("rows_left_sorted_by_type"));
    EXPECT_THAT(answers.at("rows_left_sorted_by_type").outputs.at("y").values(), ElementsAre(1, 2, 5, 8, 1, 0));
  }
}

// Index tensors are choices, not values: the random case draws integers in range and the value
// transforms keep them.
TEST(GatherMm, RandomCasesDrawIndexTensorsAsIntegersInRange) {
  const auto g = std::make_shared<const Graph>(Graph::from_edges(3, 3, std::vector<index_t>{0, 0, 1, 2, 2, 2},
                                                                 std::vector<index_t>{0, 1, 2, 0, 1, 2}));
  Case c = make_random_case(find_target("gather_mm"), g, {{"relations", std::int64_t{4}}}, 7);
  round_to_small_integers(c);
  for (double t : c.inputs.at("edge_type").values()) {
    EXPECT_GE(t, 0);
    EXPECT_LT(t, 4);
    EXPECT_EQ(t, static_cast<double>(static_cast<int>(t)));
  }
  EXPECT_TRUE(evaluate(c).ok());
}

// Two nodes; edges 0<-1 twice (relation 0), 0<-0 and 1<-0 (relation 1). W_0 = 2, W_1 = 3, root 5,
// bias 1, x = [1, 4].
//   mean: y0 = mean(4, 4)·2 + 1·3 + 1·5 + 1 = 17;  y1 = 1·3 + 4·5 + 1 = 24;  sum: y0 = 8·2 + 3 + 5 + 1 = 25.
// grad_y = [1, 2]: grad_x0 = 1·3 + 2·3 + 1·5 = 14; grad_x1 = 2·(1·2/2) + 2·5 = 12; grad_W = [4·1, 1·1 + 1·2] = [4, 3];
// grad_root = 1·1 + 4·2 = 9; grad_bias = 3. With one basis b = 1 and comp = [2, 3] (the same W): grad_basis =
// 2·4 + 3·3 = 17, grad_comp = [4, 3].
struct RgcnHand {
  Graph g = Graph::from_edges(2, 2, std::vector<index_t>{0, 0, 0, 1}, std::vector<index_t>{1, 1, 0, 0});
  Tensor x{{2, 1}, {1, 4}};
  Tensor types{{4}, {0, 0, 1, 1}};
  layers::RgcnParameters<double> p{Tensor({2, 1, 1}, {2, 3}), {}, Tensor({1, 1}, {5}), Tensor({1}, {1})};
  layers::RgcnConfig cfg{.in_features = 1, .out_features = 1, .relations = 2};
};

TEST(Rgcn, AveragesEachRelationApartAndAddsTheRootAndBias) {
  RgcnHand h;
  EXPECT_THAT(layers::rgcn_forward(h.g, h.cfg, h.x, h.types, h.p).values(), ElementsAre(17, 24));
  h.cfg.aggregation = layers::RgcnAggregation::sum;
  EXPECT_THAT(layers::rgcn_forward(h.g, h.cfg, h.x, h.types, h.p).values(), ElementsAre(25, 24));
}

TEST(Rgcn, BackwardByHand) {
  RgcnHand h;
  const auto grads = layers::rgcn_backward(h.g, h.cfg, h.x, h.types, h.p, Tensor({2, 1}, {1, 2}));
  EXPECT_THAT(grads.grad_x.values(), ElementsAre(14, 12));
  EXPECT_THAT(grads.grad.weight.values(), ElementsAre(4, 3));
  EXPECT_THAT(grads.grad.root.values(), ElementsAre(9));
  EXPECT_THAT(grads.grad.bias.values(), ElementsAre(3));
}

TEST(Rgcn, BasisDecompositionGivesTheSameLayerAndSplitsItsGradient) {
  RgcnHand h;
  h.cfg.bases = 1;
  h.p.weight = Tensor({1, 1, 1}, {1});
  h.p.comp = Tensor({2, 1}, {2, 3});
  EXPECT_THAT(layers::rgcn_forward(h.g, h.cfg, h.x, h.types, h.p).values(), ElementsAre(17, 24));
  const auto grads = layers::rgcn_backward(h.g, h.cfg, h.x, h.types, h.p, Tensor({2, 1}, {1, 2}));
  EXPECT_THAT(grads.grad.weight.values(), ElementsAre(17));
  EXPECT_THAT(grads.grad.comp.values(), ElementsAre(4, 3));
  EXPECT_THAT(grads.grad_x.values(), ElementsAre(14, 12));
}

TEST(Rgcn, RefusesAnEdgeRelationOutOfRangeAndWrongShapes) {
  RgcnHand h;
  EXPECT_THAT(input_error_of([&] { layers::rgcn_forward(h.g, h.cfg, h.x, Tensor({4}, {0, 0, 2, 1}), h.p); }),
              HasSubstr("rgcn: edge 2 has relation 2; relations are integers in [0, 2)"));
  EXPECT_THAT(input_error_of([&] { layers::rgcn_forward(h.g, h.cfg, h.x, Tensor({3}, {0, 0, 1}), h.p); }),
              HasSubstr("rgcn: edge_type (one relation per edge)"));
  h.cfg.bases = 1;
  EXPECT_THAT(input_error_of([&] { layers::rgcn_forward(h.g, h.cfg, h.x, h.types, h.p); }), HasSubstr("rgcn: weight"));
}

// RGAT with one head of one channel: edges e0 = 0<-1 (relation 0), e1 = 0<-0 (relation 1), e2 = 1<-0
// (relation 0); x = [1, 3], W_0 = 1, W_1 = 2, q = k = 1, bias 1.
//   out_i = [1, 2, 3], out_j = [3, 2, 1], z = out_i + out_j = [4, 4, 4] (LeakyReLU: itself).
//   Across relations row 0's two edges share one softmax: alpha = [1/2, 1/2, 1]; y = [2.5 + 1, 1 + 1].
//   Within each relation every edge of row 0 is alone: alpha = [1, 1, 1]; y = [3 + 2 + 1, 2].
// grad_y = [1, 1]: grad_alpha = out_j = [3, 2, 1]; the softmax backward gives grad_z = [1/4, −1/4, 0];
//   grad_q = Σ out_i·grad_z = −1/4, grad_k = Σ out_j·grad_z = 1/4; grad_out_i = grad_z·q = [1/4, −1/4, 0],
//   grad_out_j = alpha + grad_z·k = [3/4, 1/4, 1];
//   grad_W_0 = (x0·1/4 + x1·3/4) + (x1·0 + x0·1) = 3.5, grad_W_1 = x0·(−1/4) + x0·1/4 = 0;
//   grad_x0 = 1/4·W_0 + (−1/4 + 1/4)·W_1 + 1·W_0 = 1.25, grad_x1 = 3/4·W_0 = 0.75; grad_bias = 2.
struct RgatHand {
  Graph g = Graph::from_edges(2, 2, std::vector<index_t>{0, 0, 1}, std::vector<index_t>{1, 0, 0});
  Tensor x{{2, 1}, {1, 3}};
  Tensor types{{3}, {0, 1, 0}};
  layers::RgatParameters<double> p{Tensor({2, 1, 1}, {1, 2}), Tensor({1, 1}, {1}), Tensor({1, 1}, {1}),
                                   Tensor({1}, {1})};
  layers::RgatConfig cfg = [] {
    layers::RgatConfig c;
    c.in_features = c.out_features = c.heads = 1;
    c.relations = 2;
    return c;
  }();
};

TEST(Rgat, NormalizesTheAttentionAcrossRelations) {
  RgatHand h;
  EXPECT_THAT(layers::rgat_forward(h.g, h.cfg, h.x, h.types, h.p).values(), ElementsAre(3.5, 2));
  h.cfg.softmax = layers::RgatSoftmax::within_relation;
  EXPECT_THAT(layers::rgat_forward(h.g, h.cfg, h.x, h.types, h.p).values(), ElementsAre(6, 2));
}

TEST(Rgat, BackwardByHand) {
  RgatHand h;
  const auto grads = layers::rgat_backward(h.g, h.cfg, h.x, h.types, h.p, Tensor({2, 1}, {1, 1}));
  EXPECT_THAT(grads.y.values(), ElementsAre(3.5, 2));
  EXPECT_THAT(grads.alpha.values(), ElementsAre(0.5, 0.5, 1));
  EXPECT_THAT(grads.grad.q.values(), ElementsAre(-0.25));
  EXPECT_THAT(grads.grad.k.values(), ElementsAre(0.25));
  EXPECT_THAT(grads.grad.weight.values(), ElementsAre(3.5, 0));
  EXPECT_THAT(grads.grad_x.values(), ElementsAre(1.25, 0.75));
  EXPECT_THAT(grads.grad.bias.values(), ElementsAre(2));
}

Case rgat_case() {
  const RgatHand h;
  Case c;
  c.target = "rgat";
  c.graph = std::make_shared<const Graph>(h.g);
  c.attributes = {{"relations", std::int64_t{2}}, {"in_features", std::int64_t{1}}, {"out_features", std::int64_t{1}},
                  {"heads", std::int64_t{1}}};
  c.inputs["x"] = h.x;
  c.inputs["edge_type"] = h.types;
  c.parameters["weight"] = h.p.weight;
  c.parameters["q"] = h.p.q;
  c.parameters["k"] = h.p.k;
  c.parameters["bias"] = h.p.bias;
  c.grad_outputs["y"] = Tensor({2, 1}, {1, 1});
  return c;
}

TEST(Rgat, WrongVariantsNormalizeWithinRelationsAndMoveARelationsGradient) {
  const Case c = rgat_case();
  ASSERT_TRUE(evaluate(c).ok());
  std::map<std::string, Result> answers;
  for (const auto& v : find_target("rgat").wrong_variants)
    if (auto r = v.evaluate(c, {})) answers.emplace(v.name, std::move(*r));
  ASSERT_TRUE(answers.count("softmax_within_relation"));
  EXPECT_THAT(answers.at("softmax_within_relation").outputs.at("y").values(), ElementsAre(6, 2));
  ASSERT_TRUE(answers.count("weight_gradient_to_next_relation"));
  EXPECT_THAT(answers.at("weight_gradient_to_next_relation").gradients.at("weight").values(), ElementsAre(0, 3.5));
  ASSERT_TRUE(answers.count("zero_gradient_q"));
  ASSERT_TRUE(answers.count("zero_gradient_k"));
  // One relation per row: the two softmaxes are the same, so the variant does not apply.
  Case one_type = c;
  one_type.inputs["edge_type"] = Tensor({3}, {0, 0, 0});
  for (const auto& v : find_target("rgat").wrong_variants)
    if (v.name == "softmax_within_relation") { EXPECT_FALSE(v.evaluate(one_type, {}).has_value()); }
}

TEST(Rgat, RefusesAnEdgeRelationOutOfRangeAndWrongShapes) {
  RgatHand h;
  EXPECT_THAT(input_error_of([&] { layers::rgat_forward(h.g, h.cfg, h.x, Tensor({3}, {0, 2, 0}), h.p); }),
              HasSubstr("rgat: edge 1 has relation 2; relations are integers in [0, 2)"));
  h.cfg.heads = 2;
  EXPECT_THAT(input_error_of([&] { layers::rgat_forward(h.g, h.cfg, h.x, h.types, h.p); }), HasSubstr("rgat: weight"));
}

// The listing shows rgcn's default layout (bases = 0: a weight per relation), and comp, which only
// bases ≥ 1 has, as it has it; the probe asks the shape functions, never rgcn's name.
TEST(Rgcn, TheListingShowsTheDefaultLayoutAndCompAsBasesHaveIt) {
  std::map<std::string, std::string> shapes;
  for (const auto& t : list_tensors(find_target("rgcn"))) shapes[t.name] = t.shape;
  EXPECT_EQ(shapes["weight"], "[relations, in_features, out_features]");
  EXPECT_EQ(shapes["comp"], "[relations, bases]");
  EXPECT_EQ(shapes["root"], "[in_features, out_features]");
}

}  // namespace
}  // namespace gnncheck::oracle
